/** The image table: records, their holds, name claims, duplicate claims, the sweep's queue. */
import type { StoredFile } from './files';

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

/**
 * active: shown; deleting: a delete began and the sweep finishes it if it stops; removed: its files are gone (kept as
 * the bucket's noncurrent versions), and its record is kept, restorable, until `restorableUntilMs`.
 */
export type ImageStatus = 'active' | 'deleting' | 'removed';

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
  /** The end each hold asked for, by its token's hash, once the image has had more than one (`lifecycle/holds.ts`). */
  holdEnds?: Holds;
  /**
   * What the picture looks like (PDQ), for blocking it; absent for a picture with no hash of
   * `MIN_PDQ_QUALITY`, or a record made before hashing.
   */
  perceptual?: { hashes: string[]; quality: number };
  /** The NSFW classifier's score, 0 to 1, to three places (`docs/moderation.md`); absent when it did not run. */
  nsfwScore?: number;
  /** Taken down by the operator: removed for good, nothing kept for a restore. */
  takenDown?: boolean;
  /** A removed image: restorable (`admin restore`) until then, when the record goes (`docs/operations.md`). */
  restorableUntilMs?: number;
}

/**
 * The uploads an image was answered to, each its hold on it (`docs/rules.md`, "Duplicates" and "Delete links"): the
 * first upload's, and one for each duplicate answered with it. A hold is its delete link's hash and the end its upload
 * asked for (null: none). The image lives while any hold does (`lifecycle/holds.ts`).
 */
export type Holds = Record<string, number | null>;

/** What the sweep may find due: an image (expired, or a delete left unfinished), or an upload's name claim. */
export type DueRef = { id: number } | { name: string };

/** A claim on a fingerprint: which upload holds it, for which image, since when. */
export interface DuplicateClaim {
  claimId: string;
  imageId: number;
  claimedAtMs: number;
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
