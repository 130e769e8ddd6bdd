import { createHash } from 'node:crypto';
import {
  FloodGuard,
  UPLOAD_URL_RULE,
  URL_FETCH_RULE,
  URL_FETCHES_AT_ONCE_RULE,
  URL_MEGABYTE_RULE,
  windowBounds,
} from '../../../functions/core/flood';
import { StagedUploads, UPLOAD_URL_SECONDS } from '../../../functions/core/upload/staged-uploads';
import { NSFW_OFF, UploadGate, type NsfwRule } from '../../../functions/core/moderation/moderation';
import { IdCodecs } from '../../../functions/core/image/id-codec';
import { ServiceError } from '../../../functions/core/errors';
import { METRIC, type Metrics } from '../../../functions/core/metrics';
import type {
  EncodedImage,
  ImageProcessor,
  ImagingRun,
  NsfwScore,
  ProcessedImage,
  ProcessOptions,
  StoredOriginal,
} from '../../../functions/core/ports';
import type { UploadRequest } from '../../../functions/core/upload/upload-request';
import { UploadService, type UploadRules } from '../../../functions/core/upload/upload-service';
import { awaitedLater, deferred } from '../../../functions/core/settle';
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
const md5 = (bytes: Uint8Array): string => createHash('md5').update(bytes).digest('hex');
const CLIENT = '203.0.113.5';
/** All an upload that failed leaves: its name claim, settled (names are never given out again). */
const GIVEN_BACK = { records: 0, files: 0, claims: 1, pendingClaims: 0, duplicateClaims: 0, slots: 0 };
/** An upload refused after its imaging began leaves the same, but keeps its flood slot (`docs/rules.md`). */
const REFUSED_AFTER_IMAGING = { ...GIVEN_BACK, slots: 1 };
/** What an upload stored leaves: its record, three files, its claims (the name's pending for the sweep), its slot. */
const STORED = { records: 1, files: 3, claims: 1, pendingClaims: 1, duplicateClaims: 1, slots: 1 };

const encoded = (width: number, bytes: Uint8Array = Buffer.alloc(width, width)): EncodedImage => ({
  bytes,
  width,
  height: width,
  mime: 'image/png',
  extension: 'png',
  bits: 8,
  channels: 3,
});

/** Waits until a condition holds, turning the event loop; fails after a second (the behaviour did not happen). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 1000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * The imaging as the service sees it (`ImageProcessor.start`): by default the decode is under way at once and the
 * run ends at once, the original being the bytes as sent. A test holds a phase back, or makes it fail, by what it sets.
 */
class StubProcessor implements ImageProcessor {
  /** When the decode is under way (default: at once). */
  decoding: Promise<void> = Promise.resolve();
  /** When the run ends, after the decode (default: at once). */
  ending: Promise<void> = Promise.resolve();
  /** Stored as something other than the bytes sent (metadata removed, converted): these bytes then. */
  storedAs: Uint8Array | undefined;
  /** The run's failure, after the decode is under way. */
  failing: Error | undefined;
  /** The classifier's verdict, when there is one: none by default. */
  nsfwScoring: Promise<NsfwScore> | undefined;
  readonly inputs: Uint8Array[] = [];
  /** Whether each run was told its picture is compared with blocked ones. */
  readonly compared: Array<Promise<boolean> | undefined> = [];

  constructor(private readonly log: CallLog) {}

  storedExtension(): string {
    return 'png';
  }

  start(input: Uint8Array, options: ProcessOptions): ImagingRun {
    this.log.record('processor.start');
    this.inputs.push(input);
    this.compared.push(options.compared);
    const original: Promise<StoredOriginal> = this.decoding.then(() => {
      this.log.record('-- decoding --');
      if (this.failing) throw this.failing;
      return { image: encoded(40, this.storedAs ?? input), asSent: this.storedAs === undefined };
    });
    const processed = original.then(async ({ image }): Promise<ProcessedImage> => {
      await this.ending;
      this.log.record('-- imaging done --');
      return {
        original: image,
        thumb: encoded(10),
        medium: encoded(20),
        exif: null,
        animated: false,
        nsfwScoring: this.nsfwScoring,
      };
    });
    return {
      decoding: awaitedLater(this.decoding),
      original: awaitedLater(original),
      processed: awaitedLater(processed),
    };
  }
}

