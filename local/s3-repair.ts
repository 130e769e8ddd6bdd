import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const OBJECT = '._S3rver_object';
const MD5 = '._S3rver_object.md5';
const METADATA = '._S3rver_metadata.json';

/**
 * Removes the objects s3rver was writing when its process died: s3rver writes an object's content, then its md5, then
 * its metadata last, and answers only then, so an object whose three files are not all there, whose content does not
 * match its md5, or whose metadata does not parse, was never acknowledged. s3rver would answer 500 to any listing of its bucket (HeadBucket included)
 * while one is there. Answers the keys it removed (relative to the folder).
 */
export function removeIncompleteObjects(s3Dir: string): string[] {
  const removed: string[] = [];
  const walk = (dir: string): void => {
    const names = readdirSync(dir, { withFileTypes: true });
    const bases = new Set<string>();
    for (const entry of names) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else
        for (const suffix of [OBJECT, MD5, METADATA])
          if (entry.name.endsWith(suffix)) bases.add(entry.name.slice(0, -suffix.length));
    }
    for (const base of bases) {
      const path = join(dir, base);
      if (isComplete(path)) continue;
      for (const suffix of [OBJECT, MD5, METADATA]) rmSync(`${path}${suffix}`, { force: true });
      removed.push(path.slice(s3Dir.length + 1));
    }
  };
  if (existsSync(s3Dir)) walk(s3Dir);
  return removed;
}

function isComplete(path: string): boolean {
  if (!existsSync(`${path}${OBJECT}`) || !existsSync(`${path}${MD5}`) || !existsSync(`${path}${METADATA}`)) return false;
  const md5 = createHash('md5')
    .update(readFileSync(`${path}${OBJECT}`))
    .digest('hex');
  if (md5 !== readFileSync(`${path}${MD5}`, 'utf8').trim()) return false;
  // the metadata is written last, and not atomically: cut short, it does not parse
  try {
    JSON.parse(readFileSync(`${path}${METADATA}`, 'utf8'));
    return true;
  } catch {
    return false;
  }
}
