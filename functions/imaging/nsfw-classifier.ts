import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DependencyError } from '../core/errors';

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

/** What scores a picture; the imaging hands it `CLASSIFIER_SIDE`² RGB bytes. */
export interface PictureClassifier {
  /** How likely the picture is explicit, 0 to 1. */
  score(rgb: Uint8Array): Promise<number>;
}

/**
 * The worker that runs the model. onnxruntime-node runs a model on the thread that calls it, so on the event loop's
 * it would hold every other request (and, in `npm start`, the stand-ins) for the 6 to 7 ms of each run; here it runs
 * beside the hashes and the renditions. One thread (`intraOpNumThreads`), asleep between runs: a function of the
 * default size has one vCPU, and onnxruntime's default (a spinning thread per core) only burns it.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.runtime);
const message = (error) => String((error && error.message) || error);
const options = {
  graphOptimizationLevel: 'all',
  enableCpuMemArena: false,
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
};
ort.InferenceSession.create(workerData.model, options).then(
  (session) => {
    parentPort.on('message', ({ id, rgb }) => {
      session.run({ pixels: new ort.Tensor('uint8', rgb, [1, ${CLASSIFIER_SIDE}, ${CLASSIFIER_SIDE}, 3]) }).then(
        ({ scores }) => parentPort.postMessage({ id, scores: Array.from(scores.data) }),
        (error) => parentPort.postMessage({ id, error: message(error) }),
      );
    });
    parentPort.postMessage({ ready: true });
  },
  (error) => parentPort.postMessage({ ready: false, error: message(error) }),
);
`;

type WorkerAnswer = { ready: boolean; error?: string } | { id: number; scores?: number[]; error?: string };

export class OnnxNsfwClassifier implements PictureClassifier {
  private readonly pending = new Map<number, { resolve: (scores: number[]) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  /** The worker that answers runs; none after it died, until the next run starts another. */
  private worker: Worker | undefined;
  private closed = false;

  private constructor(private readonly model: Buffer) {}

  /**
   * Starts the worker, which loads onnxruntime and the model: about 150 ms, once per cold start, and only where the
   * policy is not `off` (nothing of onnxruntime is loaded otherwise).
   */
  static async load(modelPath: string = defaultModelPath()): Promise<OnnxNsfwClassifier> {
    const classifier = new OnnxNsfwClassifier(await readFile(modelPath));
    classifier.worker = await classifier.start();
    return classifier;
  }

  async score(rgb: Uint8Array): Promise<number> {
    if (rgb.length !== CLASSIFIER_SIDE * CLASSIFIER_SIDE * 3) throw new Error(`classifier input of ${rgb.length} bytes`);
    const scores = await this.run(rgb).catch((cause: unknown) => {
      throw new DependencyError('NSFW classifier', cause);
    });
    if (scores.length !== CLASSES.length) throw new DependencyError('NSFW classifier', new Error('unexpected output'));
    return CLASSES.reduce((sum, label, index) => (EXPLICIT.has(label) ? sum + (scores[index] ?? 0) : sum), 0);
  }

  /** Stops the worker for good (a test that made a classifier of its own). */
  async close(): Promise<void> {
    this.closed = true;
    await this.worker?.terminate();
  }

  /** One run; a worker that died (its runs in flight failed with it) is replaced by the next run, not mourned. */
  private async run(rgb: Uint8Array): Promise<number[]> {
    if (this.closed) throw new Error('the classifier is closed');
    this.worker ??= await this.start();
    const worker = this.worker;
    const id = (this.nextId += 1);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, rgb });
    });
  }

  /** A worker with the model loaded, its answers routed to the runs waiting for them. */
  private async start(): Promise<Worker> {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { runtime: require.resolve('onnxruntime-node'), model: this.model },
    });
    const ready = await new Promise<WorkerAnswer>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    if (!('ready' in ready) || !ready.ready) {
      await worker.terminate();
      throw new Error(`the NSFW model did not load: ${ready.error ?? 'no answer'}`);
    }
    worker.on('message', (answer: WorkerAnswer) => {
      if (!('id' in answer)) return;
      const waiting = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (this.pending.size === 0) worker.unref();
      if (answer.scores) waiting?.resolve(answer.scores);
      else waiting?.reject(new Error(answer.error ?? 'no scores'));
    });
    const died = (error: Error): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`the classifier's worker exited (${code})`)));
    // the worker keeps a process alive (a script, a test run) only while a run is waited for
    worker.unref();
    return worker;
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