/** Faults the stores meet, set in the builder: each as a store call that fails, or whose answer is lost. */
interface Faults {
  /** Puts of keys containing this fail (after storing the file when `putAnswerLost`). */
  putFails?: string;
  putAnswerLost?: boolean;
  existFails?: boolean;
  saveAnswerLost?: boolean;
  removeFails?: boolean;
}

/** The one builder of the service under test, over in-memory stores that speak the ports' contracts. */
function serviceUnderTest(given: { rules?: Partial<UploadRules>; floodLimits?: string; nsfw?: NsfwRule; faults?: Faults } = {}) {
  const floodLimits = given.floodLimits ?? '{"minute":50,"hour":0,"day":0,"week":0,"month":0}';
  const faults = given.faults ?? {};
  const log = new CallLog();
  const clock = new FakeClock();
  const images = new (class extends InMemoryImageRepository {
    override async saveActive(record: Parameters<InMemoryImageRepository['saveActive']>[0]): Promise<boolean> {
      const saved = await super.saveActive(record);
      if (faults.saveAnswerLost) throw new Error('injected: the answer of the record was lost');
      return saved;
    }
    override async remove(id: number): Promise<boolean> {
      if (faults.removeFails) throw new Error('injected: the table is down');
      return super.remove(id);
    }
  })(log);
  const objects = new (class extends InMemoryObjectStore {
    override async put(object: Parameters<InMemoryObjectStore['put']>[0]): Promise<void> {
      if (faults.putFails === undefined || !object.key.includes(faults.putFails)) return super.put(object);
      if (faults.putAnswerLost) await super.put(object);
      throw new Error(`injected: the put of ${object.key} failed`);
    }
    override async exist(keys: readonly string[]): Promise<boolean> {
      if (faults.existFails) throw new Error('injected: the object store is down');
      return super.exist(keys);
    }
  })(log);
  const duplicates = new InMemoryDuplicateIndex(log);
  const counters = new InMemoryCounterStore();
  const processor = new StubProcessor(log);
  const settings = new InMemorySettings({ apiKey: 'k', floodLimits });
  const draws: number[] = [];
  let hex = 0;
  const random = {
    hex: (chars: number) => (hex += 1).toString(16).padStart(chars, '0'),
    safeInteger: () => draws.shift() ?? 1_000_000 + hex,
  };
  const staged = new InMemoryStagedStore();
  const moderation = new InMemoryModeration();
  const measured: Array<{ name: string; value: number }> = [];
  const metrics: Metrics = { add: (name, _unit, value) => measured.push({ name, value }), flush: () => undefined };
  const limits = async () =>
    JSON.parse(floodLimits) as { minute: number; hour: number; day: number; week: number; month: number };
  const logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const pictures = new InMemoryPictureBlocks();
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
      ...given.rules,
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
    gate: new UploadGate(moderation, moderation, pictures, clock, 0, given.nsfw ?? NSFW_OFF),
    staged: new StagedUploads({
      settings,
      staged,
      ledger: new InMemoryTokenLedger(),
      issuance: new FloodGuard(counters, limits, UPLOAD_URL_RULE),
      random,
      clock,
      logger,
      maxStagedBytes: 5_000_000,
    }),
    codecs: new IdCodecs(() => settings.idSalt(), 999),
    clock,
    random,
    logger,
    metrics,
  });
  const upload = (fields: Partial<UploadRequest> = {}) =>
    service.upload({
      key: 'k',
      source: { kind: 'file', bytes: PNG, filename: 'cat.png', truncated: false },
      imgbb: false,
      format: 'json',
      title: undefined,
      description: undefined,
      nsfw: undefined,
      expiration: undefined,
      width: undefined,
      clientIp: CLIENT,
      ...fields,
    });
  /** Another picture's bytes (another duplicate fingerprint). */
  const other = (n: number) => ({
    source: { kind: 'file' as const, bytes: Buffer.concat([PNG, Buffer.from([n])]), filename: `c${n}.png`, truncated: false },
  });
  /** What the stores keep of the uploads: records, files, name claims (and those still pending), duplicate claims, slots. */
  const kept = () => ({
    records: images.records.size,
    files: objects.objects.size,
    claims: images.claims.size,
    pendingClaims: [...images.claims.values()].filter((claim) => claim.pending !== undefined).length,
    duplicateClaims: duplicates.entries.size,
    slots: counters.count('uploads', CLIENT, 'minute'),
  });
  const records = () => [...images.records.values()];
  return {
    log,
    images,
    duplicates,
    objects,
    counters,
    processor,
    upload,
    other,
    kept,
    records,
    draws,
    service,
    staged,
    clock,
    settings,
    measured,
    pictures,
  };
}

