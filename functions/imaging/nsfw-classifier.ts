import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DependencyError } from '../core/errors';
import type { NsfwScore } from '../core/ports';
import { classifierWorkerSource } from './classifier-worker';

/**
 * The embedded NSFW classifier (`docs/moderation.md`, "The NSFW classifier"): nsfwjs's MobileNetV2Mid, converted to
 * ONNX by `scripts/nsfw-model/build.sh`, run by onnxruntime on pixels the imaging already decoded.
 */

/** The model's input: this many pixels a side, RGB, one byte a sample. */
export const CLASSIFIER_SIDE = 224;

/** The model file: next to this module in the source, next to the bundle's `index.js` in the function. */
export const NSFW_MODEL_FILE = 'nsfw-mobilenet-v2-mid.onnx';

/** The model's classes, in the order of its output. */
const CLASSES = ['Drawing', 'Hentai', 'Neutral', 'Porn', 'Sexy'] as const;

/** The classes an upload is scored by: explicit content, drawn or not ("Sexy" is not: swimwear, lingerie). */
const EXPLICIT: ReadonlySet<(typeof CLASSES)[number]> = new Set(['Porn', 'Hentai']);

/**
 * Decoded pixels, as the imaging has them: 8-bit samples, grey or sRGB, with or without alpha, of any size up to
 * `MAX_CLASSIFIER_PIXELS`. The classifier squeezes them to its input itself, on its worker (`SQUEEZE_SOURCE`).
 */
export interface ClassifierPixels {
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
  /** Colour samples already multiplied by their alpha (as libvips may leave them). */
  premultiplied?: boolean;
}

/** What scores a picture. */
export interface PictureClassifier {
  /**
   * How likely the picture is explicit, 0 to 1, and how long the classifier's own work took (squeezing the pixels and
   * running the model, in ms), apart from any wait for its thread. Past `timeLimitMs`, the run fails with a
   * `ClassifierTimeout`.
   */
  score(pixels: ClassifierPixels, timeLimitMs?: number): Promise<NsfwScore>;
}

/**
 * The most pixels handed to the classifier as they are (a working copy of 500 by 2,000); a larger picture is squeezed
 * by libvips first, so that no more than this is copied to the worker.
 */
export const MAX_CLASSIFIER_PIXELS = 1_000_000;

/**
 * The longest side handed over as it is: the squeeze keeps a line of the classifier's width for every row, so a copy
 * of 1 by 1,000,000 pixels would need 2.7 GB; longer sides are squeezed by libvips first.
 */
export const MAX_CLASSIFIER_SIDE = 2048;

/** Whether pixels of this size are handed to the classifier as they are (`MAX_CLASSIFIER_PIXELS`, `_SIDE`). */
export function fitsClassifier(width: number, height: number): boolean {
  return width * height <= MAX_CLASSIFIER_PIXELS && Math.max(width, height) <= MAX_CLASSIFIER_SIDE;
}

/** A run that did not answer in the time it was given; its worker is ended, and the next run starts another. */
export class ClassifierTimeout extends Error {
  constructor(timeLimitMs: number) {
    super(`the classifier did not answer within ${timeLimitMs} ms`);
    this.name = 'ClassifierTimeout';
  }
}

type WorkerAnswer = { ready: boolean; error?: string } | ({ id: number } & Run) | { id: number; error: string };

/** A run sent to a worker: how its caller is answered, and its time limit, timed once the worker is on it. */
interface Waiting {
  resolve: (run: Run) => void;
  reject: (error: Error) => void;
  timeLimitMs: number | undefined;
  timer?: NodeJS.Timeout;
}

/** A run's answer: the model's five scores, and how long the worker took to make them. */
interface Run {
  scores: number[];
  runMs: number;
}

/** A worker and the runs sent to it and not answered, in the order it runs them. */
interface Lane {
  worker: Worker;
  pending: Map<number, Waiting>;
  /** No more runs are sent to it; it is ended once its runs are answered. */
  retired: boolean;
}

export class OnnxNsfwClassifier implements PictureClassifier {
  private nextId = 0;
  /** The worker that takes new runs; none after it died or was retired, until the next run starts another. */
  private lane: Lane | undefined;
  private closed = false;

  private constructor(private readonly model: Buffer) {}

  /**
   * Starts the worker, which loads onnxruntime and the model: about 150 ms, once per cold start, and only where the
   * policy is not `off` (nothing of onnxruntime is loaded otherwise).
   */
  static async load(modelPath: string = defaultModelPath()): Promise<OnnxNsfwClassifier> {
    const classifier = new OnnxNsfwClassifier(await readFile(modelPath));
    classifier.lane = await classifier.start();
    return classifier;
  }

