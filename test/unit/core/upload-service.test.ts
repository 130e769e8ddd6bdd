import { createHash } from 'node:crypto';
import {
  FloodGuard,
  UPLOAD_URL_RULE,
  URL_FETCH_RULE,
  URL_FETCHES_AT_ONCE_RULE,
  URL_MEGABYTE_RULE,
  windowBounds,
} from '../../../functions/core/flood';
import { StagedUploads, UPLOAD_URL_SECONDS } from '../../../functions/core/staged-uploads';
import { NSFW_OFF, UploadGate, type NsfwRule } from '../../../functions/core/moderation';
import { IdCodecs } from '../../../functions/core/id-codec';
import { ServiceError } from '../../../functions/core/errors';
import { NO_METRICS } from '../../../functions/core/metrics';
import type { EncodedImage, ImageProcessor, ProcessedImage, ProcessOptions } from '../../../functions/core/ports';
import type { UploadRequest } from '../../../functions/core/upload-request';
import { UploadService, type UploadRules } from '../../../functions/core/upload-service';
import { deferred } from '../../../functions/core/settle';
import {
  CallLog,
  FakeClock,
  InMemoryCounterStore,
  InMemoryDuplicateIndex,
  InMemoryImageRepository,
  InMemoryModeration,
  InMemoryPictureBlocks,
  InMemoryObjectStore,
  InMemorySettings,
  InMemoryStagedStore,
  InMemoryTokenLedger,
} from '../../support/in-memory';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');
/** All an upload that failed leaves: its name claim, settled (names are never given out again). */
const GIVEN_BACK = { records: 0, files: 0, claims: 1, pendingClaims: 0, duplicateClaims: 0, slots: 0 };

const encoded = (width: number): EncodedImage => ({
  bytes: Buffer.alloc(width),
  width,
  height: width,
  mime: 'image/png',
  extension: 'png',
  bits: 8,
  channels: 3,
});

/** A processor whose decode ends when the test says so, logging that moment. */
class ControlledProcessor implements ImageProcessor {
  private finish: (() => void) | undefined;
  failing: Error | undefined;
  /** The score a classifier gives the picture (a stub's: the NSFW policy's input), when it comes; none by default. */
  nsfwScoring: Promise<number> | undefined;
  /** The options of the last decode. */
  options: ProcessOptions | undefined;

  constructor(private readonly log: CallLog) {}

  storedExtension(): string {
    return 'png';
  }

  process(_input: Uint8Array, options: ProcessOptions): Promise<ProcessedImage> {
    this.log.record('processor.process');
    this.options = options;
    // its decode is under way at once
    options.onDecoding?.();
    return new Promise((resolve, reject) => {
      this.finish = () => {
        this.log.record('-- imaging done --');
        if (this.failing) reject(this.failing);
        else
          resolve({
            original: encoded(40),
            originalMd5: 'm'.repeat(32),
            thumb: encoded(10),
            medium: encoded(20),
            exif: null,
            animated: false,
            nsfwScoring: this.nsfwScoring,
          });
      };
    });
  }

  /** Ends the decode once every store call that can go alongside it is done. */
  async endWhenIdle(): Promise<void> {
    for (let tick = 0; tick < 50; tick += 1) await new Promise((resolve) => setImmediate(resolve));
    this.finish?.();
  }
}

