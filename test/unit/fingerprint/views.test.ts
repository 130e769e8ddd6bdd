import sharp from 'sharp';
import { pdqDistance } from '../../../functions/core/moderation/pdq-hash';
import { blockedHashesOf, fingerprintOf, type Deadline } from '../../../functions/fingerprint/fingerprint';
import { centredMargins, cropArea, cropWithin } from '../../../functions/fingerprint/margins';
import { hashOf, pdqHash, pdqOf, wholeArea } from '../../../functions/fingerprint/pdq';
import { lumaPictureOf, type PdqPixels } from '../../../functions/fingerprint/planes';
import { BLOCKED_HASHES, PICTURE_QUERIES, queriesOf, UPLOAD_QUERIES, VIEWS } from '../../../functions/fingerprint/views';
import { blockedPictureCopy } from '../../../functions/imaging/fingerprint-copies';
import { makePhoto } from '../../support/images';

const noDeadline: Deadline = { check: () => undefined };

async function pixelsOf(image: sharp.Sharp): Promise<PdqPixels> {
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** A photo with transparency, in a plain border: its own views, on pages and inside the border all say enough. */
async function framedPhoto(): Promise<PdqPixels> {
  const photo = await sharp(await makePhoto(3, 300, 220))
    .ensureAlpha(0.8)
    .png()
    .toBuffer();
  return pixelsOf(sharp(photo).extend({ top: 40, bottom: 40, left: 40, right: 40, background: '#00000000' }));
}

/** The hash of pixels, from their luminance plane. */
const hashOfPixels = (pixels: PdqPixels) => pdqHash(lumaPictureOf(pixels).luma);

describe('the views of a picture', () => {
  it('takes the rectangle inside a margin of the share given on each side, or of different shares, and inside an area', () => {
    expect(cropArea(20, 10, centredMargins(0.1))).toEqual({ left: 2, top: 1, width: 16, height: 8 });
    // 10% of the width off the left, 20% of the height off the bottom, nothing off the top and the right
    expect(cropArea(20, 10, { left: 0.1, top: 0, right: 0, bottom: 0.2 })).toEqual({ left: 2, top: 0, width: 18, height: 8 });
    // a pixel at least, inside the picture, however the shares round on a tiny one
    expect(cropArea(1, 1, { left: 0.5, top: 0.5, right: 0.49, bottom: 0.49 })).toEqual({ left: 0, top: 0, width: 1, height: 1 });
    expect(cropArea(3, 2, { left: 0.6, top: 0.75, right: 0.3, bottom: 0 })).toEqual({ left: 2, top: 1, width: 1, height: 1 });
    // the same crop of an area, where that area is
    expect(cropWithin({ left: 5, top: 7, width: 20, height: 10 }, centredMargins(0.1))).toEqual({
      left: 7,
      top: 8,
      width: 16,
      height: 8,
    });
  });

  it('refuses margins that leave nothing', () => {
    expect(() => cropArea(10, 10, { left: 0.5, top: 0, right: 0.5, bottom: 0 })).toThrow(RangeError);
    expect(() => cropArea(10, 10, { left: 0, top: 0.7, right: 0, bottom: 0.3 })).toThrow(RangeError);
  });

  it('counts the queries of a picture from the table: four own views turned, its crops and the pictures inside it', () => {
    expect([queriesOf('whole'), queriesOf('onPages'), queriesOf('centredCrops'), queriesOf('sideCrops')]).toEqual([8, 16, 3, 12]);
    expect(queriesOf('twoSideCrops')).toBe(0);
    // the washed-out copy takes the whole's place: never both
    expect(PICTURE_QUERIES).toBe(4 * 8 + 3 + 12 + 8);
    expect(UPLOAD_QUERIES).toBe(6 * PICTURE_QUERIES);
    // a blocked picture's crops: 7 centred and 28 from one side turned, 42 from two sides upright; the pictures
    // inside it only when the operator asks
    expect(BLOCKED_HASHES).toBe((7 + 28) * 8 + 42);
    expect(VIEWS.innerPictures.blocked).toMatchObject({ asked: true });
  });

  it.each([1, 2, 3, 4])(
    'hashes an area of a picture of %i channels as its pixels cut out, all from one luminance plane',
    async (channels) => {
      const photo = await makePhoto(11, 384, 288);
      // the photo's RGB as grey (its red), grey and alpha, RGB, or RGB and alpha
      const cutOut = async (left: number, top: number, width: number, height: number) => {
        const rgb = await sharp(photo).extract({ left, top, width, height }).removeAlpha().raw().toBuffer();
        const data = new Uint8Array(width * height * channels);
        for (let at = 0; at < width * height; at += 1) {
          const colour = channels < 3 ? [rgb[at * 3] ?? 0] : [...rgb.subarray(at * 3, at * 3 + 3)];
          // an alpha of its own, which PDQ does not read
          data.set(channels % 2 === 0 ? [...colour, 200 - (at % 100)] : colour, at * channels);
        }
        return { data, width, height, channels };
      };
      const { luma } = lumaPictureOf(await cutOut(0, 0, 384, 288));
      const margins = [...VIEWS.centredCrops.compared.margins, ...VIEWS.sideCrops.compared.margins];
      const areas = [...margins, { left: 0.03, top: 0.08, right: 0, bottom: 0 }].map((one) => cropArea(384, 288, one));
      const together = pdqOf(luma, areas);
      for (const [index, area] of areas.entries()) {
        const alone = hashOfPixels(await cutOut(area.left, area.top, area.width, area.height));
        expect(pdqHash(luma, area)).toEqual(alone);
        expect(together[index] && hashOf(together[index])).toBe(alone.hash);
      }
    },
  );

  it('hashes nothing of a flat picture, and every crop of a detailed one', async () => {
    const flat = { data: new Uint8Array(64 * 64 * 3).fill(200), width: 64, height: 64, channels: 3 };
    expect(await fingerprintOf([flat], noDeadline)).toBeUndefined();
    expect(Object.values(blockedHashesOf(flat)).flat()).toEqual([]);
    const noisy = {
      data: Uint8Array.from({ length: 64 * 64 * 3 }, (_, at) => (at * 7919) % 256),
      width: 64,
      height: 64,
      channels: 3,
    };
    const blocked = blockedHashesOf(noisy);
    expect(blocked.centredCrops?.length).toBeGreaterThanOrEqual(7 * 7);
    expect(blocked.twoSideCrops?.length).toBeGreaterThanOrEqual(40);
  });

  it("makes a still picture's queries one batch, within the table's count", async () => {
    const framed = await framedPhoto();
    const fingerprint = await fingerprintOf([framed], noDeadline);
    expect(fingerprint?.queries).toHaveLength(1);
    expect(fingerprint?.hashes.length).toBeGreaterThanOrEqual(2);
    expect(fingerprint?.queries[0]?.length).toBeGreaterThan(8 * 2 + 15);
    expect(fingerprint?.queries[0]?.length).toBeLessThanOrEqual(PICTURE_QUERIES);
  });

  it('makes only the views the record keeps when nothing is compared: the same hashes, no queries', async () => {
    const framed = await framedPhoto();
    const compared = await fingerprintOf([framed], noDeadline);
    const kept = await fingerprintOf([framed], noDeadline, { compared: false });
    expect(kept).toEqual({ hashes: compared?.hashes, quality: compared?.quality, queries: [] });
    expect(kept?.hashes.length).toBeGreaterThanOrEqual(2);
    // an animation's frames, each as a still picture: the same kept hashes and quality
    const other = await pixelsOf(sharp(await makePhoto(9, 300, 220)));
    const frames = await fingerprintOf([framed, other], noDeadline);
    expect(await fingerprintOf([framed, other], noDeadline, { compared: false })).toEqual({ ...frames, queries: [] });
    expect(frames?.queries).toHaveLength(2);
    // a picture whose own hash says too little is compared by its washed-out copy alone: nothing to keep, nothing made
    const washed = await pixelsOf(
      sharp(await makePhoto(5, 300, 220))
        .linear(0.06, 120)
        .removeAlpha(),
    );
    expect((await fingerprintOf([washed], noDeadline))?.queries[0]?.length).toBeGreaterThan(0);
    expect(await fingerprintOf([washed], noDeadline, { compared: false })).toBeUndefined();
  });

  it('blocks each centred crop of a picture in its eight turned and mirrored forms: a framed copy turned is within reach', async () => {
    const photo = await makePhoto(7, 640, 480);
    const blocked = blockedHashesOf(await blockedPictureCopy(photo)).centredCrops ?? [];
    // seven crops, eight forms each (a form two crops share is kept once)
    expect(blocked.length).toBeGreaterThan(7 * 7);
    // the 6% crop of the photo turned a quarter is within a block's reach, as an upload turned so would hash it
    const turned = lumaPictureOf(await pixelsOf(sharp(photo).rotate(90).resize(288, 384))).luma;
    const crop = pdqHash(turned, cropArea(288, 384, centredMargins(0.06))).hash;
    const nearest = (hashes: string[]) => Math.min(...hashes.map((hash) => pdqDistance(hash, crop)));
    expect(nearest(blocked)).toBeLessThanOrEqual(31);
    // the upright crops alone are far from it
    const upright = lumaPictureOf(await pixelsOf(sharp(photo).resize(384, 288))).luma;
    const uprightCrops = pdqOf(
      upright,
      VIEWS.centredCrops.blocked.margins.map((one) => cropArea(384, 288, one)),
    );
    expect(nearest(uprightCrops.map(hashOf))).toBeGreaterThan(60);
  });

  it('blocks the crops of one side turned, and of an axis and of a corner upright: a copy cut so, turned, is within reach', async () => {
    const photo = await makePhoto(5, 640, 480);
    const byView = blockedHashesOf(await blockedPictureCopy(photo));
    const all = Object.values(byView).flat();
    const centredOnly = byView.centredCrops ?? [];
    // as an upload is compared: its own hash, turned and mirrored the eight ways
    const nearest = async (bytes: Buffer, hashes: string[]): Promise<number> => {
      const { turned } = hashOfPixels(await pixelsOf(sharp(bytes)));
      return Math.min(...hashes.flatMap((hash) => turned.map((one) => pdqDistance(hash, one))));
    };
    const cutLeft = await sharp(photo).extract({ left: 38, top: 0, width: 602, height: 480 }).rotate(90).png().toBuffer();
    const cutCorner = await sharp(photo).extract({ left: 0, top: 43, width: 582, height: 437 }).flop().png().toBuffer();
    for (const cut of [cutLeft, cutCorner]) {
      expect(await nearest(cut, all)).toBeLessThanOrEqual(31);
      expect(await nearest(cut, centredOnly)).toBeGreaterThan(31);
    }
  });

  it('crops a picture inside its plain border: a page around it adds no hash of its layout', async () => {
    const photo = await makePhoto(9, 480, 360);
    const page = await sharp({ create: { width: 1200, height: 900, channels: 3, background: '#ffffff' } })
      .composite([{ input: photo, left: 60, top: 60 }])
      .png()
      .toBuffer();
    const crops = async (bytes: Buffer) => {
      const byView = blockedHashesOf(await blockedPictureCopy(bytes));
      return [...(byView.centredCrops ?? []), ...(byView.sideCrops ?? []), ...(byView.twoSideCrops ?? [])];
    };
    const alone = await crops(photo);
    const onPage = await crops(page);
    expect(onPage.length).toBeGreaterThan(7 * 7);
    // each of them within a block's reach of one of the photo's own
    const nearest = (hash: string) => Math.min(...alone.map((other) => pdqDistance(hash, other)));
    expect(Math.max(...onPage.map(nearest))).toBeLessThanOrEqual(31);
  });

  it('reads every area from the whole plane, not a copy: the whole and its crops in one call', () => {
    const plane = lumaPictureOf({
      data: Uint8Array.from({ length: 96 * 64 * 3 }, (_, at) => (at * 31) % 251),
      width: 96,
      height: 64,
      channels: 3,
    }).luma;
    const areas = [wholeArea(plane), ...VIEWS.sideCrops.compared.margins.map((one) => cropArea(96, 64, one))];
    expect(pdqOf(plane, areas).map(hashOf)).toEqual(areas.map((area) => pdqHash(plane, area).hash));
  });
});
