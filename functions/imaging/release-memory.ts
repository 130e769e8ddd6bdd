import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's full collection, run once the event loop has turned (`docs/imaging.md`, "Bounded work"). Decoded pixels live in
 * sharp's buffers outside the JavaScript heap, which V8 does not weigh when it decides to collect: a job's working
 * copies of 75 MB and more stayed until some later collection, and a process that went idle after one kept them. A
 * job that held that much lets them go at once. The collector is reached as jest's leak detector reaches it (the flag
 * set at run time, `gc` read from a new context), the same on Node 20 and 24, in Lambda and in `npm start`.
 */
export function collectGarbageSoon(): void {
  // not at once: the job's last pipelines let go of their input buffers a moment after they answer
  setTimeout(collectGarbage, 500).unref();
}

let collect: (() => void) | undefined;

function collectGarbage(): void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    if (typeof gc !== 'function') return;
    collect = () => void Reflect.apply(gc, undefined, []);
  }
  collect();
  // pixels moved from a worker (`foreign-decoder.ts`) are freed by the first and leave V8's count of external memory,
  // which decides its next collections, only at the second
  collect();
}
