import { readdirSync, readFileSync } from 'node:fs';

/**
 * Where a process's CPU goes, by thread, as the one-core rig counts it (`cpu-worker.ts`, `cpu-parts.ts`). Loaded as
 * the rig's process starts, before the service: V8's helpers are told apart by being there first.
 */

export interface ThreadCpu {
  main: number;
  libvips: number;
  v8: number;
  others: number;
}

/**
 * The threads of V8's platform Node makes at its start: a scheduler of delayed tasks and its workers, four unless
 * `--v8-pool-size` says otherwise (on the command line or in `NODE_OPTIONS`).
 */
const V8_PLATFORM_THREADS = (() => {
  const flags = [...process.execArgv, ...(process.env['NODE_OPTIONS'] ?? '').split(/\s+/)];
  const size = flags.map((flag) => /^--v8-pool-size=(\d+)$/.exec(flag)?.[1]).find((value) => value !== undefined);
  return 1 + (size === undefined || size === '0' ? 4 : Number(size));
})();

/**
 * V8's helper threads, where it marks and sweeps the heap beside the main thread (and compiles in the background):
 * Node makes its V8 platform before it runs any script, so they are the first threads started after the main one
 * (by start time, then id). Read once, as this process starts; Node 20 names no thread apart.
 */
const V8_HELPERS: ReadonlySet<string> = (() => {
  const started = (tid: string): number => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // the fields after the name, which may hold spaces; the 22nd of the whole line is the start time
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  };
  const others = readdirSync('/proc/self/task')
    .filter((tid) => tid !== String(process.pid))
    .map((tid) => ({ tid, at: started(tid) }))
    .sort((a, b) => a.at - b.at || Number(a.tid) - Number(b.tid));
  return new Set(others.slice(0, V8_PLATFORM_THREADS).map(({ tid }) => tid));
})();

/**
 * CPU ms of the main thread, of libvips' workers and of V8's helpers so far (each thread's `schedstat`, in ns); the
 * others' (the classifier's worker, libuv's pool where sharp runs its pipelines, threads that ended) are what is left
 * of the process's CPU.
 */
export function threadCpuMs(): Omit<ThreadCpu, 'others'> {
  const counted = { main: 0, libvips: 0, v8: 0 };
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const ms = threadMs(tid);
      if (tid === String(process.pid)) counted.main += ms;
      else if (V8_HELPERS.has(tid)) counted.v8 += ms;
      else if (readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === 'libvips worker') counted.libvips += ms;
    } catch (error) {
      // a thread that ended since the folder was listed
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
  return counted;
}

/** CPU ms of V8's helpers so far: only their own `schedstat` read, so that counting them costs the span little. */
export function helpersCpuMs(): number {
  let ms = 0;
  for (const tid of V8_HELPERS) ms += threadMs(tid);
  return ms;
}

/** CPU ms of one thread so far: the first field of its `schedstat`, in ns. */
function threadMs(tid: string): number {
  return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

/** CPU ms of the whole process, every thread, since `start` (a `process.cpuUsage()`). */
export function cpuMsSince(start: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
}

/**
 * A span's CPU but V8's helpers' (a part measured alone leaves its garbage's marking to their line): this at its
 * start, then its `ms()` at its end. The helpers are read outside the process's two readings, so that reading them
 * is not counted in the span.
 */
export function cpuOutsideHelpers(): { ms: () => number } {
  const helpersBefore = helpersCpuMs();
  const start = process.cpuUsage();
  return {
    ms: () => {
      const spent = cpuMsSince(start);
      return spent - (helpersCpuMs() - helpersBefore);
    },
  };
}

/** A stretch of time on the monotonic clock, in µs: the clock V8's CPU profiles time their samples by. */
export interface Span {
  fromUs: number;
  toUs: number;
}

/** Now on the monotonic clock, in µs (`process.hrtime`, which reads the clock V8's profiler reads). */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}
