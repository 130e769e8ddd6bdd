import { deleteTokens } from './delete-tokens';
import { ApiKeyCheck } from './api-key';
import { DuplicateGuard, type DuplicatePolicy } from './duplicate-guard';
import type { IdScheme } from './id-codec';
import type { FloodGuard } from './flood';
import { md5Hex } from './hashes';
import type { IdCodecs } from './id-codec';
import { toImageObject, type ImageObject } from './image-object';
import { METRIC, type Metrics } from './metrics';
import { NameClaimer } from './name-claimer';
import type { NamingMode } from './naming';
import type {
  Clock,
  DuplicateIndex,
  EncodedImage,
  ImageProcessor,
  ImageRecord,
  ImageRecords,
  ImageRemovals,
  NameClaims,
  Logger,
  ObjectStore,
  ProcessedImage,
  ProcessOptions,
  RandomSource,
  SettingsStore,
} from './ports';
import type { UploadRequest } from './upload-request';
import type { StagedUploads, UploadUrl, UploadUrlRequest } from './staged-uploads';
import type { UploadGate } from './moderation';
import { awaitedLater, deferred, settled } from './settle';
import { readUploadOptions, readUploadSource, type SourceBytes, type UploadOptions } from './upload-source';
import type { UploadTicket } from './upload-tokens';
import { UploadWrites, type UploadWritesDeps } from './upload-writes';
import { newRecord, UploadClaims } from './upload-claims';
import { UrlSources, type UrlSourcesDeps } from './url-sources';


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


export interface UploadServiceDeps extends Pick<
  UrlSourcesDeps,
  'fetcher' | 'fetchFailures' | 'urlFetches' | 'urlMegabytes' | 'urlFetchesAtOnce'
