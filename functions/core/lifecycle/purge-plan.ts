import type { PurgeRequest } from '../ports';

/**
 * Paths one sweep run sends at most (a wildcard counts as one). CloudFront charges per path past 1,000 a month
 * ($0.005) and keeps at most 15 wildcard paths in progress; with runs every 5 minutes, this bounds what deletes and
 * expiries can cost, whoever sends them: 288 runs a day, 1,728 paths ($8.64) at worst (docs/deployment.md).
 */
export const PURGE_PATHS_PER_RUN = 6;

/** The folder above a path: `images/2026/11/23/a.png` -> `images/2026/11/23/` -> `images/2026/11/` -> ... -> ``. */
function parentOf(path: string): string {
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.slice(0, trimmed.lastIndexOf('/') + 1);
}

const depthOf = (folder: string): number => folder.split('/').length;

/**
 * The finest purge of these keys that takes at most `maxPaths` paths: the files one by one while they fit; past that,
 * the deepest folder that holds two or more of them is purged whole instead (a day, then a month, a year, all images),
 * again until they fit. A folder purged whole costs next to nothing more: its other files are fetched from S3 again
 * once per edge.
 */
export function planPurge(keys: readonly string[], maxPaths = PURGE_PATHS_PER_RUN): PurgeRequest {
  let paths = [...new Set(keys)];
  const budget = Math.max(1, maxPaths);
  while (paths.length > budget) {
    const held = new Map<string, number>();
    for (const path of paths)
      for (let folder = parentOf(path); ; folder = parentOf(folder)) {
        held.set(folder, (held.get(folder) ?? 0) + 1);
        if (folder === '') break;
      }
    // there is one: the top folder holds every path
    const [folder] = [...held.entries()]
      .filter(([, count]) => count > 1)
      .sort((a, b) => depthOf(b[0]) - depthOf(a[0]) || b[1] - a[1])[0] as [string, number];
    paths = [...paths.filter((path) => !path.startsWith(folder)), folder];
  }
  return {
    keys: paths.filter((path) => !path.endsWith('/') && path !== ''),
    folders: paths.filter((path) => path.endsWith('/') || path === ''),
  };
}

/** How many CDN paths a purge takes (what it costs). */
export function purgePaths(request: PurgeRequest): number {
  return request.keys.length + request.folders.length;
}