describe('UploadService: what an upload stores and answers', () => {
  it('stores the record and the three files, answers the image, and leaves its name claim pending for the sweep', async () => {
    const { upload, kept, records, images, duplicates } = serviceUnderTest();
    const image = await upload();
    expect(image.url).toMatch(/^https:\/\/img\.example\/images\/2026\/11\/23\/cat\.png$/);
    expect(kept()).toEqual(STORED);
    const [record] = records();
    expect(record).toMatchObject({ status: 'active', sourceMd5: md5(PNG), original: { md5: md5(PNG) } });
    expect(await images.findPending('images/2026/11/23/cat.png')).toMatchObject({ imageId: record?.id });
    expect([...duplicates.entries.keys()]).toEqual([`${CLIENT} ${md5(PNG)} -`]);
  });

  it('keeps the md5 of the bytes sent as the fingerprint, and of the bytes stored as the original', async () => {
    const { upload, processor, records, objects } = serviceUnderTest();
    processor.storedAs = Buffer.from('the same picture, its metadata removed');
    await upload();
    const [record] = records();
    expect(record?.sourceMd5).toBe(md5(PNG));
    expect(record?.original.md5).toBe(md5(processor.storedAs));
    // the put carries the stored bytes' md5, which S3 checks
    expect(objects.objects.get(record?.original.key ?? '')?.md5).toBe(md5(processor.storedAs));
  });

  it('writes the record without waiting for the files: the renditions here are put only once it is written', async () => {
    const { upload, images, objects, kept } = serviceUnderTest();
    const recordWritten = deferred<void>();
    const save = images.saveActive.bind(images);
    images.saveActive = async (record) => {
      const saved = await save(record);
      recordWritten.resolve();
      return saved;
    };
    const put = objects.put.bind(objects);
    objects.put = async (object) => {
      if (!object.key.endsWith('/cat.png')) await recordWritten.promise;
      return put(object);
    };
    // an upload that waited for the puts before writing the record would never end
    await upload();
    expect(kept()).toEqual(STORED);
  });

  it('claims the name and the fingerprint, and puts the original, while the pixels are still being made', async () => {
    const { upload, processor, kept, objects } = serviceUnderTest();
    const end = deferred<void>();
    processor.ending = end.promise;
    const answer = upload();
    // an upload that claimed or put only after the imaging would never get here
    await until(() => kept().claims === 1 && kept().duplicateClaims === 1 && objects.objects.size === 1, 'claims and put');
    expect(kept().records).toBe(0);
    end.resolve();
    await answer;
    expect(kept()).toEqual(STORED);
  });

  it('claims nothing before the decode is under way', async () => {
    const { upload, processor, log } = serviceUnderTest();
    processor.decoding = new Promise((resolve) => setTimeout(resolve, 20));
    await upload();
    expect(log.calls.slice(0, log.calls.indexOf('-- decoding --'))).toEqual(['processor.start']);
  });

  it('tells the imaging whether its picture is compared: only once some picture is blocked', async () => {
    const { upload, other, processor, pictures } = serviceUnderTest();
    await upload();
    await pictures.block(['5a'.repeat(32)]);
    await upload(other(1));
    expect(await Promise.all(processor.compared.map((compared) => compared ?? Promise.resolve(undefined)))).toEqual([
      false,
      true,
    ]);
  });

  it('records how long the imaging and the classifier took', async () => {
    const { upload, processor, measured } = serviceUnderTest({ nsfw: { policy: 'flag', threshold: 0.6 } });
    processor.nsfwScoring = Promise.resolve({ score: 0.1, runMs: 37 });
    await upload();
    expect(measured.filter(({ name }) => name === METRIC.classifierTime)).toEqual([{ name: METRIC.classifierTime, value: 37 }]);
    expect(measured.filter(({ name }) => name === METRIC.imagingTime)).toHaveLength(1);
  });

  it("answers a duplicate and a refusal only once the classifier's time they started is counted", async () => {
    const { upload, other, processor, measured } = serviceUnderTest({
      nsfw: { policy: 'flag', threshold: 0.6 },
      floodLimits: '{"minute":2,"hour":0,"day":0,"week":0,"month":0}',
    });
    processor.nsfwScoring = Promise.resolve({ score: 0.1, runMs: 7 });
    await upload();
    const classifierRuns = () => measured.filter(({ name }) => name === METRIC.classifierTime).length;
    // the score comes in a few turns after the decode: an answer that did not wait for it misses its time
    const scoredLater = () => {
      processor.nsfwScoring = new Promise((resolve) => setTimeout(() => resolve({ score: 0.1, runMs: 7 }), 20));
    };
    scoredLater();
    await upload();
    expect(classifierRuns()).toBe(2);
    scoredLater();
    await expect(upload(other(1))).rejects.toMatchObject({ kind: 'Flooding' });
    expect(classifierRuns()).toBe(3);
  });
});

