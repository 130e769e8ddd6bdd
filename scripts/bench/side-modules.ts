import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * A module of a checkout of the project at `root` (this one, or another for a side-by-side run), by the first of its
 * paths that the checkout has: tsx loads its TypeScript, and it resolves that checkout's own packages.
 */
export async function fromRoot<T>(root: string, ...candidates: string[]): Promise<T> {
  const found = candidates.map((path) => join(root, `${path}.ts`)).find((path) => existsSync(path));
  if (!found) throw new Error(`${root} has none of ${candidates.join(', ')}`);
  return (await import(pathToFileURL(found).href)) as T;
}
