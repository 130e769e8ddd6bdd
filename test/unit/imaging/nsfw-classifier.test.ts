import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import { DependencyError } from '../../../functions/core/errors';
import type { NsfwScore } from '../../../functions/core/ports';
import { pdqOf } from '../../../functions/fingerprint/pdq';
import {
  CLASSIFIER_SIDE,
  type ClassifierPixels,
  ClassifierTimeout,
  loadNsfwClassifier,
  MAX_CLASSIFIER_PIXELS,
  MAX_CLASSIFIER_SIDE,
  OnnxNsfwClassifier,
  type PictureClassifier,
} from '../../../functions/imaging/nsfw-classifier';
import { SharpImageProcessor } from '../../../functions/imaging/sharp-image-processor';
import { squeezeForClassifier } from '../../../functions/imaging/classifier-squeeze';
import { SCORED_FRAMES, scoredFrames } from '../../../functions/imaging/classifier-input';
import {
  makeAnimated,
  makeBmp,
  makeCmykJpeg,
  makeGreyPng,
  makeJpeg,
  makePhoto,
  makePng,
  SMALL_IMAGING,
} from '../../support/images';

// the fingerprint's hashes as they are, their calls counted
jest.mock('../../../functions/fingerprint/pdq', () => {
  const actual: typeof import('../../../functions/fingerprint/pdq') = jest.requireActual('../../../functions/fingerprint/pdq');
  return { ...actual, pdqOf: jest.fn(actual.pdqOf) };
});

const SETTINGS = SMALL_IMAGING;
const SIDE = CLASSIFIER_SIDE;
/** Natural photos, public domain or CC0 (their README says whose). */
const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'photos');
const PHOTOS = readdirSync(FIXTURES).filter((name) => name.endsWith('.jpg'));

/** The model's input made of pixels handed to the classifier, as its worker makes it. */
const squeezed = ({ data, width, height, channels, premultiplied = false }: ClassifierPixels): Uint8Array =>
  squeezeForClassifier(data, width, height, channels, premultiplied, SIDE);

/** A classifier that keeps what it was given (as the model's input) and answers a set score. */
class RecordingClassifier implements PictureClassifier {
  readonly handed: ClassifierPixels[] = [];
  constructor(private readonly answer: number) {}
  score(pixels: ClassifierPixels): Promise<NsfwScore> {
    this.handed.push({ ...pixels, data: Buffer.from(pixels.data) });
    return Promise.resolve({ score: this.answer, runMs: 3 });
  }
  get inputs(): Uint8Array[] {
    return this.handed.map(squeezed);
  }
}

/** The worker that takes a classifier's new runs. */
const workerOf = (classifier: OnnxNsfwClassifier): Worker | undefined =>
  (classifier as unknown as { lane: { worker: Worker } | undefined }).lane?.worker;

/** Raw pixels of one colour, as the classifier is handed them. */
const plain = (width: number, height: number, sample: number[]): ClassifierPixels => {
  const data = new Uint8Array(width * height * sample.length);
  for (let at = 0; at < data.length; at += sample.length) data.set(sample, at);
  return { data, width, height, channels: sample.length };
};

/** The RGB of the classifier input's pixel at (x, y). */
const pixelAt = (rgb: Uint8Array, x: number, y: number): number[] => [
  ...rgb.subarray((y * SIDE + x) * 3, (y * SIDE + x) * 3 + 3),
];

/** The processing of an image and its score, which may come after the rest. */
async function scored(processor: SharpImageProcessor, input: Buffer): Promise<number | undefined> {
  return (await (await processor.process(input, { targetWidth: undefined })).nsfwScoring)?.score;
}

/** A picture red in its left half and blue in its right half, as raw RGB. */
function leftAndRight(width: number, height: number): Buffer {
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y += 1)
    for (let x = 0; x < width; x += 1) pixels.set(x < width / 2 ? [255, 0, 0] : [0, 0, 255], (y * width + x) * 3);
  return pixels;
}