function setup(
  rules: Partial<UploadRules> = {},
  floodLimits = '{"minute":50,"hour":0,"day":0,"week":0,"month":0}',
  nsfw: NsfwRule = NSFW_OFF,
) {
  const log = new CallLog();
  const clock = new FakeClock();
  const images = new InMemoryImageRepository(log);
  const duplicates = new InMemoryDuplicateIndex(log);
  const objects = new InMemoryObjectStore(log);
  const counters = new InMemoryCounterStore();
  const processor = new ControlledProcessor(log);
  const settings = new InMemorySettings({ apiKey: 'k', floodLimits });
  const draws: number[] = [];
  let hex = 0;
  const random = {
    hex: (chars: number) => (hex += 1).toString(16).padStart(chars, '0'),
    safeInteger: () => draws.shift() ?? 1_000_000 + hex,
  };
  const staged = new InMemoryStagedStore();
  const moderation = new InMemoryModeration();
  const ledger = new InMemoryTokenLedger();
  const limits = async () =>
    JSON.parse(floodLimits) as { minute: number; hour: number; day: number; week: number; month: number };
  const service = new UploadService({
    rules: {
      publicUrl: 'https://img.example',
      timeZone: 'UTC',
      maxUploadBytes: 1_000_000,
      maxUrlUploadBytes: 1_000_000,
      naming: 'original',
      forcedExpirationSeconds: undefined,
      duplicates: 'return-existing',
      idScheme: 'random',
      ...rules,
    },
    settings,
    images,
    objects,
    processor,
    fetcher: { fetch: async () => ({ bytes: PNG, filename: 'u.png' }) },
    flood: new FloodGuard(counters, limits),
    fetchFailures: new FloodGuard(counters, limits),
    urlFetches: new FloodGuard(counters, limits, URL_FETCH_RULE),
    urlMegabytes: new FloodGuard(counters, limits, URL_MEGABYTE_RULE),
    urlFetchesAtOnce: new FloodGuard(counters, limits, URL_FETCHES_AT_ONCE_RULE),
    duplicates,
    gate: new UploadGate(moderation, moderation, new InMemoryPictureBlocks(), clock, 0, nsfw),
    staged: new StagedUploads({
      settings,
      staged,
      ledger,
      issuance: new FloodGuard(counters, limits, UPLOAD_URL_RULE),
      random,
      clock,
      logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
      maxStagedBytes: 5_000_000,
    }),
    codecs: new IdCodecs(() => settings.idSalt(), 999),
    clock,
    random,
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    metrics: NO_METRICS,
  });
  const upload = async (fields: Partial<UploadRequest> = {}) => {
    const request: UploadRequest = {
      key: 'k',
      source: { kind: 'file', bytes: PNG, filename: 'cat.png', truncated: false },
      imgbb: false,
      format: 'json',
      title: undefined,
      description: undefined,
      nsfw: undefined,
      expiration: undefined,
      width: undefined,
      clientIp: '203.0.113.5',
      ...fields,
    };
    const answer = service.upload(request);
    answer.catch(() => undefined); // looked at by the caller
    await processor.endWhenIdle();
    return answer;
  };
  /** What the stores keep of the uploads: records, files, name claims (and those still pending), duplicate claims, slots. */
  const kept = () => ({
    records: images.records.size,
    files: objects.objects.size,
    claims: images.claims.size,
    pendingClaims: [...images.claims.values()].filter((claim) => claim.pending !== undefined).length,
    duplicateClaims: duplicates.entries.size,
    slots: counters.count('uploads', '203.0.113.5', 'minute'),
  });
  /**
   * Makes the put of every file whose key contains `marker` fail; `answerLost`: after storing the file (a timeout on
   * the answer).
   */
  const failPutsOf = (marker: string, answerLost = false): void => {
    const put = objects.put.bind(objects);
    objects.put = async (object) => {
      if (!object.key.includes(marker)) return put(object);
      if (answerLost) await put(object);
      throw new Error(`injected: the put of ${object.key} failed`);
    };
  };
  return {
    log,
    images,
    duplicates,
    objects,
    counters,
    processor,
    upload,
    kept,
    failPutsOf,
    draws,
    service,
    staged,
    ledger,
    clock,
    settings,
    moderation,
  };
}

