import { Worker } from 'node:worker_threads';
import type { BmpHeader, RawPixels } from './decode-foreign';
import { MalformedImageError } from './malformed';

/** What the decoder's worker is asked: a BMP whose header was checked, or a HEIC and the most pixels it may make. */
export type ForeignPicture =
  { format: 'bmp'; bytes: Uint8Array; header: BmpHeader } | { format: 'heic'; bytes: Uint8Array; maxPixels: number };

/** A decode that did not end within the time left to its upload; its worker was ended with it. */
export class DecodeTimeout extends Error {
  constructor(readonly timeLimitMs: number) {
    super(`decoding did not end within ${timeLimitMs} ms`);
    this.name = 'DecodeTimeout';
  }
}

/** An idle worker is ended after this: the HEIC decoder's WebAssembly heap (about 40 MiB a megapixel) goes with it. */
export const IDLE_WORKER_MS = 10_000;

/**
 * The worker: bmp-ts (JavaScript) and libheif compiled to WebAssembly, neither of which can be stopped from outside
 * its thread, and which took 2.3 s (a 1-bit BMP of 100 MP) and 160 ms a megapixel (HEIC) on the thread that ran them.
 * The pixels are moved back, not copied.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const message = (error) => String((error && error.message) || error);
class Malformed extends Error {}

function bmp(bytes, header) {
  const decoded = require(workerData.bmp).decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  if (decoded.width !== header.width || Math.abs(decoded.height) !== header.height)
    throw new Malformed('BMP decoded to another size');
  // bmp-ts's toRGBA option is ignored by its paletted paths; its default byte order, ABGR, is the same in all of them
  const abgr = decoded.data;
  const channels = header.hasAlpha ? 4 : 3;
  const out = new Uint8Array(header.width * header.height * channels);
  for (let source = 0, target = 0; source < abgr.length; source += 4, target += channels) {
    out[target] = abgr[source + 3];
    out[target + 1] = abgr[source + 2];
    out[target + 2] = abgr[source + 1];
    // paletted and 24-bit BMPs come out with alpha 0: they are opaque and keep three channels
    if (channels === 4) out[target + 3] = abgr[source];
  }
  return { data: out, width: header.width, height: header.height, channels };
}

async function heic(bytes, maxPixels) {
  let images;
  try {
    images = await require(workerData.heic).all({ buffer: bytes });
  } catch (error) {
    throw new Malformed('HEIC does not open: ' + message(error));
  }
  try {
    const primary = images[0];
    if (!primary) throw new Malformed('HEIC holds no image');
    if (primary.width * primary.height > maxPixels) throw new Malformed('HEIC holds more pixels than its header said');
    const decoded = await primary.decode();
    const whole = decoded.data.byteOffset === 0 && decoded.data.byteLength === decoded.data.buffer.byteLength;
    const data = whole ? new Uint8Array(decoded.data.buffer) : new Uint8Array(decoded.data);
    return { data, width: decoded.width, height: decoded.height, channels: 4 };
  } finally {
    if (images.dispose) images.dispose();
  }
}

parentPort.on('message', async ({ id, format, bytes, header, maxPixels }) => {
  try {
    const pixels = format === 'bmp' ? bmp(bytes, header) : await heic(bytes, maxPixels);
    parentPort.postMessage({ id, pixels }, [pixels.data.buffer]);
  } catch (error) {
    parentPort.postMessage({ id, error: message(error), malformed: error instanceof Malformed });
  }
});
`;

type Answer = { id: number; pixels: RawPixels } | { id: number; error: string; malformed: boolean };

/**
 * Decodes the formats libvips cannot (BMP, HEIC) in a worker thread, one picture at a time, so the request's thread
 * stays free and a decode past its upload's time limit is stopped: its worker is ended and the next decode starts
 * another. `docs/imaging.md`.
 */
export class ForeignDecoder {
  private worker: Worker | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  /** `idleMs`: how long a worker waits for the next decode before it is ended. */
  constructor(private readonly idleMs = IDLE_WORKER_MS) {}

  /**
   * Decodes one picture once those before it are done; `leftMs` is read when its decode starts. A decode whose `signal`
   * aborts ends with its worker, failing with the signal's reason.
   */
  decode(picture: ForeignPicture, leftMs: () => number, signal?: AbortSignal): Promise<RawPixels> {
    const run = this.queue.then(() => this.run(picture, leftMs(), signal));
    // the next decode waits for this one's end, not for its pixels, which are let go with the upload
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Ends the worker now (a test, a script that is done). */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private run(picture: ForeignPicture, timeLimitMs: number, signal?: AbortSignal): Promise<RawPixels> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (timeLimitMs <= 0) return Promise.reject(new DecodeTimeout(0));
    clearTimeout(this.idleTimer);
    const worker = (this.worker ??= this.start());
    const id = (this.nextId += 1);
    return new Promise<RawPixels>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        worker.off('message', answered);
        worker.off('exit', exited);
        worker.unref();
        if (this.worker === worker) this.endWhenIdle();
      };
      const answered = (answer: Answer): void => {
        if (answer.id !== id) return;
        done();
        if ('pixels' in answer) resolve(answer.pixels);
        else reject(answer.malformed ? new MalformedImageError(answer.error) : new Error(answer.error));
      };
      const exited = (code: number): void => {
        done();
        if (this.worker === worker) this.worker = undefined;
        reject(new Error(`the decoder's worker exited (${code})`));
      };
      const ended = (reason: Error): void => {
        // let go first: a worker being ended is not one to end again once idle
        if (this.worker === worker) this.worker = undefined;
        done();
        void worker.terminate();
        reject(reason);
      };
      const timer = setTimeout(() => ended(new DecodeTimeout(timeLimitMs)), timeLimitMs);
      const aborted = (): void => ended(signal?.reason as Error);
      signal?.addEventListener('abort', aborted);
      worker.on('message', answered);
      worker.on('exit', exited);
      worker.ref();
      // the upload's bytes stay with it: the worker gets a copy of its own
      const bytes = Uint8Array.prototype.slice.call(picture.bytes);
      worker.postMessage({ ...picture, id, bytes }, [bytes.buffer]);
    });
  }

  /**
   * Ends the worker if no decode comes before the timer. Made outside a decode's closures: a timer made within them
   * would hold its answer's promise, and so its pixels, until it fired.
   */
  private endWhenIdle(): void {
    this.idleTimer = setTimeout(() => void this.close(), this.idleMs).unref();
  }

  private start(): Worker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { bmp: require.resolve('bmp-ts'), heic: require.resolve('heic-decode') },
    });
    // an error thrown in the worker's own code ends it, and 'exit' answers the decode it was on
    worker.on('error', () => undefined);
    worker.unref();
    return worker;
  }
}

/** The process's decoder: one worker, started by the first BMP or HEIC. */
export const foreignDecoder = new ForeignDecoder();
