import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { ServiceError } from '../../../functions/core/errors';
import { pdqOf, type PdqArea } from '../../../functions/fingerprint/pdq';
import type { Plane } from '../../../functions/fingerprint/planes';
import { FINGERPRINT_SIDE, queriesOf } from '../../../functions/fingerprint/views';
import type { ClassifierPixels, PictureClassifier } from '../../../functions/imaging/nsfw-classifier';
import { SharpImageProcessor, thumbFrames, type ImagingSettings } from '../../../functions/imaging/sharp-image-processor';
import { MAX_SIDE_RATIO } from '../../../functions/imaging/probe';
import { jpegScanCount } from '../../../functions/imaging/containers/jpeg';
import { countTurns } from '../../support/turns';
import { makeMonochromeBmp, makePhoto, SERVICE_IMAGING } from '../../support/images';
import { everyCoefficientRefinedJpeg, gifWithHugeScreen, uncompressedAnimatedGif } from '../../support/expensive-images';

// the fingerprint's hashes as they are, their calls kept
jest.mock('../../../functions/fingerprint/pdq', () => {
  const actual: typeof import('../../../functions/fingerprint/pdq') = jest.requireActual('../../../functions/fingerprint/pdq');
  return { ...actual, pdqOf: jest.fn(actual.pdqOf) };
});

/** The crops an upload compares, hashed together in one turn: the most areas one turn hashes. */
const CROPS_AT_ONCE = queriesOf('centredCrops') + queriesOf('sideCrops');

/**
 * The corpus of small images that are expensive to decode, each refused (413, code 615, a message naming the reason)
 * before it can cost what it would, or kept to the size a browser really gives it.
 */
const SETTINGS: ImagingSettings = SERVICE_IMAGING;

async function refusal(processor: SharpImageProcessor, input: Uint8Array): Promise<ServiceError> {
  const error: unknown = await processor.process(input, { targetWidth: undefined }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof ServiceError)) throw new Error(`not refused with an ServiceError: ${String(error)}`);
  return error;
}

