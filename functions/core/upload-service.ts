import { deleteTokens } from './delete-tokens';
import { DuplicateGuard, type DuplicatePolicy, type HeldClaim } from './duplicate-guard';
import { UploadError } from './errors';
import type { FloodGuard, FloodReservation } from './flood';
import { formatDateFolder } from './formatting';
import { constantTimeEquals, md5Hex } from './hashes';
import type { IdCodecs } from './id-codec';
import { toImageObject, type ImageObject } from './image-object';
import { ImageWriter } from './image-writer';
import { METRIC, type Metrics } from './metrics';
import { NameClaimer } from './name-claimer';
import { baseNameOf, cleanOriginalFilename, titleFromFilename, type NamingMode } from './naming';
import type {
  Clock,
  DuplicateFingerprint,
  DuplicateIndex,
  EncodedImage,
  ImageKeys,
  ImageProcessor,
  ImageRecord,
  ImageRepository,
  Logger,
  ObjectStore,
  ProcessedImage,
  RandomSource,
  SettingsStore,
  SourceFetcher,
  StoredFile,
} from './ports';
import type { UploadRequest } from './upload-request';
import type { StagedUploads, UploadUrl, UploadUrlRequest } from './staged-uploads';
import type { UploadGate } from './moderation';
import { readUploadOptions, readUploadSource, type SourceBytes, type UploadOptions } from './upload-source';

export type { DuplicatePolicy } from './duplicate-guard';

/** The operator's rules that shape an upload. */
export interface UploadRules {
  /** Base of every URL in responses, without a trailing slash. */
  publicUrl: string;
  timeZone: string;
  maxUploadBytes: number;
  /** URL sources do not pass through the gateway and may be larger. */
  maxUrlUploadBytes: number;
  naming: NamingMode;
  /** Every guest upload expires after at most this many seconds. */
  forcedExpirationSeconds: number | undefined;
  duplicates: DuplicatePolicy;
  /** How ids are made: drawn at random (unguessable), or Chevereto's counter (for data migrated from it). */
  idScheme: IdScheme;
}

export type IdScheme = 'random' | 'sequential';

export interface UploadServiceDeps {
  rules: UploadRules;
  settings: SettingsStore;
  images: ImageRepository;
  objects: ObjectStore;
  processor: ImageProcessor;
  fetcher: SourceFetcher;
  flood: Pick<FloodGuard, 'reserve'>;
  /** URL sources that could not be fetched, per client. */
  fetchFailures: Pick<FloodGuard, 'reserve'>;
  duplicates: DuplicateIndex;
  /** The two-step upload's staging and tokens. */
  staged: StagedUploads;
  /** The operator's bans and blocks. */
  gate: UploadGate;
  codecs: IdCodecs;
  clock: Clock;
  random: RandomSource;
  logger: Logger;
  metrics: Metrics;
}

const NAME_SUFFIX_HEX_CHARS = 16;
/** Random ids drawn before giving up: a second draw is needed once in 2^53 / (images stored) uploads. */
const ID_ATTEMPTS = 3;

/** What an upload has claimed: the image's id, its name (recorded pending, naming its files), its fingerprint. */
interface Claims {
  id: number;
  name: string;
  keys: ImageKeys;
  originalFilename: string;
  fingerprint: DuplicateFingerprint;
}

/** What an upload holds in the stores until it ends: given back, or removed, if it fails. */
interface Holdings {
  reserving?: Promise<FloodReservation>;
  claim?: HeldClaim | undefined;
  /** The name claimed, recording the upload as pending. */
  pending?: { name: string; keys: ImageKeys };
  /** The original's put, started before the renditions: waited for before anything is cleaned up. */
  originalPut?: Promise<void>;
  /** The image's record, once written (alongside its files' puts), or once its write was tried (`saveUnknown`). */
  saved?: ImageRecord;
  /**
   * The record's write failed without saying whether DynamoDB carried it out (its answer lost after the SDK's
   * retries, a server error): a take-back reads it first, and removes it only if it is there and this upload's.
   */
  saveUnknown?: boolean;
}

/**
 * The upload operation (contract, sections 2 to 5, 11, 12), ordered so that an upload waits for as few store round
 * trips as it can. The key and the options are checked first (no store call: the key is cached). Then, while the
 * pixels decode: the flood slot (a URL source is fetched only once it is taken), the duplicate fingerprint and the
 * file name at once (the name's claim records the upload as pending, naming its three files), and the original's put
 * as soon as its bytes are known. Once the pixels are ready, only the renditions' puts and the image's record are left,
 * written at once: one round trip.
 */
export class UploadService {
  private readonly duplicateGuard: DuplicateGuard;
  private readonly names: NameClaimer;
  private readonly writer: ImageWriter;

