import sharp from 'sharp';
import { DIHEDRAL, isPdqHash, pdqDistance, turnedOfHash } from '../../../functions/core/moderation/pdq-hash';
import { hashOf, pdqCells, pdqHash as hashOfPlane, pdqOf, wholeArea } from '../../../functions/fingerprint/pdq';
import { lumaPictureOf, type PdqPixels } from '../../../functions/fingerprint/planes';
import { makePhoto } from '../../support/images';
import { pdqCellsOfPlanes } from '../../support/pdq-planes';

async function pixelsOf(image: sharp.Sharp): Promise<PdqPixels> {
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

function withAlpha(colour: Uint8Array, samples: number): Uint8Array {
  const data = Buffer.alloc((colour.length / samples) * (samples + 1), 128);
  for (let pixel = 0; pixel < colour.length / samples; pixel += 1) {
    data.set(colour.subarray(pixel * samples, (pixel + 1) * samples), pixel * (samples + 1));
  }
  return data;
}

/** The hash of pixels, from their luminance plane. */
const pdqHash = (pixels: PdqPixels) => hashOfPlane(lumaPictureOf(pixels).luma);

describe('PDQ', () => {
  let photo: Buffer;
  let hash: ReturnType<typeof pdqHash>;

  beforeAll(async () => {
    photo = await sharp(await makePhoto(21))
      .resize({ width: 500 })
      .toBuffer();
    hash = pdqHash(await pixelsOf(sharp(photo)));
  });

  it('makes 64 hex digits, half of the bits set (above the median), and a quality', () => {
    expect(isPdqHash(hash.hash)).toBe(true);
    const set = [...hash.hash].reduce(
      (bits, digit) => bits + [...Number.parseInt(digit, 16).toString(2)].filter((b) => b === '1').length,
      0,
    );
    expect(set).toBe(128);
    expect(hash.quality).toBe(100);
    expect(hash.turned[0]).toBe(hash.hash);
    expect(hash.turned).toHaveLength(8);
  });

  it('makes the same hash and quality as it is, without the turned forms, and areas sharing their columns alike', async () => {
    const whole = await pixelsOf(sharp(photo));
    const strip = await pixelsOf(sharp(photo).extract({ left: 0, top: 0, width: 500, height: 40 }));
    for (const picture of [whole, strip]) {
      const full = pdqHash(picture);
      const { luma } = lumaPictureOf(picture);
      const [outcome] = pdqOf(luma, [wholeArea(luma)]);
      expect(outcome && { hash: hashOf(outcome), quality: outcome.quality }).toEqual({ hash: full.hash, quality: full.quality });
    }
    // the top rows, read in one pass with the whole: the same as hashed alone
    const { luma } = lumaPictureOf(whole);
    const top = { left: 0, top: 0, width: 500, height: 40 };
    const [, together] = pdqOf(luma, [wholeArea(luma), top]);
    expect(together && hashOf(together)).toBe(pdqHash(strip).hash);
  });

  it('counts the bits two hashes differ in', () => {
    expect(pdqDistance(hash.hash, hash.hash)).toBe(0);
    const flipped = [...hash.hash].map((digit) => (15 - Number.parseInt(digit, 16)).toString(16)).join('');
    expect(pdqDistance(hash.hash, flipped)).toBe(256);
    expect(pdqDistance('0'.repeat(63) + '7', '0'.repeat(64))).toBe(3);
    expect(pdqDistance(`8${'0'.repeat(63)}`, '0'.repeat(64))).toBe(1);
  });

  it.each([
    ['turned 90° clockwise', (image: sharp.Sharp) => image.rotate(90), 'rotate270'],
    ['turned 180°', (image: sharp.Sharp) => image.rotate(180), 'rotate180'],
    ['turned 90° anticlockwise', (image: sharp.Sharp) => image.rotate(270), 'rotate90'],
    ['mirrored left to right', (image: sharp.Sharp) => image.flop(), 'flipY'],
    ['mirrored top to bottom', (image: sharp.Sharp) => image.flip(), 'flipX'],
    ['transposed', (image: sharp.Sharp) => image.rotate(90).flip(), 'flipPlus1'],
    ['transversed', (image: sharp.Sharp) => image.rotate(90).flop(), 'flipMinus1'],
  ])('foresees the hash of the picture %s among its turned hashes', async (_name, turn, way) => {
    const actual = pdqHash(await pixelsOf(turn(sharp(photo)))).hash;
    const foreseen = hash.turned[DIHEDRAL.indexOf(way as (typeof DIHEDRAL)[number])] ?? '';
    const distances = hash.turned.map((turned) => pdqDistance(actual, turned));
    // the foreseen one is near (the 64x64 sampling is not quite symmetric), every other way far
    expect(pdqDistance(actual, foreseen)).toBeLessThanOrEqual(20);
    expect(Math.min(...distances)).toBe(pdqDistance(actual, foreseen));
    expect(distances.filter((distance) => distance <= 40)).toHaveLength(1);
  });

  it("turns a stored hash from its bits alone, near the forms made from the picture's coefficients", () => {
    const approximate = turnedOfHash(hash.hash);
    expect(approximate[0]).toBe(hash.hash);
    approximate.forEach((form, way) => expect(pdqDistance(form, hash.turned[way] ?? '')).toBeLessThanOrEqual(24));
  });

  it('keeps a picture near itself re-encoded or resized, and different pictures far apart', async () => {
    const smaller = pdqHash(await pixelsOf(sharp(photo).resize({ width: 320 }).jpeg({ quality: 60 })));
    expect(pdqDistance(hash.hash, smaller.hash)).toBeLessThanOrEqual(16);
    for (const seed of [22, 23, 24]) {
      const other = pdqHash(await pixelsOf(sharp(await makePhoto(seed)).resize({ width: 500 })));
      expect(pdqDistance(hash.hash, other.hash)).toBeGreaterThan(80);
    }
  });

  it('hashes grey pictures by their one channel, and a flat picture with quality 0', async () => {
    const grey = pdqHash(await pixelsOf(sharp(photo).grayscale()));
    expect(pdqDistance(hash.hash, grey.hash)).toBeLessThanOrEqual(16);
    const flat = pdqHash({ data: Buffer.alloc(100 * 80 * 3, 90), width: 100, height: 80, channels: 3 });
    expect(flat.quality).toBe(0);
  });

  it.each([
    [500, 375, 3],
    [569, 320, 4],
    [1000, 750, 3],
    [97, 73, 1],
    [64, 48, 2],
    [20, 15, 3],
    [3, 200, 3],
    [1, 1, 3],
  ])('samples a %ix%i picture of %i channels as the whole blurred plane does', async (width, height, channels) => {
    const resized = sharp(photo).resize(width, height, { fit: 'fill' });
    const colour = await pixelsOf(channels <= 2 ? resized.grayscale() : resized);
    // alpha, half opaque, after each pixel's colour (the hash does not look at it)
    const pixels = channels % 2 === 0 ? { ...colour, data: withAlpha(colour.data, channels - 1), channels } : colour;
    const fast = pdqCells(lumaPictureOf(pixels).luma);
    const planes = pdqCellsOfPlanes(pixels);
    // the planes are 32-bit floats: the same values to their rounding
    const furthest = Math.max(...fast.map((value, at) => Math.abs(value - (planes[at] ?? Number.NaN))));
    expect(furthest).toBeLessThan(1e-3);
    expect(new Set(fast).size).toBeGreaterThan(width * height > 64 ? 100 : 0);
  });
});