describe('small but expensive images', () => {
  const processor = new SharpImageProcessor(SETTINGS);

  it('refuses a progressive JPEG with a scan for every coefficient and bit (883 scans) before decoding it', async () => {
    // 64 KB that take seconds to decode at 4000x4000, and tens of seconds at 10000x10000
    const jpeg = everyCoefficientRefinedJpeg(4000, 4000);
    expect(jpeg.length).toBeLessThan(70_000);
    expect(jpegScanCount(jpeg)).toBe(883);
    const error = await refusal(processor, jpeg);
    expect([error.kind, error.message]).toEqual(['ImageTooLarge', 'Image too complex - max 100 JPEG scans']);
  });

  it('takes a progressive JPEG of up to 100 scans, and the progressive JPEGs encoders write', async () => {
    const ninetyNine = everyCoefficientRefinedJpeg(640, 480, 7);
    expect(jpegScanCount(ninetyNine)).toBe(99);
    expect((await processor.process(ninetyNine, { targetWidth: undefined })).original.width).toBe(640);
    const encoded = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#123456' } })
      .jpeg({ progressive: true })
      .toBuffer();
    expect(jpegScanCount(encoded)).toBeLessThanOrEqual(12);
    expect((await processor.process(encoded, { targetWidth: undefined })).original.width).toBe(800);
  });

  it('stores a GIF whose logical screen is huge around a tiny frame with the screen of its frame, and says so', async () => {
    const gif = gifWithHugeScreen(20000, 20000);
    expect(gif.length).toBeLessThan(70);
    const processed = await processor.process(gif, { targetWidth: undefined });
    expect([processed.original.width, processed.original.height]).toEqual([1, 1]);
    // the size browsers read: the logical screen of the stored file
    const stored = Buffer.from(processed.original.bytes);
    expect([stored.readUInt16LE(6), stored.readUInt16LE(8)]).toEqual([1, 1]);
    expect((await sharp(stored).metadata()).width).toBe(1);
  });

  it('refuses a HEIC over its own pixel limit, which is lower than other formats', async () => {
    const heic = readFileSync(join(__dirname, '..', '..', 'fixtures', 'gradient.heic')); // 96x64
    const error = await refusal(new SharpImageProcessor({ ...SETTINGS, maxHeicPixels: 6000 }), heic);
    expect([error.kind, error.message]).toEqual(['ImageTooLarge', 'HEIC image too large - max 0.006 megapixels']);
  });

  it('stops the imaging of an upload that takes longer than its time limit, answering 413 rather than timing out', async () => {
    // an animation within every limit (18 MP in all) whose renditions take seconds: 150 frames to quantise
    const gif = uncompressedAnimatedGif(400, 300, 150);
    const error = await refusal(new SharpImageProcessor({ ...SETTINGS, timeLimitSeconds: 1 }), gif);
    expect([error.kind, error.message]).toEqual(['ImageTooLarge', 'Image too complex - not processed within 1 s']);
  });

  it('answers 413 when a pipeline stopped at the time limit says something other than the timeout', async () => {
    // libvips keeps one buffer of errors for every pipeline: of several stopped at once (an upload's renditions, or
    // other uploads'), some say "Unknown error" or that a write failed rather than the timeout (a third of nine at
    // once, on this machine). Pipelines fail so here once the time is spent, and, as a broken file's do, before it
    const photo = await makePhoto(3, 64, 48);
    const limited = new SharpImageProcessor({ ...SETTINGS, timeLimitSeconds: 1 });
    const failingAfter = (ms: number) => () =>
      new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error('wbuffer_write: write failed')), ms));
    const toBuffer = jest.spyOn(sharp.prototype as sharp.Sharp, 'toBuffer');
    try {
      toBuffer.mockImplementation(failingAfter(1_100));
      const late = await refusal(limited, photo);
      expect([late.kind, late.message]).toEqual(['ImageTooLarge', 'Image too complex - not processed within 1 s']);
      toBuffer.mockImplementation(failingAfter(0));
      expect((await refusal(limited, photo)).kind).toBe('UnsupportedFormat');
    } finally {
      toBuffer.mockRestore();
    }
  });

  it('ends the imaging with the flood refusal when the slot is refused meanwhile: a decode, or an animation unstarted', async () => {
    const flooding = new ServiceError('Flooding', 'Flooding detected. You can only upload 1 image per month');
    const processor = new SharpImageProcessor(SETTINGS);
    /** The refusal's message, or what came instead (a diff of a whole processed image would fill the heap). */
    const outcome = (input: Uint8Array, refusedAfterMs: number): Promise<string> =>
      processor
        .process(input, {
          targetWidth: undefined,
          cleared: new Promise<never>((_resolve, reject) => setTimeout(() => reject(flooding), refusedAfterMs)),
        })
        .then(
          () => 'processed',
          (error: unknown) => (error === flooding ? 'refused' : String(error)),
        );
    // 100 MP of BMP: seconds of decoding in its worker, ended when the refusal comes
    expect(await outcome(makeMonochromeBmp(10_000, 10_000), 100)).toBe('refused');
    expect(await outcome(uncompressedAnimatedGif(400, 300, 150), 0)).toBe('refused');
  });

  it('stops a BMP whose decoding outlasts the time limit, this thread turning meanwhile', async () => {
    // 100 MP in 12.5 MB: bmp-ts took 2.3 s of the request's thread before it ran in a worker
    const bmp = makeMonochromeBmp(10_000, 10_000);
    // the longest this thread went without a turn: the decode on it took 1.2 to 2.3 s, in a worker it takes none of it
    // (a gap is a busy machine's, not the decode's: 169 ms once, in a full run of the suites on two cores; so it is
    // held well under the decode's time, not to a count of turns)
    let last = performance.now();
    let longestGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 1);
    const error = await refusal(new SharpImageProcessor({ ...SETTINGS, timeLimitSeconds: 0.2 }), bmp).finally(() =>
      clearInterval(timer),
    );
    expect([error.kind, error.message]).toEqual(['ImageTooLarge', 'Image too complex - not processed within 0.2 s']);
    expect(longestGap).toBeLessThan(500);
  });
});

