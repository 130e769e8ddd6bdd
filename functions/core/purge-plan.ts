/** What a CDN purge removes: single stored files, and whole folders (everything under them). */
export interface PurgeRequest {
  keys: string[];
  folders: string[];
}

/**
 * CloudFront charges per invalidation path (a folder's `/*` counts as one) and keeps at most 3,000 paths, and at
 * most 15 wildcard paths, in progress per distribution. A folder whose removed files would take at least this many
 * paths is purged whole instead: its other files are fetched from S3 again once per edge, which costs next to nothing.
 */
export const FOLDER_PURGE_MIN_KEYS = 30;
/** Wildcards per request: room under the 15 in progress for a run that overlaps the previous one's. */
export const MAX_FOLDER_PURGES = 7;

/** The cheapest purge of these keys: folders with many of them whole, the rest one by one. */
export function planPurge(keys: readonly string[]): PurgeRequest {
  const byFolder = new Map<string, string[]>();
  for (const key of new Set(keys)) {
    const folder = key.slice(0, key.lastIndexOf('/') + 1);
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), key]);
  }
  const crowded = [...byFolder.entries()]
    .filter(([folder, inFolder]) => folder !== '' && inFolder.length >= FOLDER_PURGE_MIN_KEYS)
    .sort((a, b) => b[1].length - a[1].length)
    .slice(0, MAX_FOLDER_PURGES);
  const folders = new Set(crowded.map(([folder]) => folder));
  return {
    folders: [...folders],
    keys: [...byFolder.entries()].filter(([folder]) => !folders.has(folder)).flatMap(([, inFolder]) => inFolder),
  };
}

/** How many CDN paths a purge takes (what it costs). */
export function purgePaths(request: PurgeRequest): number {
  return request.keys.length + request.folders.length;
}
