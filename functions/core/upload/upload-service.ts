import { ApiKeyCheck } from './api-key';
import { DuplicateGuard, type DuplicatePolicy } from './duplicate-guard';
import type { FloodGuard } from '../flood';
import type { IdCodecs, IdScheme } from '../image/id-codec';
import { toImageObject, type ImageObject } from '../image/image-object';
import type { Metrics } from '../metrics';
import type { UploadGate } from '../moderation/moderation';
import { NameClaimer } from './name-claimer';
import type { NamingMode } from './naming';
import type {
  Clock,
  DuplicateIndex,
  ImageProcessor,
  ImageRecords,
  ImageRemovals,
  Logger,
  NameClaims,
  ObjectStore,
  RandomSource,
  SettingsStore,
} from '../ports';
import type { StagedUploads, UploadUrl, UploadUrlRequest } from './staged-uploads';
import { UploadAttempt, type UploadAttemptDeps } from './upload-attempt';
import type { AnsweredImage } from './upload-claims';
import type { UploadRequest } from './upload-request';
import { readUploadOptions, readUploadSource, type SourceBytes } from './upload-source';
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
 * The upload operation (`docs/api.md`, sections 2 to 5, 11, 12): its admission. The key and the options are checked
 * first (no store call: the key is cached), then the client's ban; the source is read from the request, or fetched
 * (a URL's, a staged file's) once the client's flood slot is taken. All that follows, from the decode to the record,
 * and how a failure is given back, is the upload's `UploadAttempt`, ordered so that it waits for as few store round
 * trips as it can.
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

  /** Runs one upload from the raw request to the Image object of the response: its admission, then its attempt. */
  async upload(request: UploadRequest): Promise<ImageObject> {
    const key = await this.keys.check(request.key);
    const options = readUploadOptions(request, this.deps.rules.forcedExpirationSeconds);
    const given = readUploadSource(request.source, this.deps.rules.maxUploadBytes);
    // a two-step upload's token is checked before anything is taken
    const ticket = 'token' in given ? await this.deps.staged.check(given.token, key) : undefined;
    let failure: unknown;
    try {
      // a banned client's staged bytes go with the refusal (below), as any refused upload's
      await this.deps.gate.admit(request.clientIp);
      const attempt = new UploadAttempt(this.attemptDeps, request.clientIp, this.deps.clock.nowMs());
      const source = this.sourceOf(given, ticket, request.clientIp, attempt.reserved);
      return this.imageObject(await attempt.store(source, options));
    } catch (error) {
      failure = error;
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
    reserved: Promise<unknown>,
  ): Promise<SourceBytes> {
    if ('url' in given) return reserved.then(() => this.urlSources.fetch(given.url, clientIp));
    if (ticket) return reserved.then(() => this.deps.staged.take(ticket));
    return given as SourceBytes;
  }

  /** Step 1 of a two-step upload: an upload URL to stage up to `MAX_STAGED_UPLOAD_BYTES` (`docs/large-uploads.md`). */
  async createUploadUrl(request: UploadUrlRequest & { key: string | undefined }): Promise<UploadUrl> {
    const key = await this.keys.check(request.key);
    await this.deps.gate.admit(request.clientIp);
    return this.deps.staged.createUrl(request, key);
  }

  private imageObject({ record, idEncoded, deleteToken }: AnsweredImage): ImageObject {
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