describe('UploadService', () => {
  it('after the decode ends, waits only for the three files and the image record, written at once', async () => {
    const { log, upload, images, objects } = setup();
    // the puts end only once the record is written: an upload that waited for them before writing it never ends
    const put = objects.put.bind(objects);
    const recordWritten = new Promise<void>((resolve) => {
      const save = images.saveActive.bind(images);
      images.saveActive = async (record) => {
        const saved = await save(record);
        resolve();
        return saved;
      };
    });
    objects.put = async (object) => {
      if (!object.key.endsWith('/cat.png')) await recordWritten;
      return put(object);
    };
    const image = await upload();
    expect(image.url).toMatch(/\/images\/2026\/11\/23\/cat\.png$/);
    // the claims (the name's recording the upload as pending) went alongside the decode
    expect(log.calls.slice(0, log.calls.indexOf('-- imaging done --'))).toEqual(
      expect.arrayContaining(['duplicates.claim', 'images.claimName', 'processor.process']),
    );
    expect(log.after('-- imaging done --').sort()).toEqual(['images.saveActive', 'objects.put', 'objects.put', 'objects.put']);
    expect([...images.records.values()].map((record) => record.status)).toEqual(['active']);
    expect(objects.objects.size).toBe(3);
    // the claim stays pending for the sweep to settle, off the upload's path
    expect(await images.findPending('images/2026/11/23/cat.png')).toMatchObject({ imageId: [...images.records.keys()][0] });
  });

  it('hashes the bytes as uploaded once: the duplicate claim and the decode (for an original kept as sent) share it', async () => {
    const { upload, processor, duplicates } = setup();
    // the module object the service's code calls into (an `import * as` here would be a copy of it)
    const crypto = jest.requireActual<typeof import('node:crypto')>('node:crypto');
    const realCreateHash = crypto.createHash.bind(crypto);
    // what each md5 made was fed: the upload's bytes, or a rendition's (whose md5 goes with its put)
    const fed: Buffer[] = [];
    const hashing = jest.spyOn(crypto, 'createHash').mockImplementation((algorithm, options) => {
      const hash = realCreateHash(algorithm, options);
      if (algorithm !== 'md5') return hash;
      const update = hash.update.bind(hash);
      return Object.assign(hash, {
        update: (data: Buffer) => {
          fed.push(Buffer.from(data));
          return update(data);
        },
      });
    });
    try {
      await upload();
      const md5 = createHash('md5').update(PNG).digest('hex');
      expect(processor.options?.inputMd5?.()).toBe(md5);
      expect([...duplicates.entries.keys()]).toEqual([`203.0.113.5 ${md5} -`]);
      // the upload's bytes twice: the test's own md5 above, and the upload's one
      expect(fed.filter((data) => data.equals(PNG))).toHaveLength(2);
    } finally {
      hashing.mockRestore();
    }
  });

  it('writes nothing but the claims when the flood limit is reached, and gives the duplicate claim back', async () => {
    const { upload, images, duplicates, objects } = setup({}, '{"minute":1,"hour":0,"day":0,"week":0,"month":0}');
    await upload();
    const refused = upload({
      source: { kind: 'file', bytes: Buffer.concat([PNG, Buffer.from([1])]), filename: 'b.png', truncated: false },
    });
    await expect(refused).rejects.toMatchObject({ kind: 'Flooding' });
    expect(images.records.size).toBe(1);
    expect(objects.objects.size).toBe(3);
    expect(duplicates.entries.size).toBe(1);
  });

  it('puts the original once the counters show room, and removes it when the slot goes to another upload', async () => {
    const { upload, objects, counters, clock, kept } = setup({}, '{"minute":1,"hour":0,"day":0,"week":0,"month":0}');
    let putBeforeSlot = 0;
    counters.beforeWrite = async () => {
      counters.beforeWrite = undefined;
      // the decode ends and the original is put while the slot is not yet written...
      for (let tick = 0; tick < 200 && objects.objects.size === 0; tick += 1)
        await new Promise((resolve) => setImmediate(resolve));
      putBeforeSlot = objects.objects.size;
      // ...and another upload of the same client takes the last slot first
      const minute = { window: 'minute' as const, limit: 1, ...windowBounds('minute', clock.nowMs()) };
      expect(await counters.take({ rule: 'uploads', client: '203.0.113.5' }, [minute])).toEqual({ taken: true });
    };
    await expect(upload()).rejects.toMatchObject({ kind: 'Flooding' });
    expect(putBeforeSlot).toBeGreaterThan(0);
    expect(kept()).toEqual({ ...GIVEN_BACK, slots: 1 }); // the other upload's slot
  });

  it('answers a duplicate with the stored image and a delete link of its own, leaving no file and no pending claim, counted as an upload', async () => {
    const { upload, counters, images, objects } = setup();
    const first = await upload();
    const second = await upload();
    expect(second.id_encoded).toBe(first.id_encoded);
    expect(second.delete_url).not.toBe(first.delete_url);
    expect(images.records.size).toBe(1);
    expect(objects.objects.size).toBe(3);
    // the name claimed alongside the duplicate check is settled at once (and stays taken)
    const pending = [...images.claims.values()].filter((claim) => claim.pending !== undefined);
    expect(pending.map((claim) => claim.imageId)).toEqual([[...images.records.keys()][0]]);
    expect(images.claims.size).toBe(2);
    // the duplicate keeps its flood slot: otherwise a client could have the service decode without limit
    expect(counters.count('uploads', '203.0.113.5', 'minute')).toBe(2);
  });

  it('draws another id when the one drawn is taken, and points its duplicate claim at it', async () => {
    const { upload, draws, duplicates } = setup();
    draws.push(42);
    await upload();
    draws.push(42, 43);
    const second = await upload({
      source: { kind: 'file', bytes: Buffer.concat([PNG, Buffer.from([2])]), filename: 'c.png', truncated: false },
    });
    expect(second.id_encoded).not.toBe('');
    expect([...duplicates.entries.values()].map((entry) => entry.imageId).sort()).toEqual([42, 43]);
  });

  it('settles its name claim and gives back its slot and claim when the files cannot be written', async () => {
    const { upload, objects, kept } = setup();
    objects.failing = true;
    await expect(upload()).rejects.toThrow(/object store is down/);
    expect(kept()).toEqual(GIVEN_BACK);
  });

  it('takes back the record written alongside a rendition whose put fails, and everything else', async () => {
    const { upload, kept, failPutsOf } = setup();
    failPutsOf('.th.');
    await expect(upload()).rejects.toThrow(/the put of .*\.th\.png failed/);
    expect(kept()).toEqual(GIVEN_BACK);
  });

  it('answers its image when a put answered as failed had stored its file all the same (its answer lost)', async () => {
    const { upload, kept, failPutsOf, images } = setup();
    failPutsOf('.th.', true);
    const image = await upload();
    expect(image.url).toMatch(/\/images\/2026\/11\/23\/cat\.png$/);
    // as any stored upload: its record, three files, its duplicate claim and slot, its name claim pending for the sweep
    expect(kept()).toEqual({ records: 1, files: 3, claims: 1, pendingClaims: 1, duplicateClaims: 1, slots: 1 });
    expect([...images.records.values()].map((record) => record.status)).toEqual(['active']);
  });

  it('takes everything back when a put failed and its file cannot be looked for', async () => {
    const { upload, kept, failPutsOf, objects } = setup();
    failPutsOf('.th.', true);
    objects.exist = async () => {
      throw new Error('injected: the object store is down');
    };
    await expect(upload()).rejects.toThrow(/the put of .*\.th\.png failed/);
    expect(kept()).toEqual(GIVEN_BACK);
  });

  it('takes back a record written but answered as failed, once it reads it there', async () => {
    const { upload, images, kept } = setup();
    const save = images.saveActive.bind(images);
    images.saveActive = async (record) => {
      await save(record);
      throw new Error('injected: the answer of the record was lost');
    };
    await expect(upload()).rejects.toThrow(/the answer of the record was lost/);
    expect(kept()).toEqual(GIVEN_BACK);
  });

  it('leaves the name claim pending for the sweep when that record cannot be taken back', async () => {
    const { upload, images, kept, failPutsOf } = setup();
    failPutsOf('.md.');
    images.remove = async () => {
      throw new Error('injected: the table is down');
    };
    await expect(upload()).rejects.toThrow(/the put of .*\.md\.png failed/);
    // the sweep finds the claim past its grace, the record, and a file missing: it removes them (sweep tests)
    expect(kept()).toEqual({ ...GIVEN_BACK, records: 1, files: 2, pendingClaims: 1 });
    expect([...images.claims.values()][0]?.imageId).toBe([...images.records.keys()][0]);
  });

  it('answers a decode that fails after its claims with its error, giving everything back and writing no file', async () => {
    const { upload, processor, kept } = setup();
    processor.failing = Object.assign(new Error('Image too large'), { kind: 'TooManyPixels' });
    await expect(upload()).rejects.toThrow('Image too large');
    expect(kept()).toEqual(GIVEN_BACK);
  });

  it('claims nothing before the decode is under way (the md5 the claims need waits too)', async () => {
    const { upload, processor, log } = setup();
    const process = processor.process.bind(processor);
    // a probe that takes a few turns of the event loop before the decode is handed over
    processor.process = (input, options) =>
      process(input, {
        ...options,
        onDecoding: () => {
          void (async () => {
            for (let tick = 0; tick < 5; tick += 1) await new Promise((resolve) => setImmediate(resolve));
            log.record('-- decoding --');
            options.onDecoding?.();
          })();
        },
      });
    await upload();
    const before = log.calls.slice(0, log.calls.indexOf('-- decoding --'));
    expect(before).toEqual(['processor.process']);
  });

  it('refuses an image its probe refuses (before the decode) without claiming anything', async () => {
    const { upload, log, processor, kept } = setup();
    processor.process = (_input, _options) => {
      log.record('processor.process');
      return Promise.reject(Object.assign(new Error('Image too large - max 4 megapixels'), { kind: 'ImageTooLarge' }));
    };
    await expect(upload()).rejects.toThrow('Image too large - max 4 megapixels');
    // no claim, no put; the flood slot taken alongside the probe is given back, as for any refusal
    expect(log.calls).toEqual(['processor.process']);
    expect(kept()).toEqual({ ...GIVEN_BACK, claims: 0 });
  });

  it('refuses bytes that are no image before it claims anything', async () => {
    const { upload, log, processor } = setup();
    processor.storedExtension = () => {
      throw Object.assign(new Error('Unavailable image format'), { kind: 'UnsupportedFormat' });
    };
    await expect(upload()).rejects.toThrow('Unavailable image format');
    expect(log.calls).toEqual([]);
  });
});

