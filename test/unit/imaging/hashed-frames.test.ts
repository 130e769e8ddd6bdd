import sharp from 'sharp';
import { Budget } from '../../../functions/imaging/budget';
import { HASHED_FRAMES } from '../../../functions/fingerprint/views';
import { hashedFrames } from '../../../functions/imaging/fingerprint-copies';
import { probeOf } from '../../../functions/imaging/probe';
import { makePhoto, SERVICE_IMAGING } from '../../support/images';

/** An animated WebP of these frames (each a photo's seed and a brightness step) and delays. */
async function animation(frames: Array<[seed: number, step: number]>, delays: number[]): Promise<Buffer> {
  const raws = await Promise.all(
    frames.map(async ([seed, step]) =>
      sharp(await makePhoto(seed, 160, 120))
        .linear(1, step)
        .ensureAlpha()
        .raw()
        .toBuffer(),
    ),
  );
  return sharp(Buffer.concat(raws), { raw: { width: 160, height: 120 * frames.length, channels: 4, pageHeight: 120 } })
    .webp({ loop: 0, delay: delays, lossless: true })
    .toBuffer();
}

describe('hashedFrames', () => {
  it('takes a frame of each distinct picture, those shown longest in all, however their frames are spread', async () => {
    // picture 1 in frames 1, 4 and 7 (100 ms each, 300 in all, each a little brighter); six others, 200 ms each
    const frames: Array<[number, number]> = [
      [2, 0],
      [1, 0],
      [3, 0],
      [4, 0],
      [1, 6],
      [5, 0],
      [6, 0],
      [1, 12],
      [7, 0],
    ];
    const delays = [200, 100, 200, 200, 100, 200, 200, 100, 200];
    const bytes = await animation(frames, delays);
    const probe = await probeOf(bytes, SERVICE_IMAGING);
    expect(probe.frames).toBe(9);
    // picture 1 by its first frame, and five of the six others (the first ones: they are shown alike)
    expect(HASHED_FRAMES).toBe(6);
    expect(await hashedFrames(bytes, probe, new Budget(10))).toEqual([0, 1, 2, 3, 5, 6]);
  });

  it('takes each picture once however many frames show it, and its longest-shown frame', async () => {
    const bytes = await animation(
      [
        [1, 0],
        [1, 4],
        [2, 0],
        [1, 8],
      ],
      [100, 300, 100, 100],
    );
    expect(await hashedFrames(bytes, await probeOf(bytes, SERVICE_IMAGING), new Budget(10))).toEqual([1, 2]);
  });
});