  constructor(private readonly deps: UploadServiceDeps) {
    this.duplicateGuard = new DuplicateGuard({ ...deps, policy: deps.rules.duplicates });
    this.names = new NameClaimer(deps.images, deps.random, deps.rules.naming);
    this.writer = new ImageWriter(deps);
  }

  /** Runs one upload from the raw request to the Image object of the response. */
  async upload(request: UploadRequest): Promise<ImageObject> {
    const key = await this.authenticate(request.key);
    const options = readUploadOptions(request, this.deps.rules.forcedExpirationSeconds);
    const given = readUploadSource(request.source, this.deps.rules.maxUploadBytes);
    // a two-step upload's token is checked before anything is taken
    const ticket = 'token' in given ? await this.deps.staged.check(given.token, key) : undefined;
    const nowMs = this.deps.clock.nowMs();
    const held: Holdings = {};
    let failure: unknown;
    try {
      // a banned client's staged bytes go with the refusal (below), as any refused upload's
      await this.deps.gate.admit(request.clientIp);
      // 1. the flood slot; a URL is fetched (staged bytes read) only once it is taken, bytes in the request are
      //    decoded meanwhile. The counters read with room is enough to start the original's put (step 4): should the
      //    slot still go to another upload of the same client, the put is undone with the rest.
      const room = deferred<void>();
      held.reserving = this.deps.flood.reserve(request.clientIp, nowMs, () => room.resolve());
      held.reserving.then(() => room.resolve(), room.reject);
      room.promise.catch(() => undefined);
      const source =
        'url' in given
          ? await held.reserving.then(() => this.fetchSource(given.url, request.clientIp))
          : ticket
            ? await held.reserving.then(() => this.deps.staged.take(ticket))
            : (given as SourceBytes);
      // 2. the decode; the stored original's bytes come out of it as soon as they are known
      const extension = this.deps.processor.storedExtension(source.bytes);
      const original = deferred<EncodedImage>();
      // the md5 of the bytes as uploaded (the duplicate fingerprint), hashed once: also the stored original's when
      // nothing is removed from them
      let md5: string | undefined;
      const sourceMd5 = (): string => (md5 ??= md5Hex(source.bytes));
      const processing = this.process(source, options, original.resolve, sourceMd5);
      processing.catch(original.reject); // a decode that fails leaves no original to put
      original.promise.catch(() => undefined);
      try {
        // 3. the duplicate fingerprint and the name, claimed at once
        const claims = await this.claim(request.clientIp, source, sourceMd5(), extension, options, nowMs, held);
        if ('answer' in claims) {
          // nothing is stored: the slot goes back, and the decode already started is let finish unused
          await processing.catch(() => undefined);
          await (await held.reserving).release();
          this.deps.metrics.add(METRIC.uploadDuplicate, 'Count', 1);
          return claims.answer;
        }
        // 4. the original, put while the renditions are made
        const originalPut = Promise.all([original.promise, room.promise]).then(([bytes]) =>
          this.writer.putOriginal(claims.keys.original, bytes),
        );
        originalPut.catch(() => undefined);
        held.originalPut = originalPut;
        // 5. once the pixels are ready: the renditions and the image's record at once, one round trip. Until the
        //    puts end, the record names files not all there yet: a waiting duplicate looks for them, a failed put
        //    takes the record back (undo), and an upload that dies in between leaves its name claim pending, which the
        //    sweep finds with the record and a file missing, and removes.
        const processed = await processing;
        await held.reserving;
        const token = deleteTokens.make(this.deps.random);
        const record = this.recordOf(claims, options, processed, token.hash, nowMs, held.claim !== undefined);
        const [files, saved] = await Promise.allSettled([
          this.writer.finish(record, processed, originalPut),
          this.save(record, held),
        ]);
        held.saved = record;
        if (saved.status === 'rejected') held.saveUnknown = true;
        if (files.status === 'rejected') throw files.reason;
        if (saved.status === 'rejected') throw saved.reason;
        delete held.pending;
        this.deps.metrics.add(METRIC.uploadStored, 'Count', 1);
        this.deps.metrics.add(
          METRIC.bytesStored,
          'Bytes',
          processed.original.bytes.length + processed.thumb.bytes.length + processed.medium.bytes.length,
        );
        return this.imageObject(record, (await this.deps.codecs.codec()).encode(record.id), token.token);
      } catch (error) {
        await processing.catch(() => undefined);
        throw error;
      }
    } catch (error) {
      failure = error;
      await this.undo(held);
      throw error;
    } finally {
      if (ticket) await this.deps.staged.finish(ticket, failure);
    }
  }

