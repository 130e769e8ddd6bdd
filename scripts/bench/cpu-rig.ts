import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchJpeg } from './fixtures';
import { median, medianOfRatios, ratioOfSums } from './median';
import type { PartsAnswer } from './cpu-parts';
import type { ThreadCpu } from './thread-cpu';

/**
 * The one-core rig (`BENCH_PART=cpu`): what one 12 MP upload costs in CPU where a 1,769 MB Lambda runs it, on one
 * vCPU. The handler runs in a process `taskset` holds to one core, the stores in moto_server held to the other, as a
 * Lambda's stores are elsewhere; each upload beside the floor job (decode, resize, two encodes) in the same process,
 * in turns which goes first. With `BENCH_AGAINST` (checkouts of the project, comma-separated; each with its
 * `node_modules`), each of them runs the same uploads in a process of its own on the same core, one upload each in
 * turns, so that load drifting on a shared machine weighs on all alike.
 */

const RIG_CORES = { service: '1', stores: '0' };

export interface CpuRigSide {
  root: string;
  uploadCpuP50: number;
  floorCpuP50: number;
  /** V8's helpers' share of the floor's CPU, p50. */
  floorHelpersP50: number;
  /** Median of the ratios of each upload's CPU to the floor's run beside it. */
  cpuRatio: number;
  /** Every upload's CPU over every floor's: what many uploads cost together, major collections and all. */
  cpuRatioOfSums: number;
  uploadP50: number;
  gcP50: number;
  /** The upload's CPU p50 of each kind of thread. */
  threadsP50: ThreadCpu;
}

export interface CpuRigResult {
  sides: CpuRigSide[];
  parts: PartsAnswer | undefined;
}

interface Worker {
  root: string;
  child: ChildProcess;
  ask(message: object): Promise<unknown>;
}

/**
 * `BENCH_TRACE_GC=1`: each side prints V8's collections, and what started each marking, as its rounds run; its lines
 * carry its pid, which the rig names on stderr. Printing costs the side CPU: figures of a traced run are not compared.
 */
const GC_TRACE = process.env['BENCH_TRACE_GC'] ? ['--trace-gc', '--trace-incremental-marking'] : [];

/** The environment of one side's processes: its checkout, its stores in moto, one vCPU's pools. */
function sideEnv(root: string, input: string, endpoint: string, index: number): NodeJS.ProcessEnv {
  return {
    // the stores are moto's alone: no endpoint of the caller's (a test run's stand-ins) may take precedence
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_'))),
    BENCH_ROOT: root,
    BENCH_INPUT: input,
    BENCH_NAMES: JSON.stringify({ bucket: `rig-${index}`, table: `rig-table-${index}`, parameterPrefix: `/rig-${index}` }),
    AWS_ENDPOINT_URL: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'rig',
    AWS_SECRET_ACCESS_KEY: 'rig',
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    // one vCPU: libvips' and libuv's pools sized as on such a Lambda
    VIPS_CONCURRENCY: '1',
  };
}

/**
 * Makes a side's stores in a process of its own (`cpu-provision.ts`), and answers their API key: its last line, as the
 * bench's other one-shot processes answer (a package's warning may come before it).
 */
function provisionSide(env: NodeJS.ProcessEnv): string {
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(__dirname, 'cpu-provision.ts')], {
    cwd: env['BENCH_ROOT'],
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env,
  });
  const { apiKey } = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { apiKey?: string };
  if (!apiKey) throw new Error(`${env['BENCH_ROOT']}: provisioning the rig's stores printed no key: ${out.trim().slice(-200)}`);
  return apiKey;
}

