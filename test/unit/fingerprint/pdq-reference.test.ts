import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { DIHEDRAL, pdqDistance } from '../../../functions/core/moderation/pdq-hash';
import { pdqHash } from '../../../functions/fingerprint/pdq';
import { lumaPictureOf } from '../../../functions/fingerprint/planes';
import { SharpImageProcessor } from '../../../functions/imaging/sharp-image-processor';
import { SERVICE_IMAGING } from '../../support/images';

/**
 * The port against Meta's reference (`test/fixtures/pdq-reference/`: the eight "bridge" pictures and the hashes the C++
 * reference prints for them), so that hashes made here match imported hash lists: within 10 bits, a third of the
 * match distance, whether hashed from the whole decode or from the service's working copy.
 */
const REFERENCE = join(__dirname, '..', '..', 'fixtures', 'pdq-reference');
const expected = readFileSync(join(REFERENCE, 'expected.txt'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => {
    const [hash = '', quality = '', file = ''] = line.split(',');
    return { hash, quality: Number(quality), file: file.split('/').pop() ?? '' };
  });

describe("PDQ against Meta's reference vectors", () => {
  it('reads the eight reference pictures', () => {
    expect(expected.map(({ file }) => file.replace(/-.*$/, ''))).toEqual(DIHEDRAL.map(() => 'bridge'));
    expect(expected.map(({ file }) => Number(file.split('-')[1]))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it.each(expected)(
    'hashes $file within 10 bits of the reference, whole and as the service does',
    async ({ hash, quality, file }) => {
      const bytes = readFileSync(join(REFERENCE, file));
      const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
      const whole = pdqHash(lumaPictureOf({ data, width: info.width, height: info.height, channels: info.channels }).luma);
      expect(pdqDistance(whole.hash, hash)).toBeLessThanOrEqual(10);
      expect(whole.quality).toBe(quality);
      const processed = await new SharpImageProcessor(SERVICE_IMAGING).process(bytes, { targetWidth: undefined });
      expect(pdqDistance(processed.perceptual?.hashes[0] ?? '', hash)).toBeLessThanOrEqual(10);
    },
  );

  it("turns the original's hash into each of the other seven's, well within the match distance of theirs", async () => {
    const bytes = readFileSync(join(REFERENCE, expected[0]?.file ?? ''));
    const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
    const { turned } = pdqHash(lumaPictureOf({ data, width: info.width, height: info.height, channels: info.channels }).luma);
    // what an upload is compared by: its own hash turned, against a list's hash of the turned file (6 to 14 bits
    // measured, each file's JPEG decoded apart; the block's distance is 31)
    expected.forEach(({ hash }, index) => expect(pdqDistance(turned[index] ?? '', hash)).toBeLessThanOrEqual(16));
  });
});