  /** Step 1 of a two-step upload: an upload URL to stage up to `MAX_STAGED_UPLOAD_BYTES` (`docs/large-uploads.md`). */
  async createUploadUrl(request: UploadUrlRequest & { key: string | undefined }): Promise<UploadUrl> {
    const key = await this.authenticate(request.key);
    await this.deps.gate.admit(request.clientIp);
    return this.deps.staged.createUrl(request, key);
  }

  /** The decode, timed; `onOriginal` gets the stored original as soon as its bytes are final. */
  private async process(
    source: SourceBytes,
    options: UploadOptions,
    onOriginal: (original: EncodedImage) => void,
    inputMd5: () => string,
  ): Promise<ProcessedImage> {
    const startedMs = this.deps.clock.nowMs();
    const processed = await this.deps.processor.process(source.bytes, {
      targetWidth: options.targetWidth,
      onOriginal,
      inputMd5,
    });
    onOriginal(processed.original);
    this.deps.metrics.add(METRIC.imagingTime, 'Milliseconds', this.deps.clock.nowMs() - startedMs);
    return processed;
  }

  /**
   * Claims the duplicate fingerprint and the name at once, while the flood slot is taken; answers the earlier image
   * instead when this upload is a duplicate of it.
   */
  private async claim(
    clientIp: string,
    source: SourceBytes,
    md5: string,
    extension: string,
    options: UploadOptions,
    nowMs: number,
    held: Holdings,
  ): Promise<Claims | { answer: ImageObject }> {
    const fingerprint: DuplicateFingerprint = { clientIp, md5, width: options.targetWidth };
    const originalFilename = source.filename ?? `${this.deps.random.hex(NAME_SUFFIX_HEX_CHARS)}.${extension}`;
    const id = await this.newId();
    const codec = await this.deps.codecs.codec();
    const [checked, named, allowed] = await Promise.allSettled([
      this.duplicateGuard.check(fingerprint, id),
      this.names.claim({
        baseName: baseNameOf(originalFilename),
        extension,
        folder: formatDateFolder(nowMs, this.deps.rules.timeZone),
        imageId: id,
        idEncoded: codec.encode(id),
        nowMs,
      }),
      // bytes the operator took down with --block may not come back
      this.deps.gate.checkBytes(fingerprint.md5),
    ]);
    if (checked.status === 'fulfilled' && 'claim' in checked.value) held.claim = checked.value.claim;
    if (named.status === 'fulfilled') held.pending = { name: named.value.keys.original, keys: named.value.keys };
    if (allowed.status === 'rejected') throw allowed.reason;
    if (checked.status === 'rejected') throw checked.reason;
    if (named.status === 'rejected') throw named.reason;
    let check = checked.value;
    while ('existing' in check) {
      const answer = await this.answerDuplicate(check.existing, codec.encode(check.existing.id));
      if (answer) {
        // the name claimed goes unused: it stays taken, its claim settled
        await this.writer.discard(named.value.keys.original, named.value.keys);
        delete held.pending;
        return { answer };
      }
      // the image was deleted since it was found: this upload is stored after all
      check = await this.duplicateGuard.check(fingerprint, id);
      if ('claim' in check) held.claim = check.claim;
    }
    return { id, name: named.value.name, keys: named.value.keys, originalFilename, fingerprint };
  }

  /**
   * Writes the image's record. A random id that an image holds already (one chance in 2^53 per image) is drawn again
   * (the files do not depend on it, unless they are named after it: that upload fails and the client tries again).
   */
  private async save(record: ImageRecord, held: Holdings): Promise<void> {
    for (let attempt = 1; !(await this.writer.save(record)); attempt += 1) {
      if (attempt >= ID_ATTEMPTS || this.names.followsId) throw new Error(`the id ${record.id} is taken`);
      record.id = await this.newId();
      if (held.claim) await this.duplicateGuard.rebind(held.claim, record.id);
    }
  }

  /** A new id: drawn at random (default), or the next of Chevereto's counter (ID_SCHEME=sequential). */
  private newId(): Promise<number> {
    return this.deps.rules.idScheme === 'sequential'
      ? this.deps.images.allocateId()
      : Promise.resolve(this.deps.random.safeInteger());
  }

  private recordOf(
    claims: Claims,
    options: UploadOptions,
    processed: ProcessedImage,
    tokenHash: string,
    nowMs: number,
    claimed: boolean,
  ): ImageRecord {
    const { id, keys, name, originalFilename, fingerprint } = claims;
    return {
      id,
      status: 'active',
      name,
      extension: processed.original.extension,
      original: { ...storedFile(keys.original, processed.original), md5: processed.originalMd5 },
      thumb: storedFile(keys.thumb, processed.thumb),
      medium: storedFile(keys.medium, processed.medium),
      title: options.title ?? (titleFromFilename(originalFilename) || name),
      description: options.description,
      nsfw: options.nsfw,
      originalFilename,
      exif: processed.exif,
      animated: processed.animated,
      createdAtMs: nowMs,
      expiresAtMs: options.expirationSeconds === undefined ? null : nowMs + options.expirationSeconds * 1000,
      views: 0,
      sourceMd5: fingerprint.md5,
      clientIp: fingerprint.clientIp,
      fingerprint: claimed ? fingerprint : null,
      deleteTokenHashes: [tokenHash],
    };
  }

