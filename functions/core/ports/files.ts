/** The files: objects as stored and as staged, the CDN's caches, and single-use tokens. */

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

/** What a CDN purge removes: single stored files, and whole folders (everything under them). */
export interface PurgeRequest {
  keys: string[];
  folders: string[];
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
