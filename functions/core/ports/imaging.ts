/** The pictures: what the imaging makes of an upload, and its port. */

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
  /**
   * Whether the upload's picture is compared with blocked pictures (some are blocked): when it has settled to false by
   * the time the fingerprint starts, the fingerprint makes only the views the record keeps (`docs/moderation.md`, "The
   * views of a picture, in one table"). The imaging never waits for it: not settled yet, not given, or failed, the
   * picture is compared.
   */
  compared?: Promise<boolean>;
}

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
