/** The interfaces the core needs from the outside world; adapters implement them, tests fake them. */
import type { PurgeRequest } from './purge-plan';

/** One encoded image: the stored original or a rendition. */
export interface EncodedImage {
  bytes: Uint8Array;
  width: number;
  height: number;
  /** `image/jpeg`, `image/png`, ... */
  mime: string;
  /** `jpg`, `png`, `gif`, `webp`, `avif` */
  extension: string;
  bits: number;
  channels: number | null;
}

export interface ProcessedImage {
  original: EncodedImage;
  /** md5 of the stored original's bytes. */
  originalMd5: string;
  thumb: EncodedImage;
  medium: EncodedImage;
  exif: Record<string, unknown> | null;
  animated: boolean;
}

export interface ProcessOptions {
  /** Downscale the stored original to this width (keeps the ratio). */
  targetWidth: number | undefined;
  /** Called with the stored original as soon as its bytes are final, before the renditions are made. */
  onOriginal?: (original: EncodedImage) => void;
  /**
   * The input's md5, computed at most once and shared with the caller (the duplicate fingerprint): the stored
   * original's md5 when the original is the input itself (nothing to remove), instead of hashing the same bytes again.
   */
  inputMd5?: () => string;
}

/** Turns uploaded bytes into what is stored. Throws UploadError for refused input. */
export interface ImageProcessor {
  /**
   * The extension the stored original will have, read from the first bytes alone (no decode), so that its name can be
   * claimed while it is decoded; throws 415 for bytes that are no accepted format.
   */
  storedExtension(input: Uint8Array): string;
  process(input: Uint8Array, options: ProcessOptions): Promise<ProcessedImage>;
}

export interface StoredObject {
  key: string;
  body: Uint8Array;
  contentType: string;
  cacheControl: string;
}