  async score(pixels: ClassifierPixels, timeLimitMs?: number): Promise<NsfwScore> {
    const { data, width, height, channels } = pixels;
    const sized = Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0;
    if (!sized || !fitsClassifier(width, height) || ![1, 2, 3, 4].includes(channels))
      throw new Error(`classifier input of ${width}x${height}x${channels} pixels`);
    if (data.length !== width * height * channels)
      throw new Error(`classifier input of ${data.length} bytes for ${width}x${height}x${channels}`);
    const { scores, runMs } = await this.run(pixels, timeLimitMs).catch((cause: unknown) => {
      throw cause instanceof ClassifierTimeout ? cause : new DependencyError('NSFW classifier', cause);
    });
    if (scores.length !== CLASSES.length) throw new DependencyError('NSFW classifier', new Error('unexpected output'));
    const score = CLASSES.reduce((sum, label, index) => (EXPLICIT.has(label) ? sum + (scores[index] ?? 0) : sum), 0);
    return { score, runMs };
  }

  /** Stops the worker for good (a test that made a classifier of its own). */
  async close(): Promise<void> {
    this.closed = true;
    await this.lane?.worker.terminate();
  }

  /**
   * One run; a worker that died (its runs in flight failed with it) is replaced by the next run, not mourned. A run's
   * time limit counts from when the worker is on it (the runs before it answered), not while it waits for them; past
   * it, the run fails and its worker is retired: new runs go to a new worker, and the old one is ended once it has
   * answered what it holds. Never while it runs the model: ending a worker inside onnxruntime's run aborted the whole
   * process.
   */
  private async run(
    { data, width, height, channels, premultiplied = false }: ClassifierPixels,
    timeLimitMs: number | undefined,
  ): Promise<Run> {
    if (this.closed) throw new Error('the classifier is closed');
    if (timeLimitMs !== undefined && timeLimitMs <= 0) throw new ClassifierTimeout(timeLimitMs);
    this.lane ??= await this.start();
    const lane = this.lane;
    const id = (this.nextId += 1);
    return new Promise((resolve, reject) => {
      const waiting: Waiting = {
        resolve: (answer) => (clearTimeout(waiting.timer), resolve(answer)),
        reject: (error) => (clearTimeout(waiting.timer), reject(error)),
        timeLimitMs,
      };
      lane.pending.set(id, waiting);
      this.timeHead(lane);
      lane.worker.ref();
      // a copy of its own, moved rather than copied again: the imaging goes on reading the pixels it was given
      const copy = Uint8Array.prototype.slice.call(data);
      lane.worker.postMessage({ id, data: copy, width, height, channels, premultiplied }, [copy.buffer]);
    });
  }

  /** Starts the time limit of the run the worker is on: the first not answered. */
  private timeHead(lane: Lane): void {
    const [head] = lane.pending;
    if (!head) return;
    const [id, waiting] = head;
    const limitMs = waiting.timeLimitMs;
    if (limitMs === undefined || waiting.timer) return;
    waiting.timer = setTimeout(() => {
      if (!lane.pending.delete(id)) return;
      waiting.reject(new ClassifierTimeout(limitMs));
      if (this.lane === lane) this.lane = undefined;
      lane.retired = true;
    }, limitMs);
  }

  /** A worker with the model loaded, its answers routed to the runs waiting for them. */
  private async start(): Promise<Lane> {
    const worker = new Worker(classifierWorkerSource(CLASSIFIER_SIDE), {
      eval: true,
      workerData: { runtime: require.resolve('onnxruntime-node'), model: this.model },
    });
    const ready = await new Promise<WorkerAnswer>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    if (!('ready' in ready) || !ready.ready) {
      await worker.terminate();
      throw new Error(`the NSFW model did not load: ${('error' in ready && ready.error) || 'no answer'}`);
    }
    const lane: Lane = { worker, pending: new Map(), retired: false };
    worker.on('message', (answer: WorkerAnswer) => {
      if (!('id' in answer)) return;
      const waiting = lane.pending.get(answer.id);
      lane.pending.delete(answer.id);
      if ('scores' in answer) waiting?.resolve(answer);
      else waiting?.reject(new Error(answer.error));
      if (lane.pending.size > 0) this.timeHead(lane);
      else if (lane.retired) void worker.terminate();
      else worker.unref();
    });
    const died = (error: Error): void => {
      if (this.lane === lane) this.lane = undefined;
      for (const waiting of lane.pending.values()) waiting.reject(error);
      lane.pending.clear();
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`the classifier's worker exited (${code})`)));
    // the worker keeps a process alive (a script, a test run) only while a run is waited for
    worker.unref();
    return lane;
  }
}

const loaded = new Map<string, Promise<OnnxNsfwClassifier>>();

/** The classifier of a model file, loaded once per process (a cold start; a test file that builds many handlers). */
export function loadNsfwClassifier(modelPath: string = defaultModelPath()): Promise<OnnxNsfwClassifier> {
  let loading = loaded.get(modelPath);
  if (!loading) {
    loading = OnnxNsfwClassifier.load(modelPath);
    loaded.set(modelPath, loading);
    // a failed load is tried again by the next cold start's build, not remembered
    loading.catch(() => loaded.delete(modelPath));
  }
  return loading;
}

/** Where the model is: `models/` beside the bundle's code (the stack copies it there) or beside this source file. */
function defaultModelPath(): string {
  return join(__dirname, 'models', NSFW_MODEL_FILE);
}
