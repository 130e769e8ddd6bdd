/**
 * Every port of the core, in one place: the interfaces it needs from the outside world, one per role. Adapters
 * implement them (`functions/adapters`, `functions/imaging`), tests fake them (`test/support/in-memory.ts`), and a
 * contract suite per port runs against both (`test/contract`). The shapes they pass are in `records.ts`.
 */
import type {
  ImagingRun,
  ProcessOptions,
  StoredObject,
  StagedUsage,
  StagedObject,
  DuplicateFingerprint,
  PendingUpload,
  ImageRecord,
  Holds,
  DueRef,
  DuplicateClaim,
  CountWindow,
  CounterSubject,
  DayFigures,
  FloodWindow,
  Report,
  Ban,
  MetricUnit,
  PurgeRequest,
} from './records';

export type * from './records';

/** Turns uploaded bytes into what is stored. Throws ServiceError for refused input. */
export interface ImageProcessor {
  /**
   * The extension the stored original will have, read from the first bytes alone (no decode), so that its name can be
   * claimed while it is decoded; throws 415 for bytes that are no accepted format.
   */
  storedExtension(input: Uint8Array): string;
  /** Starts the imaging of one upload: every promise of the run is marked as handled (it may go unread). */
  start(input: Uint8Array, options: ProcessOptions): ImagingRun;
}

export interface ObjectStore {
  put(object: StoredObject): Promise<void>;
  /** True when every one of these objects is stored. */
  exist(keys: readonly string[]): Promise<boolean>;
  /** Removes the current objects: a bucket that keeps versions keeps the removed ones for a while (a restore). */
  deleteMany(keys: readonly string[]): Promise<void>;
  /** Removes every version of these objects, nothing kept (a takedown). */
  purge(keys: readonly string[]): Promise<void>;
  /** Makes each object's newest kept version current; answers the keys with none kept (then changes nothing). */
  restore(keys: readonly string[]): Promise<string[]>;
  /** An object's bytes; undefined when it is not there (the operator's tool: the picture a takedown blocks). */
  read(key: string): Promise<Uint8Array | undefined>;
  /** `read`, or for a removed object its newest kept version (a restorable image's); undefined when neither. */
  readKept(key: string): Promise<Uint8Array | undefined>;
}

/** Where the bytes of a two-step upload wait: a place no one reads but the service, emptied within a day. */
export interface StagedObjectStore {
  /** A URL that takes one PUT of exactly `size` bytes as the object `id`, for `expiresInSeconds`, and its headers. */
  uploadUrl(id: string, size: number, expiresInSeconds: number): Promise<{ url: string; headers: Record<string, string> }>;
  /** The staged object `id` (its size, read on demand); undefined when nothing was put there. */
  open(id: string): Promise<StagedObject | undefined>;
  remove(id: string): Promise<void>;
  /** Removes every staged object put before `cutoffMs`; answers what went. */
  removeOlderThan(cutoffMs: number): Promise<StagedUsage>;
  /** What waits in the staging place now. */
  usage(): Promise<StagedUsage>;
}

/** The uses of single-use tokens. */
export interface TokenLedger {
  /** Records the use of a token; false when it was used already. */
  use(id: string, expiresAtMs: number): Promise<boolean>;
  /** Forgets a use: the upload failed on the service's side, and the client may try the token again. */
  forget(id: string): Promise<void>;
}

/** The CDN in front of the stored files: a deleted file must stop being served from its caches. */
export interface CachePurger {
  /**
   * Starts removing the files and folders from the CDN's caches; answers the paths it sent (0 where there is no CDN),
   * and throws when the CDN refuses (throttled).
   */
  purge(request: PurgeRequest): Promise<number>;
}

/**
 * The name claims of uploads (`docs/api.md`, section 4: an object is never overwritten): an original's object key,
 * claimed before any file is written, records the upload as pending there until it is over.
 */
export interface NameClaims {
  /**
   * Claims the original's object key for an upload, recording the upload as pending there (its three files, due for
   * the sweep at `sweepAtMs`); false when another image holds the key. Claims are never released. The same upload's
   * claim already there (its write retried: `docs/reliability.md`) counts as claimed.
   */
  claimName(upload: PendingUpload, sweepAtMs: number): Promise<boolean>;
  /**
   * Marks a name claim's upload as over (stored, or removed): out of the sweep's sight, the name still held; false when
   * it was not pending (settled already).
   */
  settleName(name: string): Promise<boolean>;
  /** The upload a name claim records as pending; undefined when it is settled or there is no claim. */
  findPending(name: string): Promise<PendingUpload | undefined>;
  /** The image whose original's object key is this claimed name; undefined when no image claimed it. */
  imageIdOfName(objectKey: string): Promise<number | undefined>;
}

