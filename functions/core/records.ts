/**
 * The shapes the core and its ports pass around: images as encoded and as stored, records, claims, bans, figures.
 * The ports themselves are in `ports.ts`.
 */

/** The windows a client's uploads are counted in (`docs/api.md`, section 12). */
export const FLOOD_WINDOWS = ['minute', 'hour', 'day', 'week', 'month'] as const;
export type FloodWindow = (typeof FLOOD_WINDOWS)[number];

/** What a guard counts (each its own counters: `adapters/dynamo-counter-store.ts`). */
export type GuardRuleName =
  'uploads' | 'fetch-failures' | 'url-fetches' | 'url-megabytes' | 'url-fetches-at-once' | 'upload-urls' | 'reports';

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
  thumb: EncodedImage;
  medium: EncodedImage;
  exif: Record<string, unknown> | null;
  animated: boolean;
  /** What the picture looks like (`docs/moderation.md`): for an animation, its most seen frames'; absent when flat. */
  perceptual?: Perceptual | undefined;
  /**
   * The NSFW classifier's score, 0 to 1 (`docs/moderation.md`), which may come after the renditions (the upload puts
   * them meanwhile), with the time its runs took; absent when the policy is `off`. Marked as handled: an upload that
   * ends first leaves it unread.
   */
  nsfwScoring?: Promise<NsfwScore> | undefined;
}

export interface NsfwScore {
  /** 0 to 1: the highest of the runs' (an animation's frames are scored apart). */
  score: number;
  /** How long the classifier's own runs took, together (ms). */
  runMs: number;
}

/** The stored original of an upload, as soon as its bytes are final (before the renditions are made). */
export interface StoredOriginal {
  image: EncodedImage;
  /** The very bytes uploaded (nothing removed or converted): their md5 is the one the upload computed. */
  asSent: boolean;
}

/** What the imaging of one upload will produce, each part as soon as it is known (`ImageProcessor.start`). */
export interface ImagingRun {
  /**
   * Settles once the decode is handed to libvips, or with the run's failure when it fails before (the probe refused
   * the input): the caller's own work on this thread waits for it, rather than the decode for that work
   * (`docs/performance.md`, "The handler's own CPU").
   */
  decoding: Promise<void>;
  original: Promise<StoredOriginal>;
  processed: Promise<ProcessedImage>;
}

/** A picture's fingerprint (`functions/fingerprint`): its PDQ hashes, made from the pixels the renditions are made from. */
export interface Perceptual {
  /**
   * The hashes the record keeps, upright: the picture's own views' (`VIEWS`' `kept`), only those of
   * `MIN_PDQ_QUALITY` or more, and no two alike.
   */
  hashes: string[];
  /** The PDQ quality of the first of those (0 to 100). */
  quality: number;
  /** What an upload is compared by: a batch a picture (an animation's frames one each), checked in turns. */
  queries: string[][];
}

export interface ProcessOptions {
  /** Downscale the stored original to this width (keeps the ratio). */
  targetWidth: number | undefined;
  /**
   * Settles when the client may be served this work (its flood slot taken), or fails with the refusal (`Flooding`):
   * nothing past the decode is made before it, nor anything of an animation, whose every stage runs on every frame.
   */
  cleared?: Promise<unknown>;
}

export interface StoredObject {
  key: string;
  body: Uint8Array;
  contentType: string;
  cacheControl: string;
  /** The body's md5 (hex), which the store checks the bytes it received against (`docs/performance.md`). */
  md5: string;
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

/** One window of a subject's counters: which one, where it starts, and how many it holds at most. */
export interface CountWindow {
  window: FloodWindow;
  startMs: number;
  endMs: number;
  limit: number;
}

/** What a guard counts (uploads, or URL fetches that failed) and for whom (a client). */
export interface CounterSubject {
  rule: GuardRuleName;
  client: string;
}

/**
 * Figures per day (UTC) for `npm run admin -- stats`, kept as counters so that reading a day's figures reads one item,
 * and written in batches so that they cost next to nothing per upload: stored uploads and their bytes by the sweep
 * (once per run and day, from the uploads whose name claims it settles, about 15 minutes after they were stored),
 * refusals by each function instance (once a minute at most).
 */
export interface DayFigures {
  uploads: number;
  bytes: number;
  /** Refused uploads that carried the key: what the service's users met. */
  refusals: number;
  /** Refused requests without the key (or with a wrong one): anyone can send them, so they are counted apart. */
  unauthenticated: number;
  /** Viewers' reports of images received (one per client and image). */
  reports: number;
}

/** A viewer's report of an image (`docs/moderation.md`, "Reports"). */
export interface Report {
  imageId: number;
  clientIp: string;
  /** One of `REPORT_REASONS`' keys. */
  reason: string;
  /** What the viewer added, up to 500 characters; empty when nothing. */
  note: string;
  atMs: number;
}

/** An address range banned from uploading, until a moment or for good. */
export interface Ban {
  /** A CIDR range in canonical form: `203.0.113.0/24`, `2001:db8::/32`; a single address is a /32 or /128. */
  range: string;
  untilMs: number | null;
}

export type MetricUnit = 'Count' | 'Milliseconds' | 'Bytes' | 'Seconds';

/** What a CDN purge removes: single stored files, and whole folders (everything under them). */
export interface PurgeRequest {
  keys: string[];
  folders: string[];
}