describe('thin and tall pictures', () => {
  const png = (width: number, height: number): Promise<Buffer> =>
    sharp({ create: { width, height, channels: 3, background: '#336699' } })
      .png()
      .toBuffer();

  it.each([
    [1, 1_000_000],
    [1_000_000, 1],
    [1, 101],
    [10_100, 100],
  ])('refuses %ix%i, sides further apart than 100:1, before decoding it (400, code 614)', async (width, height) => {
    const error = await refusal(new SharpImageProcessor(SETTINGS), await png(width, height));
    expect([error.kind, error.message]).toEqual(['ImageTooThin', `Image too thin - sides at most ${MAX_SIDE_RATIO}:1`]);
  });

  it('refuses a width that would make the stored picture thinner than 100:1 (10000x100 at width 149 is 149x1)', async () => {
    const error: unknown = await new SharpImageProcessor(SETTINGS)
      .process(await png(10_000, 100), { targetWidth: 149 })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: 'ImageTooThin' });
  });

  it('refuses a GIF whose 1x10000 frame hides behind a 100x100 screen, without blowing it up to the screen', async () => {
    const gif = Buffer.from(
      await sharp({ create: { width: 1, height: 10_000, channels: 3, background: '#446688' } })
        .gif()
        .toBuffer(),
    );
    gif.writeUInt16LE(100, 6);
    gif.writeUInt16LE(100, 8);
    const started = performance.now();
    const error = await refusal(new SharpImageProcessor(SETTINGS), gif);
    expect(error.kind).toBe('ImageTooThin');
    // blown up to the screen's width, its working copy was 100 x 1,000,000 pixels: seconds
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('refuses an animation whose frames its thumb would enlarge past the pixel limit (10 frames of 100x10000)', async () => {
    // 10 MP in all, but each frame enlarged 3.2 times a side to cover the 320 px thumb: 102 MP (99 such frames took 21 s)
    const frames = 10;
    const frameBytes = 100 * 10_000 * 4;
    const all = Buffer.alloc(frameBytes * frames);
    for (let frame = 0; frame < frames; frame += 1) all.fill(20 * frame, frame * frameBytes, (frame + 1) * frameBytes);
    const webp = await sharp(all, { raw: { width: 100, height: 10_000 * frames, channels: 4, pageHeight: 10_000 } })
      .webp({ loop: 0, quality: 50, effort: 0 })
      .toBuffer();
    expect((await sharp(webp).metadata()).pages).toBe(frames);
    const error = await refusal(new SharpImageProcessor(SETTINGS), webp);
    expect([error.kind, error.message]).toEqual(['ImageTooLarge', 'Image too large - max 100 megapixels']);
  }, 30_000);

  it("enlarges a small animation's thumb to fill its square from its first frames only, as many as its pixels allow", async () => {
    const frames = 12;
    const raw = Buffer.alloc(64 * 64 * 3 * frames);
    for (let index = 0; index < raw.length; index += 1) raw[index] = (index * 7919) % 251;
    const gif = await sharp(raw, { raw: { width: 64, height: 64 * frames, channels: 3, pageHeight: 64 } })
      .gif()
      .toBuffer();
    const processed = await new SharpImageProcessor(SETTINGS).process(gif, { targetWidth: undefined });
    expect([processed.thumb.width, processed.thumb.height]).toEqual([320, 320]);
    // 12 frames enlarged would be 1.2 MP: a megapixel is 9 of them; the stored animation keeps all 12
    expect((await sharp(processed.thumb.bytes, { animated: true }).metadata()).pages).toBe(thumbFrames(frames, 64 * 64, 320));
    expect(thumbFrames(frames, 64 * 64, 320)).toBe(9);
    expect((await sharp(processed.original.bytes, { animated: true }).metadata()).pages).toBe(frames);
    // frames that are not enlarged are all kept
    expect(thumbFrames(300, 500 * 400, 320)).toBe(300);
  });

  it.each([
    [100, 10_000],
    [10_000, 100],
    [20, 2_000],
  ])('takes %ix%i, and hashes and classifies it from a bounded copy', async (width, height) => {
    const handed: ClassifierPixels[] = [];
    const classifier: PictureClassifier = {
      score: (pixels) => (handed.push(pixels), Promise.resolve({ score: 0, runMs: 0 })),
    };
    const hashing = jest.mocked(pdqOf);
    hashing.mockClear();
    {
      const processed = await new SharpImageProcessor(SETTINGS, classifier).process(await makePhoto(5, width, height), {
        targetWidth: undefined,
      });
      expect([processed.original.width, processed.original.height]).toEqual([width, height]);
      expect([processed.thumb.width, processed.thumb.height]).toEqual([320, 320]);
      await processed.nsfwScoring;
      expect(processed.perceptual?.hashes.length).toBeGreaterThan(0);
      // the hashes read at most FINGERPRINT_SIDE a side, the classifier's worker at most 2048
      expect(hashing).toHaveBeenCalled();
      for (const [plane] of hashing.mock.calls) {
        expect(Math.max(plane.width, plane.height)).toBeLessThanOrEqual(FINGERPRINT_SIDE);
      }
      expect(handed).toHaveLength(1);
      expect(Math.max(handed[0]?.width ?? Infinity, handed[0]?.height ?? Infinity)).toBeLessThanOrEqual(2048);
    }
  });
});

