import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeIncompleteObjects } from '../../../local/s3-repair';

/** An object as s3rver stores it: content, md5, metadata (written in that order); `upTo` stops part way. */
function storeObject(dir: string, name: string, content: string, upTo: 'object' | 'md5' | 'all', md5 = content): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}._S3rver_object`), content);
  if (upTo === 'object') return;
  writeFileSync(join(dir, `${name}._S3rver_object.md5`), createHash('md5').update(md5).digest('hex'));
  if (upTo === 'md5') return;
  writeFileSync(join(dir, `${name}._S3rver_metadata.json`), '{"content-type":"image/png"}');
}

describe('removeIncompleteObjects', () => {
  it('removes objects whose files are not all there or whose content is cut short, and keeps whole ones', () => {
    const root = mkdtempSync(join(tmpdir(), 's3-repair-'));
    const folder = join(root, 'bucket', 'images', '2026', '11', '23');
    storeObject(folder, 'whole.png', 'complete', 'all');
    storeObject(folder, 'no-metadata.png', 'x', 'md5');
    storeObject(folder, 'only-content.png', 'x', 'object');
    storeObject(folder, 'cut-short.png', 'comp', 'all', 'complete');
    writeFileSync(join(folder, 'orphan.png._S3rver_metadata.json'), '{}');
    storeObject(folder, 'half-metadata.png', 'x', 'all');
    writeFileSync(join(folder, 'half-metadata.png._S3rver_metadata.json'), '{"content-ty');
    try {
      expect(removeIncompleteObjects(root).sort()).toEqual(
        ['cut-short.png', 'half-metadata.png', 'no-metadata.png', 'only-content.png', 'orphan.png'].map((name) =>
          join('bucket/images/2026/11/23', name),
        ),
      );
      expect(readdirSync(folder).sort()).toEqual([
        'whole.png._S3rver_metadata.json',
        'whole.png._S3rver_object',
        'whole.png._S3rver_object.md5',
      ]);
      expect(existsSync(root)).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