describe('UploadService, the NSFW policy on the score of a stub classifier', () => {
  const upload = async (policy: NsfwRule['policy'], score: number | undefined, nsfw?: string) => {
    const context = setup({}, undefined, { policy, threshold: 0.6 });
    context.processor.nsfwScoring = score === undefined ? undefined : Promise.resolve(score);
    const answer = await context.upload({ nsfw });
    return { answer, record: [...context.images.records.values()][0], kept: context.kept };
  };

  it.each([
    ['flag', 0.6, undefined, '1'],
    ['flag', 0.95, undefined, '1'],
    ['flag', 0.59, undefined, '0'],
    ['flag', 0.1, '1', '1'],
    ['flag', 0.9, '0', '1'],
    ['reject', 0.59, undefined, '0'],
    ['reject', 0.2, '1', '1'],
    ['off', 0.99, undefined, '0'],
    ['flag', undefined, undefined, '0'],
  ] as const)('under %s, a score of %s with the client\'s nsfw %s answers nsfw "%s"', async (policy, score, given, expected) => {
    const { answer, record } = await upload(policy, score, given);
    expect(answer.nsfw).toBe(expected);
    expect(record?.nsfw).toBe(expected === '1');
    // the score is kept on the record, to three places, whatever the policy made of it
    expect(record?.nsfwScore).toBe(score === undefined ? undefined : Math.round(score * 1000) / 1000);
  });

  it.each([0.6, 0.999])('under reject, refuses a score of %s as adult content and keeps nothing of it', async (score) => {
    const context = setup({}, undefined, { policy: 'reject', threshold: 0.6 });
    context.processor.nsfwScoring = Promise.resolve(score);
    const refused = context.upload();
    await expect(refused).rejects.toMatchObject({ kind: 'AdultContent', message: 'Adult content is not accepted here' });
    expect(context.kept()).toEqual(GIVEN_BACK);
  });
});