describe('UploadService: duplicates and ids', () => {
  it('answers a duplicate with the stored image and a delete link of its own, storing nothing, its slot kept', async () => {
    const { upload, kept, images, records } = serviceUnderTest();
    const first = await upload();
    const second = await upload();
    expect(second.id_encoded).toBe(first.id_encoded);
    expect(second.delete_url).not.toBe(first.delete_url);
    // the second name claim is settled at once (and stays taken); the first stays pending for the sweep
    expect(kept()).toEqual({ ...STORED, claims: 2, slots: 2 });
    const pending = [...images.claims.values()].filter((claim) => claim.pending !== undefined);
    expect(pending.map((claim) => claim.imageId)).toEqual([records()[0]?.id]);
  });

  it("keeps the first upload's sensitive mark: a duplicate neither sets nor clears it", async () => {
    const plain = serviceUnderTest();
    await plain.upload();
    expect((await plain.upload({ nsfw: '1' })).nsfw).toBe('0');
    expect(plain.records()[0]?.nsfw).toBe(false);
    const marked = serviceUnderTest();
    await marked.upload({ nsfw: '1' });
    expect((await marked.upload({ nsfw: '0' })).nsfw).toBe('1');
    expect(marked.records()).toHaveLength(1);
    expect(marked.records()[0]?.nsfw).toBe(true);
  });

  it('draws another id when the one drawn is taken, and points its duplicate claim at it', async () => {
    const { upload, other, draws, duplicates } = serviceUnderTest();
    draws.push(42);
    await upload();
    draws.push(42, 43);
    await upload(other(2));
    expect([...duplicates.entries.values()].map((entry) => entry.imageId).sort()).toEqual([42, 43]);
  });
});