async function startWorker(root: string, input: string, endpoint: string, index: number): Promise<Worker> {
  const env = sideEnv(root, input, endpoint, index);
  env['BENCH_API_KEY'] = provisionSide(env);
  const child = spawn(
    'taskset',
    ['-c', RIG_CORES.service, process.execPath, ...GC_TRACE, '--import', 'tsx', join(__dirname, 'cpu-worker.ts')],
    { cwd: root, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env },
  );
  let waiting: { settle: (message: Record<string, unknown>) => void; fail: (error: Error) => void } | undefined;
  if (GC_TRACE.length > 0) process.stderr.write(`cpu rig: ${root} runs in pid ${child.pid ?? '?'}\n`);
  child.on('message', (message: Record<string, unknown>) => {
    const waiter = waiting;
    waiting = undefined;
    const error = message['error'];
    if (typeof error === 'string') waiter?.fail(new Error(`${root}: ${error}`));
    else waiter?.settle(message);
  });
  child.on('exit', (code) => waiting?.fail(new Error(`${root}: the rig's worker exited with ${code}`)));
  const next = (): Promise<Record<string, unknown>> => new Promise((settle, fail) => (waiting = { settle, fail }));
  return next().then(() => ({
    root,
    child,
    async ask(message) {
      const answer = next();
      child.send(message);
      return (await answer)['result'];
    },
  }));
}

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((settle, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => settle(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function startMotoOnItsCore(): Promise<{ endpoint: string; stop: () => void }> {
  const port = await freePort();
  const child = spawn('taskset', ['-c', RIG_CORES.stores, 'moto_server', '-H', '127.0.0.1', '-p', String(port)], {
    stdio: 'ignore',
  });
  const endpoint = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries += 1) {
    try {
      if ((await fetch(`${endpoint}/moto-api/`)).ok) break;
    } catch {
      if (tries > 300 || child.exitCode !== null) throw new Error('moto_server did not start (pip install moto[server])');
      await new Promise((settle) => setTimeout(settle, 100));
    }
  }
  return { endpoint, stop: () => child.kill() };
}

/** `rounds` uploads on each side, `warmup` more first; the parts of this checkout's upload over `partRounds` more. */
export async function measureCpuRig(rounds: number, warmup: number, partRounds: number): Promise<CpuRigResult> {
  const here = resolve(__dirname, '..', '..');
  const roots = [
    here,
    ...(process.env['BENCH_AGAINST'] ?? '')
      .split(',')
      .filter(Boolean)
      .map((root) => resolve(root)),
  ];
  const dir = mkdtempSync(join(tmpdir(), 'cpu-rig-'));
  const moto = await startMotoOnItsCore();
  const workers: Worker[] = [];
  try {
    const input = join(dir, 'input.jpg');
    writeFileSync(input, await benchJpeg());
    for (const [index, root] of roots.entries()) workers.push(await startWorker(root, input, moto.endpoint, index));
    const answers = workers.map(
      () =>
        [] as Array<{
          uploadCpuMs: number;
          floorCpuMs: number;
          floorHelpersMs: number;
          uploadMs: number;
          gcMs: number;
          threads: ThreadCpu;
        }>,
    );
    for (let round = 0; round < warmup + rounds; round += 1) {
      // each side in turn, the order turned each round
      const order = round % 2 === 0 ? workers : [...workers].reverse();
      for (const worker of order) {
        const answer = (await worker.ask({ round })) as (typeof answers)[number][number];
        if (round >= warmup) answers[workers.indexOf(worker)]?.push(answer);
      }
      process.stderr.write(`cpu rig: round ${round + 1} of ${warmup + rounds}\r`);
    }
    const sides = workers.map((worker, index) => {
      const runs = answers[index] ?? [];
      return {
        root: worker.root,
        uploadCpuP50: median(runs.map((run) => run.uploadCpuMs)),
        floorCpuP50: median(runs.map((run) => run.floorCpuMs)),
        floorHelpersP50: median(runs.map((run) => run.floorHelpersMs)),
        cpuRatio: medianOfRatios(
          runs.map((run) => run.uploadCpuMs),
          runs.map((run) => run.floorCpuMs),
        ),
        cpuRatioOfSums: ratioOfSums(
          runs.map((run) => run.uploadCpuMs),
          runs.map((run) => run.floorCpuMs),
        ),
        uploadP50: median(runs.map((run) => run.uploadMs)),
        gcP50: median(runs.map((run) => run.gcMs)),
        threadsP50: {
          main: median(runs.map((run) => run.threads.main)),
          libvips: median(runs.map((run) => run.threads.libvips)),
          v8: median(runs.map((run) => run.threads.v8)),
          others: median(runs.map((run) => run.threads.others)),
        },
      };
    });
    const parts = partRounds > 0 ? ((await workers[0]?.ask({ parts: partRounds })) as PartsAnswer) : undefined;
    return { sides, parts };
  } finally {
    for (const worker of workers) worker.child.kill();
    moto.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The rig's tables, as `npm run bench` prints them. */
export function cpuRigTables({ sides, parts }: CpuRigResult, rounds: number): string {
  const [here] = sides;
  const lines = [
    `One 12 MP upload's CPU on one core (the handler held to one core by taskset, the stores in moto_server on the other; ${rounds} uploads each, in turns with the floor job):`,
    '',
    "| checkout | upload CPU p50 (ms) | floor CPU p50 (ms) | upload / floor (median of pairs) | upload / floor (ratio of sums) | upload wall p50 (ms) | GC pauses p50 (ms) | main thread's CPU p50 (ms) | libvips' threads' p50 (ms) | V8's helpers' p50 (ms) | other threads' p50 (ms) |",
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...sides.map(
      (side, index) =>
        `| ${index === 0 ? 'this one' : side.root} | ${side.uploadCpuP50.toFixed(1)} | ${side.floorCpuP50.toFixed(1)} | ${side.cpuRatio.toFixed(2)} | ${side.cpuRatioOfSums.toFixed(2)} | ${side.uploadP50.toFixed(0)} | ${side.gcP50.toFixed(1)} | ${side.threadsP50.main.toFixed(1)} | ${side.threadsP50.libvips.toFixed(1)} | ${side.threadsP50.v8.toFixed(1)} | ${side.threadsP50.others.toFixed(1)} |`,
    ),
    '',
    "libvips' threads are its own workers; V8's helpers are the threads of its platform, where it marks and sweeps the heap beside the main thread (and compiles in the background); the other threads are the classifier's worker, libuv's pool (where sharp runs each pipeline, sharing its work with libvips' workers) and any thread that ended during the upload.",
    '',
  ];
  if (parts && here) {
    const row = (what: string, ms: number): string => `| ${what} | ${ms.toFixed(1)} | ${(ms / here.floorCpuP50).toFixed(2)} |`;
    const sdk = parts.profiled.sdk;
    // the floor job's garbage is marked by V8's helpers too: counted in their line, as the upload's is
    const floorOwn = here.floorCpuP50 - here.floorHelpersP50;
    const helpers = here.threadsP50.v8;
    const rest =
      here.uploadCpuP50 - floorOwn - parts.fingerprintMs - parts.classifierMs - parts.md5sMs - sdk - here.gcP50 - helpers;
    lines.push(
      "Where this checkout's upload CPU goes, by part: the floor, the fingerprint, the classifier and the md5s each run alone on the same core, on the copies an upload makes (their CPU but V8's helpers'); the SDK's JavaScript from a CPU profile of uploads whose imaging was done already (its samples taken while their handler ran, its times scaled to those uploads' main-thread CPU measured without the profiler); garbage collection as the uploads above paused for it, and V8's helper threads as they ran beside them; the rest is what is left of the upload's CPU p50:",
      '',
      '| part of the upload | CPU ms per upload | in floors |',
      '|---|---|---|',
      row('the whole upload', here.uploadCpuP50),
      row("the floor: decode, resize, two encodes (but V8's helpers' share, left to their line)", floorOwn),
      row('the fingerprint (no picture blocked, as here)', parts.fingerprintMs),
      row("the classifier (on its worker's thread)", parts.classifierMs),
      row('the md5s (as sent, as stored)', parts.md5sMs),
      row("the SDK's calls (their JavaScript)", sdk),
      row('garbage collection (pauses of the main thread)', here.gcP50),
      row("V8's helper threads (marking and sweeping beside the main thread, compiling)", helpers),
      row('the rest: the imaging past the floor, the parse, the rules, sockets', rest),
      '',
      `With some picture blocked, the fingerprint also makes the views that are only compared: ${parts.comparedFingerprintMs.toFixed(1)} ms alone (${(parts.comparedFingerprintMs / here.floorCpuP50).toFixed(2)} floors) in place of ${parts.fingerprintMs.toFixed(1)}.`,
      '',
      `An upload whose imaging was done already takes ${parts.withoutImagingMs.toFixed(1)} ms of CPU, ${parts.withoutImagingMainMs.toFixed(1)} of them on the main thread; that thread's profile, per upload: the SDK ${sdk.toFixed(1)} ms, the md5s ${parts.profiled.md5s.toFixed(1)}, garbage collection ${parts.profiled.gc.toFixed(1)}, sharp's JavaScript ${parts.profiled.sharp.toFixed(1)}, the rest of the main thread ${parts.profiled.other.toFixed(1)}.`,
      '',
    );
  }
  return lines.join('\n');
}