> {
  rules: UploadRules;
  settings: SettingsStore;
  images: ImageRecords & Pick<ImageRemovals, 'remove'> & NameClaims;
  objects: ObjectStore;
  processor: ImageProcessor;
  flood: Pick<FloodGuard, 'reserve'>;
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

/**
 * The upload operation (contract, sections 2 to 5, 11, 12), ordered so that an upload waits for as few store round
 * trips as it can. The key and the options are checked first (no store call: the key is cached). Then, while the
 * pixels decode: the flood slot (a URL source is fetched only once it is taken), the duplicate fingerprint and the
 * file name at once (the name's claim records the upload as pending, naming its three files), and the original's put
 * as soon as its bytes are known. Once the pixels are ready, only the renditions' puts and the image's record are left,
 * written at once: one round trip.
 */
export class UploadService {
  private readonly keys: ApiKeyCheck;
  private readonly claims: UploadClaims;
  private readonly writesDeps: UploadWritesDeps;
  private readonly urlSources: UrlSources;

  constructor(private readonly deps: UploadServiceDeps) {
    this.urlSources = new UrlSources({ ...deps, maxBytes: deps.rules.maxUrlUploadBytes });
    const duplicateGuard = new DuplicateGuard({ ...deps, policy: deps.rules.duplicates });
    this.keys = new ApiKeyCheck(deps.settings);
    this.claims = new UploadClaims({
      ...deps,
      duplicateGuard,
      names: new NameClaimer(deps.images, deps.random, deps.rules.naming),
      show: (record, idEncoded, deleteToken) => this.imageObject(record, idEncoded, deleteToken),
    });
    this.writesDeps = { ...deps, duplicateGuard };
  }

  /** Runs one upload from the raw request to the Image object of the response: the order of its steps. */
  async upload(request: UploadRequest): Promise<ImageObject> {
    const key = await this.keys.check(request.key);
    const options = readUploadOptions(request, this.deps.rules.forcedExpirationSeconds);
    const given = readUploadSource(request.source, this.deps.rules.maxUploadBytes);
    // a two-step upload's token is checked before anything is taken
    const ticket = 'token' in given ? await this.deps.staged.check(given.token, key) : undefined;
    const writes = new UploadWrites(this.writesDeps);
    let failure: unknown;
    try {
      // a banned client's staged bytes go with the refusal (below), as any refused upload's
      await this.deps.gate.admit(request.clientIp);
      const nowMs = this.deps.clock.nowMs();
      const room = writes.reserveSlot(this.deps.flood, request.clientIp, nowMs);
      const source = await this.sourceOf(given, ticket, request.clientIp, writes);
      return await this.store(source, options, { clientIp: request.clientIp, nowMs, room }, writes);
    } catch (error) {
      failure = error;
      await writes.undo();
      throw error;
    } finally {
      if (ticket) await this.deps.staged.finish(ticket, failure);
    }
  }

  /** The bytes to store: the request's own (decoded meanwhile), or a URL's or a staged file's, once the slot is taken. */
  private async sourceOf(
    given: SourceBytes | { url: string } | { token: string },
    ticket: UploadTicket | undefined,
    clientIp: string,
    writes: UploadWrites,
  ): Promise<SourceBytes> {
    if ('url' in given) return writes.reserved.then(() => this.urlSources.fetch(given.url, clientIp));
    if (ticket) return writes.reserved.then(() => this.deps.staged.take(ticket));
    return given as SourceBytes;
  }

  /**
   * The decode, and meanwhile the duplicate fingerprint and the name claimed and the original put; once the pixels
   * are ready, the renditions and the record written at once; the answer.
   */
  private async store(
    source: SourceBytes,
    options: UploadOptions,
    upload: { clientIp: string; nowMs: number; room: Promise<void> },
    writes: UploadWrites,
  ): Promise<ImageObject> {
    const extension = this.deps.processor.storedExtension(source.bytes);
    // the md5 of the bytes as uploaded (the duplicate fingerprint), hashed once: also the stored original's when
    // nothing is removed from them
    let md5: string | undefined;
    const sourceMd5 = (): string => (md5 ??= md5Hex(source.bytes));
    const imaging = this.startImaging(source, options, sourceMd5);
    // the md5 and the claims below run on this thread once the decode is under way, not before it
    // (`docs/performance.md`, "The handler's own CPU")
    await imaging.decoding;
    // bytes the operator took down with --block may not come back, as sent or as stored: one read, during the decode
    const bytesAllowed = awaitedLater(imaging.storedMd5.then((stored) => this.deps.gate.checkBytes([sourceMd5(), stored])));
    try {
      const claims = await this.claims.claim({ ...upload, md5: sourceMd5(), extension }, source, options, writes);
      if ('answer' in claims) return await this.answeredAsDuplicate(claims.answer, imaging.processing);
      writes.putOriginal(claims.keys.original, imaging.original, imaging.storedMd5, upload.room);
      const processed = await imaging.processing;
      // nor its picture, however re-encoded (`docs/moderation.md`)
      await bytesAllowed;
      await this.deps.gate.checkPicture(processed);
      await writes.reserved;
      // the renditions are put while the classifier scores the picture: its verdict is needed by the record only
      writes.putRenditions(claims.keys, processed);
      const nsfwScore = await processed.nsfwScoring;
      const { flag } = this.deps.gate.checkContent(nsfwScore);
      const token = deleteTokens.make(this.deps.random);
      const claimed = writes.heldClaim !== undefined;
      const marked = { ...options, nsfw: options.nsfw || flag };
      const written = { tokenHash: token.hash, nowMs: upload.nowMs, claimed, nsfwScore };
      const record = newRecord(claims, marked, processed, written);
      await writes.write(record, (saving) => this.claims.save(saving, writes));
      this.countStored(processed);
      return this.imageObject(record, (await this.deps.codecs.codec()).encode(record.id), token.token);
    } catch (error) {
      await settled(imaging.processing);
      throw error;
    }
  }

  /** The decode, started at once; its stored original and md5 as soon as its bytes are final (before the renditions). */
  private startImaging(
    source: SourceBytes,
    options: UploadOptions,
    inputMd5: () => string,
  ): {
    processing: Promise<ProcessedImage>;
    decoding: Promise<void>;
    original: Promise<EncodedImage>;
    storedMd5: Promise<string>;
  } {
    const original = deferred<EncodedImage>();
    const storedMd5 = deferred<string>();
    const decoding = deferred<void>();
    const onOriginal = (image: EncodedImage, md5: string): void => {
      original.resolve(image);
      storedMd5.resolve(md5);
    };
    const processing = this.process(source, options, { onOriginal, onDecoding: () => decoding.resolve() }, inputMd5);
    // A decode that fails leaves no original to put; one that fails before the decode is under way (the probe: no
    // image, too large) is the upload's answer, with nothing claimed. Each promise takes the first outcome it is given.
    processing.then(
      () => decoding.resolve(),
      (error: unknown) => {
        original.reject(error);
        storedMd5.reject(error);
        decoding.reject(error);
      },
    );
    return {
      processing,
      decoding: decoding.promise,
      original: awaitedLater(original.promise),
      storedMd5: awaitedLater(storedMd5.promise),
    };
  }

  /**
   * Nothing is stored, and the decode already started is let finish unused; the flood slot is kept, as for any upload
   * answered (`docs/rules.md`: otherwise a client could have the service fetch and decode without limit).
   */
  private async answeredAsDuplicate(answer: ImageObject, processing: Promise<ProcessedImage>): Promise<ImageObject> {
    await settled(processing);
    this.deps.metrics.add(METRIC.uploadDuplicate, 'Count', 1);
    return answer;
  }

  private countStored(processed: ProcessedImage): void {
    this.deps.metrics.add(METRIC.uploadStored, 'Count', 1);
    const { original, thumb, medium } = processed;
    this.deps.metrics.add(METRIC.bytesStored, 'Bytes', original.bytes.length + thumb.bytes.length + medium.bytes.length);
  }

  /** Step 1 of a two-step upload: an upload URL to stage up to `MAX_STAGED_UPLOAD_BYTES` (`docs/large-uploads.md`). */
  async createUploadUrl(request: UploadUrlRequest & { key: string | undefined }): Promise<UploadUrl> {
    const key = await this.keys.check(request.key);
    await this.deps.gate.admit(request.clientIp);
    return this.deps.staged.createUrl(request, key);
  }

  /** The decode, timed; `onOriginal` gets the stored original as soon as its bytes are final. */
  private async process(
    source: SourceBytes,
    options: UploadOptions,
    calls: Required<Pick<ProcessOptions, 'onOriginal' | 'onDecoding'>>,
    inputMd5: () => string,
  ): Promise<ProcessedImage> {
    const startedMs = this.deps.clock.nowMs();
    const { onOriginal, onDecoding } = calls;
    const processed = await this.deps.processor.process(source.bytes, {
      targetWidth: options.targetWidth,
      onOriginal,
      onDecoding,
      inputMd5,
      onClassified: (runMs) => this.deps.metrics.add(METRIC.classifierTime, 'Milliseconds', runMs),
    });
    onOriginal(processed.original, processed.originalMd5);
    this.deps.metrics.add(METRIC.imagingTime, 'Milliseconds', this.deps.clock.nowMs() - startedMs);
    return processed;
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

  /** Whether a request carried the service's key: refusals are counted apart by it (`docs/operations.md`). */
  holdsKey(key: string | undefined): Promise<boolean> {
    return this.keys.holds(key);
  }
}
