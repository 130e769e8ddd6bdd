/** The interfaces the core needs from the outside world; adapters implement them, tests fake them. */

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
  /** md5 of the bytes as uploaded, for duplicate detection. */
  sourceMd5: string;
  thumb: EncodedImage;
  medium: EncodedImage;
  exif: Record<string, unknown> | null;
  animated: boolean;
}

export interface ProcessOptions {
  /** Downscale the stored original to this width (keeps the ratio). */
  targetWidth: number | undefined;
}

/** Turns uploaded bytes into what is stored. Throws UploadError for refused input. */
export interface ImageProcessor {
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
  deleteMany(keys: readonly string[]): Promise<void>;
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

export type ImageStatus = 'pending' | 'active';

/** The DynamoDB record of one image. */
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
}

export interface ImageRepository {
  /** A new unique positive id (atomic counter). */
  allocateId(): Promise<number>;
  /** Claims an object key for an image; false when another image holds it already. Claims are never released. */
  claimObjectKey(objectKey: string, imageId: number): Promise<boolean>;
  /** Writes the record of an upload in progress (status pending) with its first delete-token hash. */
  createPending(record: ImageRecord, deleteTokenHash: string): Promise<void>;
  /** Marks a pending record active: the upload is complete. */
  activate(id: number): Promise<void>;
  find(id: number): Promise<ImageRecord | undefined>;
  /** Adds one view to an active record and answers the record after it; undefined when there is none. */
  addView(id: number): Promise<ImageRecord | undefined>;
  remove(id: number): Promise<void>;
}

/** Operator settings kept in SSM Parameter Store. */
export interface SettingsStore {
  /** The API key; undefined when the parameter is missing or empty. */
  apiKey(): Promise<string | undefined>;
  /** The salt of the id codec, created once per deployment. */
  idSalt(): Promise<string>;
}

/** Fetches the bytes behind a URL source. */
export interface SourceFetcher {
  fetch(url: string, maxBytes: number): Promise<{ bytes: Uint8Array; filename: string }>;
}

export interface Clock {
  nowMs(): number;
}

export interface RandomSource {
  /** `chars` random lowercase hex characters. */
  hex(chars: number): string;
}

/** Structured log lines; the Powertools Logger fits this shape. */
export interface Logger {
  info(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  error(message: string, ...extra: Record<string, unknown>[]): void;
}