  /**
   * Fetches a URL source. A slot of the client's fetch-failure budget is taken first and given back when the fetch
   * succeeds: a client whose URLs keep failing is refused before anything more is fetched for it.
   */
  private async fetchSource(url: string, clientIp: string): Promise<SourceBytes> {
    const failureSlot = await this.deps.fetchFailures.reserve(clientIp, this.deps.clock.nowMs());
    const fetched = await this.deps.fetcher.fetch(url, this.deps.rules.maxUrlUploadBytes);
    await failureSlot.release();
    if (fetched.bytes.length === 0) throw new UploadError('EmptySource', 'Empty source');
    return { bytes: fetched.bytes, filename: cleanOriginalFilename(fetched.filename) || undefined };
  }

  /**
   * The existing image as a fresh upload would show it, with a delete link of its own for this request; undefined when
   * it was deleted in the meantime.
   */
  private async answerDuplicate(existing: ImageRecord, idEncoded: string): Promise<ImageObject | undefined> {
    const token = deleteTokens.make(this.deps.random);
    if (!(await this.deps.images.addDeleteToken(existing.id, token.hash))) return undefined;
    return this.imageObject(existing, idEncoded, token.token);
  }

  /** Gives back the flood slot and the duplicate claim, and removes what was written, of an upload that failed. */
  private async undo(held: Holdings): Promise<void> {
    const steps: Array<Promise<void>> = [];
    if (held.reserving) steps.push(held.reserving.then((reservation) => reservation.release()).catch(() => undefined));
    if (held.claim) steps.push(this.duplicateGuard.release(held.claim));
    const { pending, saved, saveUnknown } = held;
    if (pending) {
      const put = held.originalPut ?? Promise.resolve();
      steps.push(
        put
          .catch(() => undefined)
          .then(async () => {
            // A record written alongside files that failed goes first. Should that fail, the name claim stays pending
            // (naming the files): the sweep then finds the record with a file missing and removes them both.
            if (saved && (!saveUnknown || (await this.isSaved(saved)))) await this.deps.images.remove(saved.id);
            await this.writer.discard(pending.name, pending.keys);
          }),
      );
    }
    for (const result of await Promise.allSettled(steps)) {
      if (result.status === 'rejected')
        this.deps.logger.warn('undo of a failed upload did not finish', { error: result.reason as unknown });
    }
  }

  /** Whether this record is in the table (under its id, naming its original: no other upload's can). */
  private async isSaved(record: ImageRecord): Promise<boolean> {
    return (await this.deps.images.find(record.id))?.original.key === record.original.key;
  }

  private imageObject(record: ImageRecord, idEncoded: string, deleteToken: string): ImageObject {
    return toImageObject(record, {
      publicUrl: this.deps.rules.publicUrl,
      timeZone: this.deps.rules.timeZone,
      nowMs: this.deps.clock.nowMs(),
      idEncoded,
      deleteToken,
    });
  }

  /** The key of a request, once it is this service's key. */
  /** Whether a request's key is the service's: refusals are counted apart by it (`docs/operations.md`). */
  async holdsKey(key: string | undefined): Promise<boolean> {
    return this.authenticate(key).then(
      () => true,
      () => false,
    );
  }

  private async authenticate(key: string | undefined): Promise<string> {
    if (key === undefined || key === '') throw new UploadError('NoKey', 'No key provided');
    const expected = await this.deps.settings.apiKey();
    if (expected === undefined || expected === '') throw new UploadError('KeyNotConfigured', 'API key is not configured');
    if (!constantTimeEquals(key, expected)) throw new UploadError('InvalidKey', 'Invalid API key.');
    return key;
  }
}

/** A promise with its resolve and reject functions at hand; settling it again changes nothing. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (reason: unknown) => void } {
  let resolve: (value: T) => void = () => undefined;
  let reject: (reason: unknown) => void = () => undefined;
  const promise = new Promise<T>((settle, fail) => {
    resolve = settle;
    reject = fail;
  });
  return { promise, resolve, reject };
}

function storedFile(key: string, image: EncodedImage): StoredFile {
  return {
    key,
    width: image.width,
    height: image.height,
    size: image.bytes.length,
    mime: image.mime,
    extension: image.extension,
    bits: image.bits,
    channels: image.channels,
  };
}