/** The records of stored images: written once the files are, read by the pages, marked when they go. */
export interface ImageRecords {
  /** The next id of the atomic counter (ID_SCHEME=sequential). */
  allocateId(): Promise<number>;
  /**
   * Writes the record of a stored image (active from then on); false, writing nothing, when another image holds its id
   * (the same upload's record, its write retried, is written over).
   */
  saveActive(record: ImageRecord): Promise<boolean>;
  find(id: number): Promise<ImageRecord | undefined>;
  /** Adds one view to an active record and answers the record after it; undefined when there is none. */
  addView(id: number): Promise<ImageRecord | undefined>;
  /**
   * Writes an active record's holds (`lifecycle/holds.ts`): its delete tokens become the holds' hashes, and its end
   * `expiresAtMs` (due for the sweep then; none, out of its index), on the condition that its tokens are still exactly
   * `readTokens` (no hold came or went since they were read). Answers the record after; undefined, writing nothing,
   * when they are not, or it is not active.
   */
  writeHolds(
    id: number,
    readTokens: readonly string[],
    holds: Holds,
    expiresAtMs: number | null,
  ): Promise<ImageRecord | undefined>;
}

/** The removal of images: marked, their files gone, kept for a restore, brought back, forgotten. */
export interface ImageRemovals {
  /** Marks an active record holding this token hash deleting, due now (retried: counts again); false when none. */
  markDeleting(id: number, tokenHash: string, nowMs: number): Promise<boolean>;
  /** Marks a record taken down by the operator (whoever holds delete links): due now, nothing kept; false when none. */
  markTakenDown(id: number, nowMs: number): Promise<boolean>;
  /** Keeps a record (`deleting`, or expired by `nowMs`; not taken down) `removed`, unswept, until `untilMs`. */
  retire(id: number, nowMs: number, untilMs: number): Promise<boolean>;
  /** Makes a `removed` record active again, with this expiry; false when it is not `removed`. */
  revive(id: number, expiresAtMs: number | null): Promise<boolean>;
  /** Removes a record; false when there was none (another run removed it). */
  remove(id: number): Promise<boolean>;
}

/** What is due for the sweep, kept in parts the sweep reads several at once. */
export interface SweepQueue {
  /** How many parts what is due is kept in. */
  readonly duePartitions: number;
  /**
   * What is due for the sweep (expired images, unfinished deletes, uploads' name claims) in one part (0 to
   * `duePartitions` - 1), page by page, oldest first.
   */
  dueRefs(nowMs: number, pageSize: number, partition: number): AsyncIterable<DueRef[]>;
  /** When the oldest thing still due became due; undefined when nothing is. */
  oldestDueAtMs(nowMs: number): Promise<number | undefined>;
}

/** The operator's reads of every record (the whole table: `npm run admin`, never a request's path). */
export interface ImageScan {
  /** Every record made at or after `sinceMs`, page by page, in no order. */
  recent(sinceMs: number): AsyncIterable<ImageRecord[]>;
  /** Every record of these bytes (its `sourceMd5` or its original's md5 among them), page by page. */
  withContent(md5s: string[]): AsyncIterable<ImageRecord[]>;
}

/** The one table serves the five roles: where the stores are wired, one adapter stands for all of them. */
export type ImageTable = NameClaims & ImageRecords & ImageRemovals & SweepQueue & ImageScan;

/** Fingerprints of recent uploads, one conditional item each. */
export interface DuplicateIndex {
  /**
   * Claims a fingerprint for an upload about to store `imageId`. When another claim younger than the window holds it,
   * answers that claim instead (this claim itself, met by its retry, counts as claimed: `docs/reliability.md`).
   */
  claim(
    fingerprint: DuplicateFingerprint,
    claim: DuplicateClaim,
    windowMs: number,
  ): Promise<{ claimed: true } | { claimed: false; held: DuplicateClaim }>;
  /** Replaces a claim whose image is gone or whose upload died, if it is still the claim that was read. */
  takeOver(fingerprint: DuplicateFingerprint, previousClaimId: string, claim: DuplicateClaim, windowMs: number): Promise<boolean>;
  /** Points a claim at another image id (the one first drawn was taken). */
  rebind(fingerprint: DuplicateFingerprint, claimId: string, imageId: number): Promise<void>;
  /** Gives up a claim of an upload that failed. */
  releaseClaim(fingerprint: DuplicateFingerprint, claimId: string): Promise<void>;
  /** Removes the entry of an image that is gone. */
  releaseImage(fingerprint: DuplicateFingerprint, imageId: number): Promise<void>;
}