describe('UploadService: the flood slot', () => {
  const oneAMinute = '{"minute":1,"hour":0,"day":0,"week":0,"month":0}';

  it('refuses past the limit, writing nothing and giving its claims back', async () => {
    const { upload, other, kept } = serviceUnderTest({ floodLimits: oneAMinute });
    await upload();
    await expect(upload(other(1))).rejects.toMatchObject({ kind: 'Flooding' });
    // the first upload's, and the second's name claim settled
    expect(kept()).toEqual({ ...STORED, claims: 2 });
  });

  it('puts no file before its slot is taken: a slot lost to another upload of the client leaves nothing', async () => {
    const { upload, images, objects, counters, clock, kept } = serviceUnderTest({ floodLimits: oneAMinute });
    let putBeforeSlot = -1;
    counters.beforeWrite = async () => {
      counters.beforeWrite = undefined;
      // the counters showed room; while this upload's write is on its way, the decode ends and the name is claimed...
      await until(() => images.claims.size > 0, 'the name claim');
      await new Promise((resolve) => setTimeout(resolve, 20));
      putBeforeSlot = objects.objects.size;
      // ...and another upload of the same client takes the last slot first
      const minute = { window: 'minute' as const, limit: 1, ...windowBounds('minute', clock.nowMs()) };
      expect(await counters.take({ rule: 'uploads', client: CLIENT }, [minute])).toEqual({ taken: true });
    };
    await expect(upload()).rejects.toMatchObject({ kind: 'Flooding' });
    expect(putBeforeSlot).toBe(0);
    expect(kept()).toEqual({ ...GIVEN_BACK, slots: 1 }); // the other upload's slot
  });
});

describe('UploadService: what a failure leaves', () => {
  it.each<[string, Faults, RegExp]>([
    ['no file can be written', { putFails: 'images/' }, /the put of .* failed/],
    ['a rendition cannot be written', { putFails: '.th.' }, /the put of .*\.th\.png failed/],
    [
      'a put failed and its file cannot be looked for',
      { putFails: '.th.', putAnswerLost: true, existFails: true },
      /\.th\.png failed/,
    ],
    ["the record's answer was lost (it is read, then taken back)", { saveAnswerLost: true }, /answer of the record was lost/],
  ])('gives everything back when %s', async (_case, faults, error) => {
    const { upload, kept } = serviceUnderTest({ faults });
    await expect(upload()).rejects.toThrow(error);
    expect(kept()).toEqual(GIVEN_BACK);
  });

  it('answers its image when a put answered as failed had stored its file all the same', async () => {
    const { upload, kept } = serviceUnderTest({ faults: { putFails: '.th.', putAnswerLost: true } });
    expect((await upload()).url).toMatch(/cat\.png$/);
    expect(kept()).toEqual(STORED);
  });

  it('leaves the name claim pending for the sweep when the record cannot be taken back', async () => {
    const { upload, kept, images, records } = serviceUnderTest({ faults: { putFails: '.md.', removeFails: true } });
    await expect(upload()).rejects.toThrow(/the put of .*\.md\.png failed/);
    // the sweep finds the claim past its grace, the record, and a file missing: it removes them (sweep tests)
    expect(kept()).toEqual({ ...GIVEN_BACK, records: 1, files: 2, pendingClaims: 1 });
    expect([...images.claims.values()][0]?.imageId).toBe(records()[0]?.id);
  });

  it('answers a decode that fails after its claims with its error, giving everything back', async () => {
    const { upload, processor, kept } = serviceUnderTest();
    processor.ending = Promise.reject(Object.assign(new Error('Image too large'), { kind: 'TooManyPixels' }));
    processor.ending.catch(() => undefined);
    await expect(upload()).rejects.toThrow('Image too large');
    expect(kept()).toEqual(GIVEN_BACK);
  });

  it('keeps the flood slot of an upload refused after its decode began, and gives back one refused by the probe', async () => {
    const late = serviceUnderTest();
    late.processor.ending = Promise.reject(new ServiceError('ImageTooLarge', 'Image too complex - not processed within 10 s'));
    late.processor.ending.catch(() => undefined);
    await expect(late.upload()).rejects.toThrow('Image too complex');
    expect(late.kept()).toEqual(REFUSED_AFTER_IMAGING);
    const early = serviceUnderTest();
    early.processor.decoding = Promise.reject(new ServiceError('UnsupportedFormat', 'Unavailable image format'));
    early.processor.decoding.catch(() => undefined);
    await expect(early.upload()).rejects.toThrow('Unavailable image format');
    expect(early.kept()).toEqual({ ...GIVEN_BACK, claims: 0 });
  });

  it('refuses what the probe refuses before the decode, claiming nothing', async () => {
    const { upload, processor, log, kept } = serviceUnderTest();
    processor.decoding = Promise.reject(
      Object.assign(new Error('Image too large - max 4 megapixels'), { kind: 'ImageTooLarge' }),
    );
    processor.decoding.catch(() => undefined);
    await expect(upload()).rejects.toThrow('Image too large - max 4 megapixels');
    expect(log.calls).toEqual(['processor.start']);
    expect(kept()).toEqual({ ...GIVEN_BACK, claims: 0 });
  });

  it('refuses bytes that are no image before it calls any store', async () => {
    const { upload, log, processor } = serviceUnderTest();
    processor.storedExtension = () => {
      throw new ServiceError('UnsupportedFormat', 'Unavailable image format');
    };
    await expect(upload()).rejects.toThrow('Unavailable image format');
    expect(log.calls).toEqual([]);
  });
});