export interface ObjectStore {
  put(object: StoredObject): Promise<void>;
  /** True when every one of these objects is stored. */
  exist(keys: readonly string[]): Promise<boolean>;
  deleteMany(keys: readonly string[]): Promise<void>;
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

export interface StagedUsage {
  files: number;
  bytes: number;
}

export interface StagedObject {
  size: number;
  /** Reads the whole object; call `discard` instead to leave it unread. */
  read(): Promise<Uint8Array>;
  discard(): void;
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

/** What is kept of one stored file (original or rendition). */
export interface StoredFile {
  key: string;
  width: number;
  height: number;
  size: number;
  mime: string;
  extension: string;
  bits: number;
  channels: number | null;
}

/** The three files of an image: its original and renditions. */
export interface ImageKeys {
  original: string;
  thumb: string;
  medium: string;
}

/** What makes an upload a duplicate of another: the same client, the same bytes, the same width asked for. */
export interface DuplicateFingerprint {
  clientIp: string;
  md5: string;
  width: number | undefined;
}

/**
 * An upload being stored, as the claim of its original's name records it until the sweep settles it: the files it
 * may write (written before any of them), so that the sweep can remove them should the upload die half way.
 */
export interface PendingUpload {
  status: 'pending';
  /** The original's object key: the name claimed. */
  name: string;
  imageId: number;
  keys: ImageKeys;
  createdAtMs: number;
}

/** active: shown; deleting: a delete began and the sweep finishes it if it stops. */
export type ImageStatus = 'active' | 'deleting';

/** The record of a stored image. */
export interface ImageRecord {
  id: number;
  status: ImageStatus;
  /** Stored file name without extension. */
  name: string;
  extension: string;
  original: StoredFile & { md5: string };
  thumb: StoredFile;
  medium: StoredFile;
  title: string;
  description: string | null;
  nsfw: boolean;
  originalFilename: string;
  exif: Record<string, unknown> | null;
  animated: boolean;
  createdAtMs: number;
  expiresAtMs: number | null;
  views: number;
  /** md5 of the bytes as uploaded, for duplicate detection. */
  sourceMd5: string;
  clientIp: string;
  /** The duplicate-index entry this image holds, released when it goes. */
  fingerprint: DuplicateFingerprint | null;
  /** sha256 of every delete token handed out for this image. */
  deleteTokenHashes: string[];
}

/** What the sweep may find due: an image (expired, or a delete left unfinished), or an upload's name claim. */
export type DueRef = { id: number } | { name: string };

export interface ImageRepository {
  /** The next id of the atomic counter (ID_SCHEME=sequential). */
  allocateId(): Promise<number>;
  /**
   * Claims the original's object key for an upload, recording the upload as pending there (its three files, due for
   * the sweep at `sweepAtMs`); false when another image holds the key. Claims are never released. The same upload's
   * claim already there (a write retried after its answer was lost) counts as claimed.
   */
  claimName(upload: PendingUpload, sweepAtMs: number): Promise<boolean>;
  /**
   * Writes the record of a stored image (active from then on); false, writing nothing, when another image holds its id
   * (the same upload's record, from a write retried after its answer was lost, is written over).
   */
  saveActive(record: ImageRecord): Promise<boolean>;
  /**
   * Marks a name claim's upload as over (stored, or removed): out of the sweep's sight, the name still held; false when
   * it was not pending (settled already).
   */
  settleName(name: string): Promise<boolean>;
  find(id: number): Promise<ImageRecord | undefined>;
  /** The upload a name claim records as pending; undefined when it is settled or there is no claim. */
  findPending(name: string): Promise<PendingUpload | undefined>;
  /** Adds one view to an active record and answers the record after it; undefined when there is none. */
  addView(id: number): Promise<ImageRecord | undefined>;
  /** Hands out one more delete token for an active record; false when it is not active. */
  addDeleteToken(id: number, tokenHash: string): Promise<boolean>;
  /**
   * Takes one delete token off an active record that holds others (the same image uploaded again by the same client,
   * each answer with a link of its own); false, changing nothing, when it is the record's last token or not its own.
   */
  releaseDeleteToken(id: number, tokenHash: string): Promise<boolean>;
  /** Marks an active record holding this token hash as being deleted, due for the sweep now; false when none. */
  markDeleting(id: number, tokenHash: string, nowMs: number): Promise<boolean>;
  /** How many parts what is due is kept in: the sweep reads several at once. */
  readonly duePartitions: number;
  /**
   * What is due for the sweep (expired images, unfinished deletes, uploads' name claims) in one part (0 to
   * `duePartitions` - 1), page by page, oldest first.
   */
  dueRefs(nowMs: number, pageSize: number, partition: number): AsyncIterable<DueRef[]>;
  /** When the oldest thing still due became due; undefined when nothing is. */
  oldestDueAtMs(nowMs: number): Promise<number | undefined>;
  /** Removes a record; false when there was none (another run removed it). */
  remove(id: number): Promise<boolean>;
  /** The image whose original's object key is this claimed name; undefined when no image claimed it. */
  imageIdOfName(objectKey: string): Promise<number | undefined>;
  /** Marks a record as being deleted by the operator (whoever holds delete links), due now; false when none. */
  markTakenDown(id: number, nowMs: number): Promise<boolean>;
  /** Every record made at or after `sinceMs`, page by page, in no order (the whole table is read: an operator's tool). */
  recent(sinceMs: number): AsyncIterable<ImageRecord[]>;
  /** Every record of these bytes (its `sourceMd5` or its original's md5 among them), page by page, the whole table read. */
  withContent(md5s: string[]): AsyncIterable<ImageRecord[]>;
}

/** A claim on a fingerprint: which upload holds it, for which image, since when. */
export interface DuplicateClaim {
  claimId: string;
  imageId: number;
  claimedAtMs: number;
}

/** Fingerprints of recent uploads, one conditional item each. */
export interface DuplicateIndex {
  /**
   * Claims a fingerprint for an upload about to store `imageId`. When another claim younger than the window holds it,
   * answers that claim instead (this claim itself, written by a retry after its answer was lost, counts as claimed).
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
  /** The secret header value CloudFront sends to the API; undefined when missing. */
  originSecret(): Promise<string | undefined>;
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