describe("the hashes on the request's thread", () => {
  /**
   * Runs an upload's imaging; each hashed area's side, and the most areas hashed in one turn of the event loop (but
   * those of the small copies an animation's frames are told apart by).
   */
  async function hashesByTurn(input: Buffer): Promise<{ sides: number[]; planes: number[]; mostInOneTurn: number }> {
    const actual = jest.requireActual<typeof import('../../../functions/fingerprint/pdq')>('../../../functions/fingerprint/pdq');
    const counting = countTurns();
    const turns: number[] = [];
    const sides: number[] = [];
    const planes: number[] = [];
    jest.mocked(pdqOf).mockImplementation((plane: Plane, areas: readonly PdqArea[]) => {
      planes.push(Math.max(plane.width, plane.height));
      for (const area of areas) {
        const side = Math.max(area.width, area.height);
        // the small copies an animation's frames are told apart by (64 px, a fraction of a ms each) go many to a turn
        if (side > 64) turns.push(counting.turn());
        sides.push(side);
      }
      return actual.pdqOf(plane, areas);
    });
    try {
      const processed = await new SharpImageProcessor(SETTINGS).process(input, { targetWidth: undefined });
      expect(processed.perceptual?.queries.flat().length).toBeGreaterThan(8);
    } finally {
      counting.stop();
      jest.mocked(pdqOf).mockImplementation(actual.pdqOf);
    }
    const counts = new Map<number, number>();
    for (const at of turns) counts.set(at, (counts.get(at) ?? 0) + 1);
    return { sides, planes, mostInOneTurn: Math.max(...counts.values()) };
  }

  /** `frames` frames of 1,200 x 900 pixels of noise with transparency inside a white border, as an animated WebP. */
  async function bigAnimation(frames: number): Promise<Buffer> {
    const [width, height] = [1200, 900];
    const data = Buffer.alloc(width * height * frames * 4, 255);
    for (let at = 0; at < data.length; at += 4) {
      const x = (at / 4) % width;
      const y = Math.floor(at / 4 / width) % height;
      if (x < 60 || x >= width - 60 || y < 60 || y >= height - 60) continue;
      const frame = Math.floor(at / 4 / width / height);
      // checks of a size of each frame's own, under noise: a different picture each
      data[at] = (((x >> (4 + frame)) ^ (y >> (4 + frame))) & 1) * 192 + ((x * 7 + y * 13 + at) & 63);
      data[at + 1] = (x * y * (frame + 1)) & 255;
      data[at + 3] = (x + y) & 255;
    }
    return sharp(data, { raw: { width, height: height * frames, channels: 4, pageHeight: height } })
      .webp({ loop: 0, delay: Array<number>(frames).fill(500), lossless: true, effort: 0 })
      .toBuffer();
  }

  it('hashes an animation from frames of at most FINGERPRINT_SIDE a side, its crops at most in one turn', async () => {
    // a frame makes its own hash, its inside's, its two pages' and its crops': made in one go, and the frames'
    // together, they held the thread for all of them
    const { sides, planes, mostInOneTurn } = await hashesByTurn(await bigAnimation(3));
    // two of its frames are hashed (the third is told apart from neither), 4 hashes and the crops' each
    expect(sides.filter((side) => side > 64).length).toBeGreaterThanOrEqual(2 * (4 + CROPS_AT_ONCE));
    expect(Math.max(...planes)).toBeLessThanOrEqual(FINGERPRINT_SIDE);
    expect(mostInOneTurn).toBe(CROPS_AT_ONCE);
  }, 30_000);

  it('hashes a still picture its crops at most in one turn', async () => {
    const still = await sharp(await bigAnimation(1))
      .png()
      .toBuffer();
    const { sides, planes, mostInOneTurn } = await hashesByTurn(still);
    // its own, inside its border's, its two pages' and its crops'
    expect(sides.length).toBeGreaterThanOrEqual(4 + CROPS_AT_ONCE);
    expect(Math.max(...planes)).toBeLessThanOrEqual(FINGERPRINT_SIDE);
    expect(mostInOneTurn).toBe(CROPS_AT_ONCE);
  }, 30_000);
});