describe('UploadService, the NSFW score coming after the renditions', () => {
  it('puts the renditions while the classifier runs, and writes the record once its score is in', async () => {
    const { upload, processor, log, objects, images } = setup({}, undefined, { policy: 'flag', threshold: 0.6 });
    const score = deferred<number>();
    processor.nsfwScoring = score.promise;
    const answer = upload();
    // the decode has ended, the score is not in: the three files are put, no record is written
    for (let tick = 0; tick < 50; tick += 1) await new Promise((resolve) => setImmediate(resolve));
    expect([...objects.objects.keys()].map((key) => key.replace(/^.*\//, '')).sort()).toEqual([
      'cat.md.png',
      'cat.png',
      'cat.th.png',
    ]);
    expect(images.records.size).toBe(0);
    log.record('-- score in --');
    score.resolve(0.9);
    expect((await answer).nsfw).toBe('1');
    const after = log.calls.slice(log.calls.indexOf('-- imaging done --'));
    expect(after.findIndex((call) => call.startsWith('images.saveActive'))).toBeGreaterThan(after.indexOf('-- score in --'));
  });

  it('takes the renditions put meanwhile back when the score refuses the upload', async () => {
    const context = setup({}, undefined, { policy: 'reject', threshold: 0.6 });
    const score = deferred<number>();
    context.processor.nsfwScoring = score.promise;
    const refused = context.upload();
    for (let tick = 0; tick < 50; tick += 1) await new Promise((resolve) => setImmediate(resolve));
    score.resolve(0.7);
    await expect(refused).rejects.toMatchObject({ kind: 'AdultContent' });
    expect(context.kept()).toEqual(GIVEN_BACK);
  });
});

describe('UploadService, two-step uploads', () => {
  /** Step 1, then the client's PUT of `bytes` (or nothing), then step 2 with the token. */
  async function twoStep(setupResult: ReturnType<typeof setup>, bytes: Uint8Array | undefined, declared = bytes?.length ?? 10) {
    const ticket = await setupResult.service.createUploadUrl({
      key: 'k',
      size: String(declared),
      filename: 'big.png',
      clientIp: '203.0.113.5',
    });
    const id = setupResult.staged.urls.at(-1)?.id ?? '';
    if (bytes) setupResult.staged.put(id, bytes);
    return { ticket, id, upload: (key = 'k') => setupResult.upload({ key, source: { kind: 'staged', token: ticket.token } }) };
  }

  it('answers an upload URL for the declared size, and stores the staged bytes under the file name given', async () => {
    const context = setup();
    const { ticket, id, upload } = await twoStep(context, PNG);
    expect(ticket).toMatchObject({ method: 'PUT', maxBytes: PNG.length, headers: { 'Content-Length': String(PNG.length) } });
    expect(ticket.expiresAtMs - context.clock.nowMs()).toBe(UPLOAD_URL_SECONDS * 1000);
    const image = await upload();
    expect(image.original_filename).toBe('big.png');
    expect(context.staged.objects.has(id)).toBe(false); // removed once stored
  });

  it('refuses a size over the staged limit (413) or no size, before anything is signed', async () => {
    const context = setup();
    const ask = (size: string | undefined) =>
      context.service.createUploadUrl({ key: 'k', size, filename: undefined, clientIp: '203.0.113.5' });
    await expect(ask('5000001')).rejects.toMatchObject({ kind: 'FileTooBig', message: 'File too big - max 5 MB' });
    await expect(ask(undefined)).rejects.toMatchObject({ kind: 'InvalidSize' });
    await expect(ask('-3')).rejects.toMatchObject({ kind: 'InvalidSize' });
    await expect(
      context.service.createUploadUrl({ key: 'nope', size: '10', filename: undefined, clientIp: '1.2.3.4' }),
    ).rejects.toMatchObject({ kind: 'InvalidKey' });
    expect(context.staged.urls).toEqual([]);
  });

  it('uses a token once, refuses it for another key, after its expiry, and when nothing or another size was staged', async () => {
    const context = setup();
    const first = await twoStep(context, PNG);
    await first.upload();
    await expect(first.upload()).rejects.toMatchObject({ kind: 'UploadTokenUsed' });
    const other = await twoStep(context, PNG);
    await context.service.createUploadUrl({ key: 'k', size: '10', filename: undefined, clientIp: '203.0.113.5' });
    await expect(other.upload('another key')).rejects.toMatchObject({ kind: 'InvalidKey' });
    // the key rotated between the two steps: the token was made for the old one
    context.settings.values.apiKey = 'k2';
    await expect(other.upload('k2')).rejects.toMatchObject({ kind: 'InvalidUploadToken' });
    context.settings.values.apiKey = 'k';
    await expect(context.upload({ source: { kind: 'staged', token: `${other.ticket.token}x` } })).rejects.toMatchObject({
      kind: 'InvalidUploadToken',
    });
    context.clock.advance(UPLOAD_URL_SECONDS * 1000);
    await expect(other.upload()).rejects.toMatchObject({ kind: 'UploadTokenExpired' });

    const nothing = await twoStep(setup(), undefined);
    await expect(nothing.upload()).rejects.toMatchObject({ kind: 'NothingStaged' });
    const mismatch = setup();
    const wrongSize = await twoStep(mismatch, PNG, PNG.length + 5);
    await expect(wrongSize.upload()).rejects.toMatchObject({ kind: 'StagedSizeMismatch' });
    expect(mismatch.staged.objects.has(wrongSize.id)).toBe(false);
  });

  it('lets a token be tried again when nothing was staged yet, or when a store failed', async () => {
    const context = setup();
    const early = await twoStep(context, undefined, PNG.length);
    await expect(early.upload()).rejects.toMatchObject({ kind: 'NothingStaged' });
    context.staged.put(early.id, PNG);
    await expect(early.upload()).resolves.toMatchObject({ original_filename: 'big.png' });

    const failing = setup();
    const later = await twoStep(failing, PNG);
    failing.objects.failing = true;
    await expect(later.upload()).rejects.toThrow(/object store is down/);
    expect(failing.staged.objects.has(later.id)).toBe(true); // kept for the retry
    failing.objects.failing = false;
    await expect(later.upload()).resolves.toMatchObject({ original_filename: 'big.png' });
  });

  it('a staged file that is no image: refused, and its bytes removed', async () => {
    const context = setup();
    context.processor.storedExtension = () => {
      throw Object.assign(new ServiceError('UnsupportedFormat', 'Unavailable image format'));
    };
    const junk = await twoStep(context, Buffer.from('not an image at all'));
    await expect(junk.upload()).rejects.toMatchObject({ kind: 'UnsupportedFormat' });
    expect(context.staged.objects.size).toBe(0);
  });
});