describe('the NSFW classifier in the imaging', () => {
  it.each([
    // the working pixels, as wide as the renditions need (SETTINGS.mediumWidth), or squeezed by libvips
    ['a JPEG', () => makeJpeg(120, 80), 50],
    ['a PNG', () => makePng(90, 60), 50],
    ['a greyscale PNG', () => makeGreyPng(70, 50), 50],
    ['a BMP (converted)', () => Promise.resolve(makeBmp(40, 30, 24)), 40],
    ['a still GIF', () => makeAnimated('gif', 60, 40, 1), 50],
    // working pixels of 30x3000, longer than MAX_CLASSIFIER_SIDE: not copied to the worker as they are
    ['a picture too tall to hand over as it is', () => makePng(30, 3_000), SIDE],
  ])('scores %s from the pixels already decoded, and the score comes out with the image', async (_name, make, handedWidth) => {
    const classifier = new RecordingClassifier(0.42);
    const input = await make();
    const processed = await new SharpImageProcessor(SETTINGS, classifier).process(input, { targetWidth: undefined });
    await expect(processed.nsfwScoring).resolves.toEqual({ score: 0.42, runMs: expect.any(Number) as number });
    expect(classifier.handed).toHaveLength(1);
    const [{ width, height, channels, data }] = classifier.handed as [ClassifierPixels];
    expect(width).toBe(handedWidth);
    expect(data.length).toBe(width * height * channels);
    expect(classifier.inputs[0]).toHaveLength(SIDE * SIDE * 3);
  });

  it.each(['gif', 'webp'] as const)(
    'scores an animated %s by its longest-shown frames, and a blank first frame of 10 ms hides nothing',
    async (format) => {
      const [width, height, frames] = [60, 40, 10];
      const all = Buffer.alloc(width * height * 4 * frames);
      // a white first frame, then nine frames of dark reds, no two alike (an encoder merges equal frames)
      const frameBytes = width * height * 4;
      for (let at = 0; at < all.length; at += 4) {
        const frame = Math.floor(at / frameBytes);
        all.set(frame === 0 ? [255, 255, 255, 255] : [150, 20 + 8 * frame, 30, 255], at);
      }
      const raw = sharp(all, { raw: { width, height: height * frames, channels: 4, pageHeight: height } });
      const delay = [10, ...Array.from({ length: frames - 1 }, () => 1000)];
      const animation = await (format === 'gif' ? raw.gif({ loop: 0, delay }) : raw.webp({ loop: 0, delay })).toBuffer();
      const handed: ClassifierPixels[] = [];
      // a classifier that finds the red frames explicit and the white one not, each run taking 7 ms of its own
      const classifier: PictureClassifier = {
        score: (pixels) => {
          handed.push(pixels);
          return Promise.resolve({ score: (pixels.data[1] ?? 0) < 128 ? 0.95 : 0.01, runMs: 7 });
        },
      };
      const processed = await new SharpImageProcessor(SETTINGS, classifier).process(animation, { targetWidth: undefined });
      expect(processed.animated).toBe(true);
      // the highest frame's score, and the time of every run together (the ClassifierTime metric of the upload)
      await expect(processed.nsfwScoring).resolves.toEqual({ score: 0.95, runMs: 7 * scoredFrames(delay, frames).length });
      expect(handed).toHaveLength(scoredFrames(delay, frames).length);
    },
  );

  it.each([
    ['a blank first frame of 10 ms', [10, ...Array<number>(9).fill(1000)], (page: number) => page >= 1],
    [
      'frames of 0 to 10 ms, shown as 100 ms, after four of 20 ms',
      [20, 20, 20, 20, 0, 0, 0, 0, 10, 10, 10, 10],
      (page: number) => page >= 4,
    ],
    [
      'four decoys of 110 ms before twenty frames of 100 ms',
      [110, 110, 110, 110, ...Array<number>(20).fill(100)],
      (page: number) => page >= 4,
    ],
    ['24 frames shown alike', Array<number>(24).fill(100), (page: number) => page >= 18],
    [
      'one frame of 5 s among 99 of 40 ms',
      [...Array<number>(50).fill(40), 5000, ...Array<number>(49).fill(40)],
      (page: number) => page === 50,
    ],
  ])('scores frames a viewer sees of an animation with %s, at most SCORED_FRAMES of them', (_name, delays, seen) => {
    const pages = scoredFrames(delays, delays.length);
    expect(pages.some(seen)).toBe(true);
    expect(pages.length).toBeLessThanOrEqual(SCORED_FRAMES);
    expect(new Set(pages).size).toBe(pages.length);
    expect(pages.every((page) => page >= 0 && page < delays.length)).toBe(true);
  });

  it('hands over a CMYK JPEG as sRGB (the working pixels are), never its four channels as colour and alpha', async () => {
    const classifier = new RecordingClassifier(0);
    await scored(new SharpImageProcessor(SETTINGS, classifier), await makeCmykJpeg(120, 80));
    expect(classifier.handed.map((pixels) => pixels.channels)).toEqual([3]);
  });

  it('hands over its pixels before the perceptual hashes are computed, so the model runs beside them', async () => {
    const hashing = jest.mocked(pdqOf);
    hashing.mockClear();
    const hashesWhenScored: number[] = [];
    const processor = new SharpImageProcessor(SETTINGS, {
      score: () => {
        hashesWhenScored.push(hashing.mock.calls.length);
        return Promise.resolve({ score: 0, runMs: 0 });
      },
    });
    const processed = await processor.process(await makePhoto(3, 120, 80), { targetWidth: undefined });
    expect(processed.perceptual?.hashes.length).toBeGreaterThan(0);
    expect([hashesWhenScored, hashing.mock.calls.length > 0]).toEqual([[0], true]);
  });

  it('scores the picture upright, as it is shown (a JPEG kept with its EXIF orientation)', async () => {
    // stored sideways: orientation 6 turns it a quarter clockwise, so its left half (red) becomes the top
    const sideways = leftAndRight(80, 60);
    const jpeg = await sharp(sideways, { raw: { width: 80, height: 60, channels: 3 } })
      .jpeg({ quality: 95 })
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const classifier = new RecordingClassifier(0);
    await scored(new SharpImageProcessor(SETTINGS, classifier), jpeg);
    const input = classifier.inputs[0] ?? new Uint8Array();
    // upright: the top right is the stored top left (red), the bottom left the stored top right (blue)
    expect(pixelAt(input, SIDE - 10, 10)[0]).toBeGreaterThan(200);
    expect(pixelAt(input, 10, SIDE - 10)[2]).toBeGreaterThan(200);
  });

  it('sees transparent pixels as white, and a greyscale picture in three equal channels', async () => {
    const clear = await sharp({ create: { width: 50, height: 50, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
      .png()
      .toBuffer();
    const classifier = new RecordingClassifier(0);
    await scored(new SharpImageProcessor(SETTINGS, classifier), clear);
    expect(pixelAt(classifier.inputs[0] ?? new Uint8Array(), 100, 100)).toEqual([255, 255, 255]);
    await scored(new SharpImageProcessor(SETTINGS, classifier), await makeGreyPng(70, 50));
    const [r, g, b] = pixelAt(classifier.inputs[1] ?? new Uint8Array(), 30, 30);
    expect([g, b]).toEqual([r, r]);
  });

  it('gives no score without a classifier (NSFW_POLICY off)', async () => {
    const processed = await new SharpImageProcessor(SETTINGS).process(await makePng(40, 30), { targetWidth: undefined });
    expect(processed.nsfwScoring).toBeUndefined();
  });

  it('fails the upload with a dependency error (503, try again) when the classifier fails, not as a bad image', async () => {
    const failing: PictureClassifier = {
      score: () => Promise.reject(new DependencyError('NSFW classifier', new Error('injected: the model failed'))),
    };
    const processed = await new SharpImageProcessor(SETTINGS, failing).process(await makePng(40, 30), { targetWidth: undefined });
    await expect(processed.nsfwScoring).rejects.toMatchObject({ kind: 'DependencyFailed' });
    // a failure of its own (not an ServiceError) is one too
    const throwing: PictureClassifier = { score: () => Promise.reject(new Error('injected')) };
    const again = await new SharpImageProcessor(SETTINGS, throwing).process(await makePng(40, 30), { targetWidth: undefined });
    await expect(again.nsfwScoring).rejects.toMatchObject({ kind: 'DependencyFailed' });
  });
});

describe("the classifier's squeeze to its input", () => {
  it('leaves 224x224 RGB as it is', () => {
    const data = Uint8Array.from({ length: SIDE * SIDE * 3 }, (_value, index) => (index * 7919) % 256);
    expect(Buffer.from(squeezed({ data, width: SIDE, height: SIDE, channels: 3 }))).toEqual(Buffer.from(data));
  });

  it('makes each pixel the mean of the area it covers', () => {
    // 448x448 in 2x2 blocks of two values: each output pixel is one block's mean
    const data = new Uint8Array(448 * 448 * 3);
    for (let y = 0; y < 448; y += 1)
      for (let x = 0; x < 448; x += 1) data.fill((x + y) % 2 === 0 ? 100 : 201, (y * 448 + x) * 3, (y * 448 + x) * 3 + 3);
    const out = squeezed({ data, width: 448, height: 448, channels: 3 });
    expect(new Set(out)).toEqual(new Set([151]));
    // squeezed whatever the aspect, as nsfwjs does: left half red, right half blue stays so
    const wide = squeezed({ data: leftAndRight(1000, 100), width: 1000, height: 100, channels: 3 });
    expect([pixelAt(wide, 10, 200), pixelAt(wide, 213, 5)]).toEqual([
      [255, 0, 0],
      [0, 0, 255],
    ]);
  });

  it('sees transparent pixels on white, premultiplied or not, and grey as three equal channels', () => {
    expect(pixelAt(squeezed(plain(30, 30, [0, 0, 0, 0])), 100, 100)).toEqual([255, 255, 255]);
    expect(pixelAt(squeezed(plain(30, 30, [0, 0, 0, 255])), 100, 100)).toEqual([0, 0, 0]);
    expect(pixelAt(squeezed(plain(30, 30, [200, 100, 0, 102])), 100, 100)).toEqual([233, 193, 153]);
    expect(pixelAt(squeezed({ ...plain(30, 30, [80, 40, 0, 102]), premultiplied: true }), 100, 100)).toEqual([233, 193, 153]);
    expect(pixelAt(squeezed(plain(30, 30, [77])), 5, 5)).toEqual([77, 77, 77]);
    expect(pixelAt(squeezed(plain(30, 30, [77, 0])), 5, 5)).toEqual([255, 255, 255]);
  });

  it('enlarges a picture smaller than its input', () => {
    const data = Uint8Array.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]);
    const out = squeezed({ data, width: 2, height: 2, channels: 3 });
    expect([pixelAt(out, 0, 0), pixelAt(out, 223, 0), pixelAt(out, 0, 223), pixelAt(out, 223, 223)]).toEqual([
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
      [255, 255, 255],
    ]);
  });

  it("stays close to libvips' own resize of a photo", async () => {
    const photo = readFileSync(join(FIXTURES, PHOTOS[0] ?? ''));
    const { data, info } = await sharp(photo).resize({ width: 500 }).raw().toBuffer({ resolveWithObject: true });
    const ours = squeezed({ data, width: info.width, height: info.height, channels: info.channels });
    const theirs = await sharp(data, { raw: info }).resize(SIDE, SIDE, { fit: 'fill', kernel: 'linear' }).raw().toBuffer();
    const meanDifference = ours.reduce((sum, value, index) => sum + Math.abs(value - (theirs[index] ?? 0)), 0) / ours.length;
    expect(meanDifference).toBeLessThan(3);
  });
});

describe('the embedded model (nsfwjs MobileNetV2Mid as ONNX)', () => {
  it('is loaded once per process', async () => {
    expect(loadNsfwClassifier()).toBe(loadNsfwClassifier());
    await loadNsfwClassifier();
  });

  it('scores natural photos far under the default threshold (60%), each the same every time', async () => {
    const classifier = await loadNsfwClassifier();
    const processor = new SharpImageProcessor({ ...SETTINGS, mediumWidth: 500 }, classifier);
    const scores = new Map<string, number>();
    for (const name of PHOTOS) {
      const bytes = readFileSync(join(FIXTURES, name));
      const first = await processor.process(bytes, { targetWidth: undefined });
      const again = await processor.process(bytes, { targetWidth: undefined });
      const score = (await first.nsfwScoring)?.score;
      expect((await again.nsfwScoring)?.score).toBe(score);
      scores.set(name, score ?? NaN);
    }
    for (const score of scores.values()) expect(score).toBeGreaterThanOrEqual(0);
    expect(Math.max(...scores.values())).toBeLessThan(0.1);
    // a model that answered one constant would pass the above: different photos score differently
    expect(new Set(scores.values()).size).toBe(PHOTOS.length);
  });

  it('refuses an input of the wrong size rather than read past it, or too large to copy', async () => {
    const classifier = await loadNsfwClassifier();
    await expect(classifier.score({ data: new Uint8Array(100), width: 10, height: 10, channels: 3 })).rejects.toThrow(
      'classifier input of 100 bytes for 10x10x3',
    );
    await expect(classifier.score(plain(10, 10, [1, 2, 3, 4, 5]))).rejects.toThrow('classifier input of 10x10x5 pixels');
    const huge = { data: new Uint8Array(0), width: MAX_CLASSIFIER_PIXELS, height: 2, channels: 1 };
    await expect(classifier.score(huge)).rejects.toThrow(`classifier input of ${MAX_CLASSIFIER_PIXELS}x2x1 pixels`);
    // few pixels, but a side whose squeeze would keep a line of the model's width for each of its rows
    const tall = plain(1, MAX_CLASSIFIER_SIDE + 1, [7]);
    await expect(classifier.score(tall)).rejects.toThrow(`classifier input of 1x${MAX_CLASSIFIER_SIDE + 1}x1 pixels`);
    expect((await classifier.score(plain(1, MAX_CLASSIFIER_SIDE, [7]))).score).toBeGreaterThanOrEqual(0);
  });

  it('fails a run past its time limit, answers the runs behind it, and ends its worker once it is done', async () => {
    const classifier = await OnnxNsfwClassifier.load();
    const input = plain(SIDE, SIDE, [40, 80, 120]);
    const { score: expected } = await classifier.score(input);
    const first = workerOf(classifier);
    const ended = new Promise<number>((resolve) => first?.once('exit', resolve));
    // the model alone takes several ms: no run answers within 1; the run sent behind it is answered all the same
    const late = classifier.score(input, 1);
    const behind = classifier.score(input);
    await expect(late).rejects.toBeInstanceOf(ClassifierTimeout);
    // new runs go to a new worker at once
    expect((await classifier.score(input, 60_000)).score).toBe(expected);
    expect(workerOf(classifier)).not.toBe(first);
    expect((await behind).score).toBe(expected);
    await ended;
    await classifier.close();
  });

  it('times a run from when its worker is on it, not while it waits for the runs before it; none left is none run', async () => {
    const classifier = await OnnxNsfwClassifier.load();
    const worker = workerOf(classifier);
    // a limit of 10 runs' time and at least 1 s (a run on a loaded machine takes several times its usual), and 3
    // limits' worth of runs sent at once: the last ones wait far past the limit
    let runMs = 0;
    for (let warm = 0; warm < 3; warm += 1) ({ runMs } = await classifier.score(plain(16, 16, [warm, 9, 9])));
    const limitMs = Math.max(1_000, 10 * runMs);
    const count = Math.min(1_000, Math.ceil((3 * limitMs) / Math.max(runMs, 1)));
    // small inputs (the model's run, not the squeeze, is what takes the time)
    const inputs = Array.from({ length: count }, (_, index) => plain(16, 16, [index % 256, 90, 200]));
    const started = performance.now();
    const scores = await Promise.all(inputs.map((input) => classifier.score(input, limitMs)));
    expect(performance.now() - started).toBeGreaterThan(limitMs);
    expect(scores).toHaveLength(count);
    await expect(classifier.score(inputs[0] ?? plain(1, 1, [0]), 0)).rejects.toBeInstanceOf(ClassifierTimeout);
    expect(workerOf(classifier)).toBe(worker);
    await classifier.close();
  });

  it('scores pixels of any size as their squeeze to 224x224 (the same input gives the same score)', async () => {
    const classifier = await loadNsfwClassifier();
    const photo = readFileSync(join(FIXTURES, PHOTOS[0] ?? ''));
    const { data, info } = await sharp(photo).resize({ width: 500 }).raw().toBuffer({ resolveWithObject: true });
    const pixels = { data, width: info.width, height: info.height, channels: info.channels };
    const direct = await classifier.score(pixels);
    const square = { data: squeezed(pixels), width: SIDE, height: SIDE, channels: 3 };
    expect((await classifier.score(square)).score).toBe(direct.score);
  });

  it('keeps a script alive while a run is waited for, and lets it exit once none is', () => {
    const script =
      "require('./functions/imaging/nsfw-classifier').loadNsfwClassifier()" +
      ".then((c) => c.score({ data: new Uint8Array(224 * 224 * 3), width: 224, height: 224, channels: 3 })).then((s) => process.stdout.write('score ' + s.score))";
    const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: join(__dirname, '..', '..', '..'),
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect([run.status, run.stdout]).toEqual([0, expect.stringMatching(/^score 0\.\d+$/)]);
  });

  it('answers runs side by side, each with its own score, from its worker', async () => {
    const classifier = await loadNsfwClassifier();
    const inputs = [0, 60, 255].map((value) => plain(SIDE, SIDE, [value, value, value]));
    const alone = [];
    for (const input of inputs) alone.push((await classifier.score(input)).score);
    const together = await Promise.all(inputs.map((input) => classifier.score(input)));
    expect(together.map(({ score }) => score)).toEqual(alone);
  });

  it("tells how long each run's own work took on its worker, and refuses a run it cannot make", async () => {
    const classifier = await loadNsfwClassifier();
    const inputs = [0, 60, 255].map((value) => plain(SIDE, SIDE, [value, value, value]));
    const told = await Promise.all(inputs.map((input) => classifier.score(input)));
    for (const { runMs } of told) {
      expect(runMs).toBeGreaterThan(0);
      expect(runMs).toBeLessThan(10_000);
    }
    await expect(classifier.score(plain(10, 10, [1, 2, 3, 4, 5]))).rejects.toThrow();
  });

  it('times runs sent together each on its own, not with the wait for the runs before it', async () => {
    const classifier = await loadNsfwClassifier();
    const inputs = Array.from({ length: 12 }, (_, index) => plain(SIDE, SIDE, [index * 20, 90, 200 - index * 10]));
    const started = performance.now();
    const told = (await Promise.all(inputs.map((input) => classifier.score(input)))).map(({ runMs }) => runMs);
    const elapsed = performance.now() - started;
    // one worker thread runs them one after another, so their own times add up to no more than the whole batch's
    // (a run timed from its arrival would count the runs queued before it: about 6 times the batch for 12)
    expect(told).toHaveLength(12);
    expect(told.reduce((sum, ms) => sum + ms, 0)).toBeLessThanOrEqual(elapsed);
  });

  it('fails the runs in flight when its worker dies (a 503), and starts another for the next run', async () => {
    const classifier = await OnnxNsfwClassifier.load();
    const input = plain(SIDE, SIDE, [0, 0, 0]);
    const expected = await classifier.score(input);
    // the crash comes once the run is the worker's: a message the worker cannot read throws there, uncaught. It is
    // sent in the same call as the run, just before it, so the worker ends before it could answer, on any machine:
    // behind the run, a worker whose model answers within the run's own turn answered first; in an earlier turn, it
    // could end the worker before the run was handed to it (and the run go to the next worker)
    const worker = workerOf(classifier);
    if (!worker) throw new Error('the classifier has no worker');
    const post = worker.postMessage.bind(worker);
    worker.postMessage = (...args: Parameters<Worker['postMessage']>): void => {
      worker.postMessage = post;
      post(null);
      post(...args);
    };
    const running = classifier.score(input);
    await expect(running).rejects.toMatchObject({ kind: 'DependencyFailed' });
    expect((await classifier.score(input)).score).toBe(expected.score);
    await classifier.close();
    await expect(classifier.score(input)).rejects.toMatchObject({ kind: 'DependencyFailed' });
  });

  it('refuses to load a model that onnxruntime cannot read, at the load', async () => {
    await expect(OnnxNsfwClassifier.load(join(FIXTURES, 'README.md'))).rejects.toThrow('the NSFW model did not load');
  });
});
