import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import type { Margins } from '../../../functions/fingerprint/margins';
import { INNER_LEAST_SHARE, innerPictures as innerPicturesOfPlane } from '../../../functions/fingerprint/inner-pictures';
import { lumaPictureOf, type PdqPixels } from '../../../functions/fingerprint/planes';
import { MOST_INNER_PICTURES } from '../../../functions/fingerprint/views';
import { inAViewer, laidOn, makeNoise, makePhoto } from '../../support/images';

/** The pictures inside pixels, from their luminance as the fingerprint reads it. */
const innerPictures = (pixels: PdqPixels): Margins[] => innerPicturesOfPlane(lumaPictureOf(pixels).luma);

/** The pixels the detector reads: at most 384 a side, as the fingerprint's copy is made (`FINGERPRINT_SIDE`). */
async function pixelsOf(bytes: Buffer): Promise<PdqPixels> {
  const { data, info } = await sharp(bytes).resize(384, 384, { fit: 'inside' }).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

const noise = (width: number, height: number): Promise<Buffer> => makeNoise(width, height);

/** Pictures laid on a page of `width` x `height` (a colour, or a picture of that size), as a PNG. */
const laid = (...args: Parameters<typeof laidOn>): Promise<Buffer> =>
  laidOn(...args)
    .png()
    .toBuffer();

/** The largest distance, in pixels of the 384 px copy, from each side of `margins` to the same side of `truth`. */
function offBy(margins: Margins, truth: Margins, width: number, height: number): number {
  return Math.max(
    Math.abs(margins.left - truth.left) * width,
    Math.abs(margins.right - truth.right) * width,
    Math.abs(margins.top - truth.top) * height,
    Math.abs(margins.bottom - truth.bottom) * height,
  );
}

/** The found picture nearest the truth, and how far off it is. */
function nearest(found: readonly Margins[], truth: Margins, pixels: PdqPixels): number {
  return Math.min(Infinity, ...found.map((margins) => offBy(margins, truth, pixels.width, pixels.height)));
}

describe('innerPictures', () => {
  it('finds a photo laid off centre on noise, each side within two pixels', async () => {
    const photo = await makePhoto(1, 480, 360);
    const bytes = await laid(await noise(800, 600), 800, 600, [{ input: photo, left: 80, top: 150 }]);
    const pixels = await pixelsOf(bytes);
    const truth = { left: 80 / 800, right: (800 - 560) / 800, top: 150 / 600, bottom: (600 - 510) / 600 };
    expect(nearest(innerPictures(pixels), truth, pixels)).toBeLessThanOrEqual(2);
  });

  it('cuts a picture out a pixel inside each line, where a resize may have blended both sides', async () => {
    // at the detector's own size, nothing resized: the lines are exactly where the photo starts and ends
    const bytes = await laid(await noise(384, 288), 384, 288, [{ input: await makePhoto(8, 240, 160), left: 40, top: 70 }]);
    const pixels = await pixelsOf(bytes);
    const inward = (margins: Margins): number[] => [
      margins.left * 384 - 40,
      margins.right * 384 - 104,
      margins.top * 288 - 70,
      margins.bottom * 288 - 58,
    ];
    const found = innerPictures(pixels).map((margins) => inward(margins).map((px) => Math.round(px * 1000) / 1000));
    expect(found).toContainEqual([1, 1, 1, 1]);
  });

  it('finds a photo laid a third of the height on noise: lines diluted across the whole stand out less', async () => {
    const photo = await makePhoto(9, 480, 200);
    const bytes = await laid(await noise(800, 600), 800, 600, [{ input: photo, left: 200, top: 300 }]);
    const pixels = await pixelsOf(bytes);
    const truth = { left: 200 / 800, right: 120 / 800, top: 300 / 600, bottom: 100 / 600 };
    expect(nearest(innerPictures(pixels), truth, pixels)).toBeLessThanOrEqual(2);
  });

  it('cuts off plain sides of a different shade each, to the very pixel of the picture', async () => {
    const strip = (width: number, height: number, background: string): Promise<Buffer> =>
      sharp({ create: { width, height, channels: 3, background } })
        .png()
        .toBuffer();
    const bytes = await laid('#f0f0f0', 384, 288, [
      { input: await strip(384, 40, '#202020'), left: 0, top: 248 },
      { input: await strip(30, 208, '#a0a0a0'), left: 0, top: 40 },
      { input: await strip(54, 208, '#606060'), left: 330, top: 40 },
      { input: await makePhoto(10, 300, 208), left: 30, top: 40 },
    ]);
    const pixels = await pixelsOf(bytes);
    const truth = { left: 30 / 384, right: 54 / 384, top: 40 / 288, bottom: 40 / 288 };
    expect(nearest(innerPictures(pixels), truth, pixels)).toBe(0);
  });

  it('finds a photo in a frame of noise of a different width on each side, none on one', async () => {
    const photo = await makePhoto(2, 800, 600);
    const bytes = await laid(await noise(920, 640), 920, 640, [{ input: photo, left: 24, top: 40 }]);
    const pixels = await pixelsOf(bytes);
    const truth = { left: 24 / 920, right: 96 / 920, top: 40 / 640, bottom: 0 };
    expect(nearest(innerPictures(pixels), truth, pixels)).toBeLessThanOrEqual(2);
  });

  it('finds a photo shown in a dark viewer under a light toolbar, by its lines or its plain sides', async () => {
    const photo = await makePhoto(3, 720, 540);
    const bytes = await (await inAViewer(photo)).png().toBuffer();
    const pixels = await pixelsOf(bytes);
    const truth = { left: 160 / 1040, right: 160 / 1040, top: 180 / 810, bottom: 90 / 810 };
    expect(nearest(innerPictures(pixels), truth, pixels)).toBeLessThanOrEqual(2);
  });

  it('finds each cell of a 2x2 tile of four photos', async () => {
    const photos = await Promise.all([4, 5, 6, 7].map((seed) => makePhoto(seed, 400, 300)));
    const bytes = await laid(
      '#000000',
      800,
      600,
      photos.map((input, k) => ({ input, left: (k % 2) * 400, top: Math.floor(k / 2) * 300 })),
    );
    const pixels = await pixelsOf(bytes);
    const found = innerPictures(pixels);
    for (const [left, top] of [
      [0, 0],
      [0.5, 0],
      [0, 0.5],
      [0.5, 0.5],
    ] as const)
      expect(nearest(found, { left, top, right: 0.5 - left, bottom: 0.5 - top }, pixels)).toBeLessThanOrEqual(2);
  });

  it('finds no picture inside natural photos, whole or cut', async () => {
    for (const name of ['astronaut.jpg', 'chelsea.jpg', 'coffee.jpg']) {
      const photo = readFileSync(join(__dirname, '../../fixtures/photos', name));
      expect({ name, found: innerPictures(await pixelsOf(photo)) }).toEqual({ name, found: [] });
      const { width = 0, height = 0 } = await sharp(photo).metadata();
      const cut = await sharp(photo)
        .extract({ left: Math.round(width * 0.05), top: 0, width: Math.round(width * 0.9), height })
        .png()
        .toBuffer();
      expect({ name, found: innerPictures(await pixelsOf(cut)) }).toEqual({ name, found: [] });
    }
  });

  it('keeps at most its number of pictures, each of at least its share of each side, never the whole', async () => {
    // grids of 6 x 6 photos (lines everywhere), and of 4 x 4 at the detector's size: cells of just its least share
    const grid = async (cells: number, side: number): Promise<Buffer> => {
      const cell = side / cells;
      const photos = await Promise.all(Array.from({ length: cells * cells }, (_, k) => makePhoto(10 + k, cell, cell)));
      return laid(
        '#000000',
        side,
        side,
        photos.map((input, k) => ({ input, left: (k % cells) * cell, top: Math.floor(k / cells) * cell })),
      );
    };
    const six = innerPictures(await pixelsOf(await grid(6, 600)));
    expect(six.length).toBeGreaterThan(0);
    for (const found of [six, innerPictures(await pixelsOf(await grid(4, 384)))]) {
      expect(found.length).toBeLessThanOrEqual(MOST_INNER_PICTURES);
      for (const margins of found) {
        expect(1 - margins.left - margins.right).toBeGreaterThanOrEqual(INNER_LEAST_SHARE);
        expect(1 - margins.top - margins.bottom).toBeGreaterThanOrEqual(INNER_LEAST_SHARE);
        expect(margins.left + margins.right + margins.top + margins.bottom).toBeGreaterThan(0);
      }
    }
  });

  it('answers nothing for a picture too small to hold one, or flat', async () => {
    expect(innerPictures({ data: new Uint8Array(10 * 10 * 3), width: 10, height: 10, channels: 3 })).toEqual([]);
    expect(innerPictures({ data: new Uint8Array(200 * 100).fill(90), width: 200, height: 100, channels: 1 })).toEqual([]);
  });
});
