import { ApiKeyCheck } from './api-key';
import { deleteTokens } from '../delete-tokens';
import { DuplicateGuard, type DuplicatePolicy } from './duplicate-guard';
import type { FloodGuard } from '../flood';
import { md5HexInTurns } from '../hashes';
import type { IdCodecs, IdScheme } from '../id-codec';
import { toImageObject, type ImageObject } from '../image-object';
import { METRIC, type Metrics } from '../metrics';
import type { UploadGate } from '../moderation/moderation';
import { NameClaimer } from './name-claimer';
import type { NamingMode } from './naming';
import type {
  Clock,
  DuplicateIndex,
  ImageProcessor,
  ImageRecord,
  ImageRecords,
  ImageRemovals,
  ImagingRun,
  Logger,
  NameClaims,
  ObjectStore,
  ProcessedImage,
  ProcessOptions,
  RandomSource,
  SettingsStore,
} from '../ports';
import { awaitedLater, settled } from '../settle';
import type { StagedUploads, UploadUrl, UploadUrlRequest } from './staged-uploads';
import { UploadAttempt, type DuplicateAnswer, type UploadAttemptDeps } from './upload-attempt';
import { newRecord } from './upload-record';
import type { UploadRequest } from './upload-request';
import { readUploadOptions, readUploadSource, type SourceBytes, type UploadOptions } from './upload-source';
import type { UploadTicket } from './upload-tokens';
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
  flood: Pick<FloodGuard, 'reserveSlot'>;
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
 * The upload operation (`docs/api.md`, sections 2 to 5, 11, 12), ordered so that an upload waits for as few store
 * round trips as it can. The key and the options are checked first (no store call: the key is cached). Then, while the
 * pixels decode: the flood slot (a URL source is fetched only once it is taken), the claims, and the original's put as
 * soon as its bytes are known. Once the pixels are ready, only the renditions' puts and the image's record are left,
 * written at once: one round trip. When each step starts is this service's (`store`); what each writes, and how a
 * failure is given back, `UploadAttempt`'s.
 */
export class UploadService {
  private readonly keys: ApiKeyCheck;
  private readonly urlSources: UrlSources;
  private readonly attemptDeps: UploadAttemptDeps;

  constructor(private readonly deps: UploadServiceDeps) {
    this.urlSources = new UrlSources({ ...deps, maxBytes: deps.rules.maxUrlUploadBytes });
    this.keys = new ApiKeyCheck(deps.settings);
    this.attemptDeps = {
      ...deps,
      duplicateGuard: new DuplicateGuard({ ...deps, policy: deps.rules.duplicates }),
      names: new NameClaimer(deps.images, deps.random, deps.rules.naming),
    };
  }

