import sharp from 'sharp';
import { pdqDistance, pdqHash, pdqLuminance } from '../../../functions/core/moderation/pdq';
import {
  BLOCKED_CROPS,
  BLOCKED_ONE_SIDE_CROPS,
  BLOCKED_TWO_SIDE_CROPS,
  blockedCropHashes,
  centredMargins,
  cropArea,
  cropHashes,
  UPLOAD_CROP_MARGINS,
  UPLOAD_CROPS,
  UPLOAD_SIDE_CROPS,
  uploadCropHash,
} from '../../../functions/imaging/crops';
import { QUERIES_A_TURN } from '../../../functions/core/moderation/moderation';
import { MOST_INNER_PICTURES } from '../../../functions/imaging/inner-pictures';
import { makePhoto } from '../../support/images';

describe('crops', () => {
  it('takes the rectangle inside a margin of the share given on each side, or of different shares', () => {
    expect(cropArea(20, 10, centredMargins(0.1))).toEqual({ left: 2, top: 1, width: 16, height: 8 });
    // 10% of the width off the left, 20% of the height off the bottom, nothing off the top and the right
    expect(cropArea(20, 10, { left: 0.1, top: 0, right: 0, bottom: 0.2 })).toEqual({ left: 2, top: 0, width: 18, height: 8 });
    // a pixel at least, inside the picture, however the shares round on a tiny one
    expect(cropArea(1, 1, { left: 0.5, top: 0.5, right: 0.49, bottom: 0.49 })).toEqual({ left: 0, top: 0, width: 1, height: 1 });
    expect(cropArea(3, 2, { left: 0.6, top: 0.75, right: 0.3, bottom: 0 })).toEqual({ left: 2, top: 1, width: 1, height: 1 });
  });

  it.each([1, 2, 3, 4])(
    'hashes an area of a picture of %i channels as its pixels cut out, read from their luminance made once',
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
      const whole = await cutOut(0, 0, 384, 288);
      const luminance = pdqLuminance(whole);
      for (const margins of [...UPLOAD_CROP_MARGINS, { left: 0.03, top: 0.08, right: 0, bottom: 0 }]) {
        const area = cropArea(384, 288, margins);
        const alone = pdqHash(await cutOut(area.left, area.top, area.width, area.height));
        expect(pdqHash(luminance, area)).toEqual(alone);
        expect(pdqHash(whole, area)).toEqual(alone);
        expect(uploadCropHash(luminance, margins)).toBe(alone.hash);
      }
    },
  );

  it('hashes only crops that say enough of the picture: none of a flat one', () => {
    const flat = { data: new Uint8Array(64 * 64 * 3).fill(200), width: 64, height: 64, channels: 3 };
    expect(cropHashes(flat, BLOCKED_CROPS)).toEqual([]);
    expect(UPLOAD_SIDE_CROPS.map((margins) => uploadCropHash(flat, margins))).toEqual(Array(12).fill(undefined));
    const noisy = {
      data: Uint8Array.from({ length: 64 * 64 * 3 }, (_, at) => (at * 7919) % 256),
      width: 64,
      height: 64,
      channels: 3,
    };
    expect(cropHashes(noisy, UPLOAD_CROPS).map((one) => one.turned.length)).toEqual([8, 8, 8]);
    expect(UPLOAD_SIDE_CROPS.map((margins) => uploadCropHash(noisy, margins)?.length)).toEqual(Array(12).fill(64));
  });

  it("checks a still picture's queries in one turn: four hashes' eight forms, its crops, the pictures inside it", () => {
    expect(UPLOAD_CROP_MARGINS).toHaveLength(UPLOAD_CROPS.length + UPLOAD_SIDE_CROPS.length);
    expect(4 * 8 + UPLOAD_CROP_MARGINS.length + MOST_INNER_PICTURES).toBeLessThanOrEqual(QUERIES_A_TURN);
  });

  it('refuses margins that leave nothing', () => {
    expect(() => cropArea(10, 10, { left: 0.5, top: 0, right: 0.5, bottom: 0 })).toThrow(RangeError);
    expect(() => cropArea(10, 10, { left: 0, top: 0.7, right: 0, bottom: 0.3 })).toThrow(RangeError);
  });

  it('blocks each crop of a picture in its eight turned and mirrored forms: a framed copy turned is within reach', async () => {
    const photo = await makePhoto(7, 640, 480);
    const blocked = await blockedCropHashes(photo);
    // seven centred crops, eight forms each, among them (a form two crops share is kept once)
    const { data, info } = await sharp(photo).resize(384, 288).raw().toBuffer({ resolveWithObject: true });
    const centred = cropHashes({ data, width: 384, height: 288, channels: info.channels }, BLOCKED_CROPS);
    expect(centred).toHaveLength(7);
    expect(blocked).toEqual(expect.arrayContaining(centred.flatMap((one) => one.turned)));
    // the 6% crop of the photo turned a quarter is one of them, as an upload turned so would hash it
    const turned = await sharp(photo).rotate(90).resize(288, 384).raw().toBuffer({ resolveWithObject: true });
    const pixels = { data: turned.data, width: turned.info.width, height: turned.info.height, channels: turned.info.channels };
    const [crop] = cropHashes(pixels, [0.06]);
    const nearest = (hashes: string[]) => Math.min(...hashes.map((hash) => pdqDistance(hash, crop?.hash ?? '')));
    expect(nearest(centred.flatMap((one) => one.turned))).toBeLessThanOrEqual(31);
    // the upright crops alone are far from it
    const upright = await sharp(photo).resize(384, 288).raw().toBuffer({ resolveWithObject: true });
    const uprightPixels = { data: upright.data, width: 384, height: 288, channels: upright.info.channels };
    expect(nearest(cropHashes(uprightPixels, BLOCKED_CROPS).map((one) => one.hash))).toBeGreaterThan(60);
  });

  it('blocks the crops of one side, of an axis and of a corner upright: a copy cut so, turned, is within reach', async () => {
    expect([BLOCKED_ONE_SIDE_CROPS.length, BLOCKED_TWO_SIDE_CROPS.length]).toEqual([28, 42]);
    const photo = await makePhoto(5, 640, 480);
    const blocked = await blockedCropHashes(photo);
    // the centred and one-side crops in their eight forms, the two-side ones upright (a form some share is kept once)
    expect(blocked.length).toBeGreaterThan((7 + 28) * 7 + 40);
    const centredOnly = async (): Promise<string[]> => {
      const { data, info } = await sharp(photo).resize(384, 288).raw().toBuffer({ resolveWithObject: true });
      const pixels = { data, width: 384, height: 288, channels: info.channels };
      return cropHashes(pixels, BLOCKED_CROPS).flatMap((one) => one.turned);
    };
    // as an upload is compared: its own hash, turned and mirrored the eight ways
    const nearest = async (bytes: Buffer, hashes: string[]): Promise<number> => {
      const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
      const { turned } = pdqHash({ data, width: info.width, height: info.height, channels: info.channels });
      return Math.min(...hashes.flatMap((hash) => turned.map((one) => pdqDistance(hash, one))));
    };
    const cutLeft = await sharp(photo).extract({ left: 38, top: 0, width: 602, height: 480 }).rotate(90).png().toBuffer();
    const cutCorner = await sharp(photo).extract({ left: 0, top: 43, width: 582, height: 437 }).flop().png().toBuffer();
    for (const cut of [cutLeft, cutCorner]) {
      expect(await nearest(cut, blocked)).toBeLessThanOrEqual(31);
      expect(await nearest(cut, await centredOnly())).toBeGreaterThan(31);
    }
  });

  it('crops a picture inside its plain border: a page around it adds no hash of its layout', async () => {
    const photo = await makePhoto(9, 480, 360);
    const page = await sharp({ create: { width: 1200, height: 900, channels: 3, background: '#ffffff' } })
      .composite([{ input: photo, left: 60, top: 60 }])
      .png()
      .toBuffer();
    const alone = await blockedCropHashes(photo);
    const onPage = await blockedCropHashes(page);
    expect(onPage.length).toBeGreaterThan(7 * 7);
    // each of them within a block's reach of one of the photo's own
    const nearest = (hash: string) => Math.min(...alone.map((other) => pdqDistance(hash, other)));
    expect(Math.max(...onPage.map(nearest))).toBeLessThanOrEqual(31);
  });
});