describe('UploadService: the NSFW policy on the score of a stub classifier', () => {
  const withScore = (policy: NsfwRule['policy'], score: number | undefined) => {
    const context = serviceUnderTest({ nsfw: { policy, threshold: 0.6 } });
    context.processor.nsfwScoring = score === undefined ? undefined : Promise.resolve({ score, runMs: 5 });
    return context;
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
    const { upload, records } = withScore(policy, score);
    expect((await upload({ nsfw: given })).nsfw).toBe(expected);
    expect(records()[0]?.nsfw).toBe(expected === '1');
    // the score is kept on the record, to three places, whatever the policy made of it
    expect(records()[0]?.nsfwScore).toBe(score === undefined ? undefined : Math.round(score * 1000) / 1000);
  });

  it.each([0.6, 0.999])('under reject, refuses a score of %s as adult content and keeps nothing of it', async (score) => {
    const { upload, kept } = withScore('reject', score);
    await expect(upload()).rejects.toMatchObject({ kind: 'AdultContent', message: 'Adult content is not accepted here' });
    expect(kept()).toEqual(REFUSED_AFTER_IMAGING);
  });

  /** An upload whose classifier answers only when the test says so: its three files are put meanwhile, no record. */
  async function scoredLate(policy: NsfwRule['policy'], score: number) {
    const context = serviceUnderTest({ nsfw: { policy, threshold: 0.6 } });
    const verdict = deferred<NsfwScore>();
    context.processor.nsfwScoring = verdict.promise;
    const answer = context.upload();
    answer.catch(() => undefined);
    await until(() => context.objects.objects.size === 3, 'the three files put');
    expect(context.kept().records).toBe(0);
    verdict.resolve({ score, runMs: 5 });
    return { answer, kept: context.kept };
  }

  it('puts the renditions while the classifier runs, and writes the record once its score is in', async () => {
    const { answer, kept } = await scoredLate('flag', 0.9);
    expect((await answer).nsfw).toBe('1');
    expect(kept()).toEqual(STORED);
  });

  it('takes the renditions put meanwhile back when the score refuses the upload', async () => {
    const { answer, kept } = await scoredLate('reject', 0.7);
    await expect(answer).rejects.toMatchObject({ kind: 'AdultContent' });
    expect(kept()).toEqual(REFUSED_AFTER_IMAGING);
  });
});

