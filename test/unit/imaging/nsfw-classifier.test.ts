import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import { DependencyError } from '../../../functions/core/errors';
import {
  CLASSIFIER_SIDE,
  loadNsfwClassifier,
  OnnxNsfwClassifier,
  type PictureClassifier,
} from '../../../functions/imaging/nsfw-classifier';
import { SharpImageProcessor } from '../../../functions/imaging/sharp-image-processor';
import { makeAnimated, makeBmp, makeGreyPng, makeJpeg, makePng, SMALL_IMAGING } from '../../support/images';

const SETTINGS = SMALL_IMAGING;
const SIDE = CLASSIFIER_SIDE;
/** Natural photos, public domain or CC0 (their README says whose). */
const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'photos');
const PHOTOS = readdirSync(FIXTURES).filter((name) => name.endsWith('.jpg'));

/** A classifier that keeps what it was given and answers a set score. */
class RecordingClassifier implements PictureClassifier {
  readonly inputs: Uint8Array[] = [];
  constructor(private readonly answer: number) {}
  score(rgb: Uint8Array): Promise<number> {
    this.inputs.push(Buffer.from(rgb));
    return Promise.resolve(this.answer);
  }
}

/** The RGB of the classifier input's pixel at (x, y). */
const pixelAt = (rgb: Uint8Array, x: number, y: number): number[] => [
  ...rgb.subarray((y * SIDE + x) * 3, (y * SIDE + x) * 3 + 3),
];

/** The processing of an image and its score, which may come after the rest. */
async function scored(processor: SharpImageProcessor, input: Buffer): Promise<number | undefined> {
  return (await processor.process(input, { targetWidth: undefined })).nsfwScoring;
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
    ['a JPEG', () => makeJpeg(120, 80)],
    ['a PNG', () => makePng(90, 60)],
    ['a greyscale PNG', () => makeGreyPng(70, 50)],
    ['a BMP (converted)', () => Promise.resolve(makeBmp(40, 30, 24))],
    ['an animated GIF (its first frame)', () => makeAnimated('gif', 60, 40, 3)],
  ])('scores %s from 224x224 RGB pixels, and the score comes out with the image', async (_name, make) => {
    const classifier = new RecordingClassifier(0.42);
    const processed = await new SharpImageProcessor(SETTINGS, classifier).process(await make(), { targetWidth: undefined });
    await expect(processed.nsfwScoring).resolves.toBe(0.42);
    expect(classifier.inputs.map((input) => input.length)).toEqual([SIDE * SIDE * 3]);
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
    // a failure of its own (not an UploadError) is one too
    const throwing: PictureClassifier = { score: () => Promise.reject(new Error('injected')) };
    const again = await new SharpImageProcessor(SETTINGS, throwing).process(await makePng(40, 30), { targetWidth: undefined });
    await expect(again.nsfwScoring).rejects.toMatchObject({ kind: 'DependencyFailed' });
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
      const score = await first.nsfwScoring;
      expect(await again.nsfwScoring).toBe(score);
      scores.set(name, score ?? NaN);
    }
    for (const score of scores.values()) expect(score).toBeGreaterThanOrEqual(0);
    expect(Math.max(...scores.values())).toBeLessThan(0.1);
    // a model that answered one constant would pass the above: different photos score differently
    expect(new Set(scores.values()).size).toBe(PHOTOS.length);
  });

  it('refuses an input of the wrong size rather than read past it', async () => {
    const classifier = await loadNsfwClassifier();
    await expect(classifier.score(new Uint8Array(100))).rejects.toThrow('classifier input of 100 bytes');
  });

  it('keeps a script alive while a run is waited for, and lets it exit once none is', () => {
    const script =
      "require('./functions/imaging/nsfw-classifier').loadNsfwClassifier()" +
      ".then((c) => c.score(new Uint8Array(224 * 224 * 3))).then((s) => process.stdout.write('score ' + s))";
    const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: join(__dirname, '..', '..', '..'),
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect([run.status, run.stdout]).toEqual([0, expect.stringMatching(/^score 0\.\d+$/)]);
  });

  it('answers runs side by side, each with its own score, from its worker', async () => {
    const classifier = await loadNsfwClassifier();
    const inputs = [0, 60, 255].map((value) => new Uint8Array(SIDE * SIDE * 3).fill(value));
    const alone = [];
    for (const input of inputs) alone.push(await classifier.score(input));
    await expect(Promise.all(inputs.map((input) => classifier.score(input)))).resolves.toEqual(alone);
  });

  it('fails the runs in flight when its worker dies (a 503), and starts another for the next run', async () => {
    const classifier = await OnnxNsfwClassifier.load();
    const input = new Uint8Array(SIDE * SIDE * 3);
    const expected = await classifier.score(input);
    const running = classifier.score(input);
    // a crash of the worker: a message it cannot read throws there, uncaught
    (classifier as unknown as { worker: Worker }).worker.postMessage(null);
    await expect(running).rejects.toMatchObject({ kind: 'DependencyFailed' });
    await expect(classifier.score(input)).resolves.toBe(expected);
    await classifier.close();
    await expect(classifier.score(input)).rejects.toMatchObject({ kind: 'DependencyFailed' });
  });

  it('refuses to load a model that onnxruntime cannot read, at the load', async () => {
    await expect(OnnxNsfwClassifier.load(join(FIXTURES, 'README.md'))).rejects.toThrow('the NSFW model did not load');
  });
});
