import { SQUEEZE_SOURCE } from './classifier-squeeze';

/**
 * The worker that runs the model. onnxruntime-node runs a model on the thread that calls it, so on the event loop's
 * it would hold every other request (and, in `npm start`, the stand-ins) for the 6 to 7 ms of each run; here it runs
 * beside the hashes and the renditions. One thread (`intraOpNumThreads`), asleep between runs: a function of the
 * default size has one vCPU, and onnxruntime's default (a spinning thread per core) only burns it.
 */
export function classifierWorkerSource(side: number): string {
  return `
const { parentPort, workerData } = require('node:worker_threads');
${SQUEEZE_SOURCE}
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
    // one run at a time, each timed from its own start: runs that arrive together (the local server's concurrent
    // uploads) would otherwise each count the wait for the runs before it
    let queue = Promise.resolve();
    parentPort.on('message', ({ id, data, width, height, channels, premultiplied }) => {
      const side = ${side};
      const run = () => {
        const started = performance.now();
        const rgb = squeeze(data, width, height, channels, premultiplied, side);
        return session.run({ pixels: new ort.Tensor('uint8', rgb, [1, side, side, 3]) })
          .then(({ scores }) => ({ scores: Array.from(scores.data), runMs: performance.now() - started }));
      };
      queue = queue.then(run).then(
        ({ scores, runMs }) => parentPort.postMessage({ id, scores, runMs }),
        (error) => parentPort.postMessage({ id, error: message(error) }),
      );
    });
    parentPort.postMessage({ ready: true });
  },
  (error) => parentPort.postMessage({ ready: false, error: message(error) }),
);
`;
}