/** Operator settings kept in SSM Parameter Store. */
export interface SettingsStore {
  /** The API key; undefined when the parameter is missing or empty. */
  apiKey(): Promise<string | undefined>;
  /** The flood-limits parameter's text; undefined when it is missing. */
  floodLimits(): Promise<string | undefined>;
  /** The salt of the id codec, created once per deployment. */
  idSalt(): Promise<string>;
  /** The public base URL the stack wrote; undefined when missing. */
  publicUrl(): Promise<string | undefined>;
  /** The secret header values CloudFront may send: the `/origin-secret` parameter's lines (the first is sent). */
  originSecrets(): Promise<readonly string[]>;
  /** The CloudFront distribution in front of the files; undefined when there is none (local). */
  distributionId(): Promise<string | undefined>;
}

/** Fetches the bytes behind a URL source. */
export interface SourceFetcher {
  fetch(url: string, maxBytes: number): Promise<{ bytes: Uint8Array; filename: string }>;
}

export interface Clock {
  nowMs(): number;
  sleep(ms: number): Promise<void>;
}

export interface RandomSource {
  /** `chars` random lowercase hex characters. */
  hex(chars: number): string;
  /** A random integer from 1 to 2^53 - 1 (every safe positive integer), uniformly. */
  safeInteger(): number;
}

/** Structured log lines; the Powertools Logger fits this shape. */
export interface Logger {
  info(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  error(message: string, ...extra: Record<string, unknown>[]): void;
}

/**
 * Counters with ceilings, every window of a subject kept together (one DynamoDB item per subject and rule), changed
 * all or none, exactly under concurrency.
 */
export interface CounterStore {
  /** Adds one to every window when each is below its limit; otherwise adds nothing and answers the full ones. */
  take(subject: CounterSubject, windows: readonly CountWindow[]): Promise<CounterTake>;
  /** Takes one off every window that still is the one taken from (a window over since is left alone). */
  giveBack(subject: CounterSubject, windows: readonly CountWindow[]): Promise<void>;
  /** Adds `amount` to every window, whatever its limit: work done already, counted after it (a window over is begun anew). */
  add(subject: CounterSubject, windows: readonly CountWindow[], amount: number): Promise<void>;
}

/** A take of the counters: the slot taken in every window, or the windows that were full. */
export type CounterTake = { taken: true } | { taken: false; full: FloodWindow[] };

export interface DailyStats {
  add(day: string, figures: Partial<DayFigures>): Promise<void>;
  read(days: readonly string[]): Promise<Map<string, DayFigures>>;
}

export interface BanList {
  all(): Promise<Ban[]>;
  add(ban: Ban): Promise<void>;
  /** Removes a ban; false when there was none of that range. */
  remove(range: string): Promise<boolean>;
}

export interface BlockList {
  /** Whether any of these fingerprints (md5) is blocked: one read for all. */
  anyBlocked(md5s: readonly string[]): Promise<boolean>;
  block(md5: string, reason: string, nowMs: number): Promise<void>;
  /** Lifts a fingerprint's block; false when it had none. */
  unblock(md5: string): Promise<boolean>;
  /** Every blocked fingerprint (an operator's tool: the whole table is read). */
  blockedBytes(): Promise<BlockedBytes[]>;
}

export interface BlockedBytes {
  md5: string;
  reason: string;
  blockedAtMs: number;
}

/** Viewers' reports of images, one per client and image. */
export interface ReportList {
  /** Keeps a report; false, keeping nothing, when this client reported this image already. */
  add(report: Report): Promise<boolean>;
  /** Every report, page by page (an operator's tool: the whole table is read). */
  all(): AsyncIterable<Report[]>;
  /** Removes the reports of an image (it was taken down, or is gone); how many there were. */
  resolve(imageId: number): Promise<number>;
}

/** Where the service writes its figures (CloudWatch embedded metric format in Lambda; nowhere, or a fake, elsewhere). */
export interface Metrics {
  /** Adds a value to a metric; with a dimension, the value counts under that dimension's value only. */
  add(name: string, unit: MetricUnit, value: number, dimension?: { name: string; value: string }): void;
  /** Writes what is buffered; called at the end of each invocation. */
  flush(): void;
}