  /** Runs one upload from the raw request to the Image object of the response: the order of its steps. */
  async upload(request: UploadRequest): Promise<ImageObject> {
    const key = await this.keys.check(request.key);
    const options = readUploadOptions(request, this.deps.rules.forcedExpirationSeconds);
    const given = readUploadSource(request.source, this.deps.rules.maxUploadBytes);
    // a two-step upload's token is checked before anything is taken
    const ticket = 'token' in given ? await this.deps.staged.check(given.token, key) : undefined;
    const attempt = new UploadAttempt(this.attemptDeps, request.clientIp, this.deps.clock.nowMs());
    let failure: unknown;
    try {
      // a banned client's staged bytes go with the refusal (below), as any refused upload's
      await this.deps.gate.admit(request.clientIp);
      attempt.takeSlot();
      const source = await this.sourceOf(given, ticket, request.clientIp, attempt);
      return await this.store(source, options, attempt);
    } catch (error) {
      failure = error;
      await attempt.undo(error);
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
    attempt: UploadAttempt,
  ): Promise<SourceBytes> {
    if ('url' in given) return attempt.reserved.then(() => this.urlSources.fetch(given.url, clientIp));
    if (ticket) return attempt.reserved.then(() => this.deps.staged.take(ticket));
    return given as SourceBytes;
  }

  /**
   * The decode, and meanwhile the md5s, the claims and the original's put; once the pixels are ready, the checks of
   * the picture, the renditions and the record written at once; the answer.
   */
  private async store(source: SourceBytes, options: UploadOptions, attempt: UploadAttempt): Promise<ImageObject> {
    const extension = this.deps.processor.storedExtension(source.bytes);
    const imaging = this.startImaging(source.bytes, { targetWidth: options.targetWidth, cleared: attempt.reserved });
    try {
      // the md5s and the claims run on this thread once the decode is under way, not before it
      // (`docs/performance.md`, "The handler's own CPU")
      await imaging.decoding;
      // a refusal from here on comes after real imaging work, and counts against the client (`docs/rules.md`)
      attempt.spend();
      const sourceMd5 = await md5HexInTurns(source.bytes);
      const original = awaitedLater(
        imaging.original.then(async ({ image, asSent }) => ({
          image,
          md5: asSent ? sourceMd5 : await md5HexInTurns(image.bytes),
        })),
      );
      // bytes the operator took down with --block may not come back, as sent or as stored: one read, during the decode
      const bytesAllowed = awaitedLater(original.then(({ md5 }) => this.deps.gate.checkBytes([sourceMd5, md5])));
      const claims = await attempt.claimAll({ md5: sourceMd5, extension, filename: source.filename }, options);
      if ('duplicate' in claims) return await this.answeredAsDuplicate(claims.duplicate, imaging.counted);
      attempt.putOriginal(claims.keys.original, original);
      const processed = await imaging.processed;
      // nor its picture, however re-encoded (`docs/moderation.md`)
      await bytesAllowed;
      await this.deps.gate.checkPicture(processed);
      await attempt.reserved;
      // the renditions are put while the classifier scores the picture: its verdict is needed by the record only
      attempt.putRenditions(claims.keys, processed);
      const nsfw = await processed.nsfwScoring;
      const { flag } = this.deps.gate.checkContent(nsfw?.score);
      const token = deleteTokens.make(this.deps.random);
      const record = newRecord(claims, { ...options, nsfw: options.nsfw || flag }, processed, {
        originalMd5: (await original).md5,
        tokenHash: token.hash,
        nowMs: attempt.nowMs,
        claimed: attempt.holdsFingerprint,
        nsfwScore: nsfw?.score,
      });
      await attempt.write(record);
      this.countStored(processed);
      return this.imageObject(record, (await this.deps.codecs.codec()).encode(record.id), token.token);
    } catch (error) {
      await settled(imaging.counted);
      throw error;
    }
  }

  /**
   * The imaging, started at once, timed to its end (`ImagingTime`), and the classifier's own time (`ClassifierTime`)
   * once its score is in; `counted` settles when both are counted, which a duplicate's or a refusal's answer waits for:
   * the work it started is billed to it, and its figures flushed with it.
   */
  private startImaging(bytes: Uint8Array, options: ProcessOptions): ImagingRun & { counted: Promise<void> } {
    const startedMs = this.deps.clock.nowMs();
    const imaging = this.deps.processor.start(bytes, options);
    const { metrics } = this.deps;
    const counted = imaging.processed.then(async (processed) => {
      metrics.add(METRIC.imagingTime, 'Milliseconds', this.deps.clock.nowMs() - startedMs);
      const nsfw = await processed.nsfwScoring;
      if (nsfw) metrics.add(METRIC.classifierTime, 'Milliseconds', nsfw.runMs);
    });
    return { ...imaging, counted: awaitedLater(counted) };
  }

  /**
   * Nothing is stored, and the decode and scoring already started are let finish unused; the flood slot is kept, as for any upload
   * answered (`docs/rules.md`: otherwise a client could have the service fetch and decode without limit).
   */
  private async answeredAsDuplicate(answer: DuplicateAnswer, imagingCounted: Promise<void>): Promise<ImageObject> {
    await settled(imagingCounted);
    this.deps.metrics.add(METRIC.uploadDuplicate, 'Count', 1);
    return this.imageObject(answer.record, answer.idEncoded, answer.deleteToken);
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