describe('UploadService, two-step uploads', () => {
  /** Step 1, then the client's PUT of `bytes` (or nothing), then step 2 with the token. */
  async function twoStep(
    context: ReturnType<typeof serviceUnderTest>,
    bytes: Uint8Array | undefined,
    declared = bytes?.length ?? 10,
  ) {
    const ticket = await context.service.createUploadUrl({
      key: 'k',
      size: String(declared),
      filename: 'big.png',
      clientIp: CLIENT,
    });
    const id = context.staged.urls.at(-1)?.id ?? '';
    if (bytes) context.staged.put(id, bytes);
    return { ticket, id, upload: (key = 'k') => context.upload({ key, source: { kind: 'staged', token: ticket.token } }) };
  }

  it('answers an upload URL for the declared size, and stores the staged bytes under the file name given', async () => {
    const context = serviceUnderTest();
    const { ticket, id, upload } = await twoStep(context, PNG);
    expect(ticket).toMatchObject({ method: 'PUT', maxBytes: PNG.length, headers: { 'Content-Length': String(PNG.length) } });
    expect(ticket.expiresAtMs - context.clock.nowMs()).toBe(UPLOAD_URL_SECONDS * 1000);
    const image = await upload();
    expect(image.original_filename).toBe('big.png');
    expect(context.processor.inputs).toEqual([PNG]);
    expect(context.staged.objects.has(id)).toBe(false); // removed once stored
  });

  it('refuses a size over the staged limit (413) or no size, before anything is signed', async () => {
    const context = serviceUnderTest();
    const ask = (size: string | undefined) =>
      context.service.createUploadUrl({ key: 'k', size, filename: undefined, clientIp: CLIENT });
    await expect(ask('5000001')).rejects.toMatchObject({ kind: 'FileTooBig', message: 'File too big - max 5 MB' });
    await expect(ask(undefined)).rejects.toMatchObject({ kind: 'InvalidSize' });
    await expect(ask('-3')).rejects.toMatchObject({ kind: 'InvalidSize' });
    await expect(
      context.service.createUploadUrl({ key: 'nope', size: '10', filename: undefined, clientIp: '1.2.3.4' }),
    ).rejects.toMatchObject({ kind: 'InvalidKey' });
    expect(context.staged.urls).toEqual([]);
  });

  it('uses a token once, refuses it for another key, after its expiry, and when nothing or another size was staged', async () => {
    const context = serviceUnderTest();
    const first = await twoStep(context, PNG);
    await first.upload();
    await expect(first.upload()).rejects.toMatchObject({ kind: 'UploadTokenUsed' });
    const other = await twoStep(context, PNG);
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

    const nothing = await twoStep(serviceUnderTest(), undefined);
    await expect(nothing.upload()).rejects.toMatchObject({ kind: 'NothingStaged' });
    const mismatch = serviceUnderTest();
    const wrongSize = await twoStep(mismatch, PNG, PNG.length + 5);
    await expect(wrongSize.upload()).rejects.toMatchObject({ kind: 'StagedSizeMismatch' });
    expect(mismatch.staged.objects.has(wrongSize.id)).toBe(false);
  });

  it('lets a token be tried again when nothing was staged yet, or when a store failed', async () => {
    const context = serviceUnderTest();
    const early = await twoStep(context, undefined, PNG.length);
    await expect(early.upload()).rejects.toMatchObject({ kind: 'NothingStaged' });
    context.staged.put(early.id, PNG);
    await expect(early.upload()).resolves.toMatchObject({ original_filename: 'big.png' });

    const failing = serviceUnderTest();
    const later = await twoStep(failing, PNG);
    failing.objects.failing = true;
    await expect(later.upload()).rejects.toThrow(/object store is down/);
    expect(failing.staged.objects.has(later.id)).toBe(true); // kept for the retry
    failing.objects.failing = false;
    await expect(later.upload()).resolves.toMatchObject({ original_filename: 'big.png' });
  });

  it('a staged file that is no image: refused, and its bytes removed', async () => {
    const context = serviceUnderTest();
    context.processor.storedExtension = () => {
      throw new ServiceError('UnsupportedFormat', 'Unavailable image format');
    };
    const junk = await twoStep(context, Buffer.from('not an image at all'));
    await expect(junk.upload()).rejects.toMatchObject({ kind: 'UnsupportedFormat' });
    expect(context.staged.objects.size).toBe(0);
  });
});
