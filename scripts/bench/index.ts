import { execFileSync } from 'node:child_process';
import { commandLine } from '../command-line';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultProcessor, imagingJob } from './processor';
import { benchFixtures } from './fixtures';
import { floorJob } from './floor';
import { measureWholeUpload } from './handler';
import { measureThroughNpmStart } from './npm-start';
import { median, medianOfRatios } from './median';
import { measureModerationCost } from './moderation';
import { CROP_QUERIES, measureBlockLists, measureUploadWithList, pictureQueries } from './block-list';
import { HASHED_FRAMES, MOST_INNER_PICTURES } from '../../functions/fingerprint/views';
import { measureBundleColdStart, measureClassifierColdStart } from './cold-start';
import { cpuRigTables, measureCpuRig } from './cpu-rig';
import { printGifFrames } from './gif-frames';
import { EnvSettings } from '../env-settings';

/**
 * `npm run bench`: the service's imaging job against the floor (the least work any implementation must do), on the
 * same input, in one process, interleaved, so that a noisy shared machine slows both alike. Reports p50s, their
 * ratio, and the peak RSS of one job in a fresh process. The ratio is the median of the ratios of the pairs (each
 * service run against the floor run next to it), which load drifting on a shared machine moves least.
 */
/**
 * `BENCH_SMOKE=1`: every part once, with the fewest runs it can make (a check that the bench still runs, as the test
 * suite makes it: `test/e2e/bench-tools.test.ts`); its figures mean nothing.
 */
const SMOKE = Boolean(process.env['BENCH_SMOKE']);
const settings = new EnvSettings('bench');
const ITERATIONS = settings.whole('BENCH_ITERATIONS', SMOKE ? 1 : 40);
const PART = settings.oneOf('BENCH_PART', ['whole-upload', 'block-lists', 'cpu', 'gif-frames'] as const);
const LATENCIES = settings.wholeList('BENCH_LATENCIES', [0, 20]);
const BLOCK_LISTS = settings.wholeList('BENCH_BLOCK_LISTS', [10_000, 100_000, 1_000_000], 1);
settings.check();
/** The fewest runs of a part: `runs`, or one in a smoke run. */
const least = (runs: number): number => (SMOKE ? 1 : runs);
const WARMUP = SMOKE ? 0 : 3;

/** CPU time (all threads of the process: libvips' too) of every timed service job, with its wall time. */
const serviceCpu: Array<{ cpuMs: number; wallMs: number }> = [];

async function timed(job: () => Promise<unknown>, cpu?: Array<{ cpuMs: number; wallMs: number }>): Promise<number> {
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  await job();
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  const used = process.cpuUsage(cpuStart);
  cpu?.push({ cpuMs: (used.user + used.system) / 1000, wallMs });
  return wallMs;
}

function peakRss(file: string, which: 'service' | 'floor'): { beforeMiB: number; peakMiB: number } {
  const out = execFileSync(process.execPath, [require.resolve('tsx/cli'), join(__dirname, 'one-job.ts'), file, which], {
    encoding: 'utf8',
  });
  const { beforeKiB, peakKiB } = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { beforeKiB: number; peakKiB: number };
  return { beforeMiB: beforeKiB / 1024, peakMiB: peakKiB / 1024 };
}

/** The whole upload through the handler, on stand-ins behind latency proxies: the table of its critical path. */
async function printWholeUpload(latencies: number[]): Promise<void> {
  const wholeRows = await measureWholeUpload(Math.max(least(5), Math.floor(ITERATIONS / 2)), latencies);
  process.stdout.write(
    [
      'Whole upload through the handler, on the stand-ins behind proxies that add a latency to every store call, interleaved with the floor job:',
      '',
      '| input | stores | store latency (ms) | upload p50 (ms) | floor p50 (ms) | upload / floor | handler CPU / floor CPU | (upload - floor) / latency | its imaging p50 (ms) | (upload - its imaging) / latency | latencies the upload waited (vs. 0 ms) | round trips after the imaging | round trips in all | table write units | index write units | store calls |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...wholeRows.map((row) => {
        // how many times the added latency the upload grew by, against the same input through the same proxies
        // without it: the round trips that are really on its critical path, the stand-ins' own time taken out
        const base = wholeRows.find((other) => other.input === row.input && other.latencyMs === 0 && !other.direct);
        const waited = row.latencyMs > 0 && base ? ((row.uploadP50 - base.uploadP50) / row.latencyMs).toFixed(1) : '-';
        const calls = row.direct
          ? ['-', '-', '-', '-', '(not recorded)']
          : [row.roundTripsAfterImaging, row.roundTripsInAll, row.tableWriteUnits, row.indexWriteUnits, row.storeCalls];
        return `| ${row.input} | ${row.direct ? 'straight' : 'through the proxies'} | ${row.latencyMs} | ${row.uploadP50.toFixed(0)} | ${row.floorP50.toFixed(0)} | ${row.ratio.toFixed(2)} | ${row.cpuRatio.toFixed(2)} | ${row.latencyMs > 0 ? row.extraOverFloor.toFixed(1) : '-'} | ${row.imagingP50.toFixed(0)} | ${row.latencyMs > 0 ? (row.outsideImagingP50 / row.latencyMs).toFixed(1) : '-'} | ${waited} | ${calls.join(' | ')} |`;
      }),
      '',
      'What moderation adds to the whole upload: each upload of the table above beside one by a handler with `NSFW_POLICY=off`, and one with neither the classifier nor the perceptual hashes:',
      '',
      '| input | stores | store latency (ms) | upload p50 (ms) | NSFW_POLICY=off p50 (ms) | neither p50 (ms) | upload / NSFW_POLICY=off (median of pairs) | upload / neither (median of pairs) |',
      '|---|---|---|---|---|---|---|---|',
      ...wholeRows.map(
        (row) =>
          `| ${row.input} | ${row.direct ? 'straight' : 'through the proxies'} | ${row.latencyMs} | ${row.uploadP50.toFixed(0)} | ${row.withoutClassifierP50.toFixed(0)} | ${row.withoutModerationP50.toFixed(0)} | ${row.classifierRatio.toFixed(3)} | ${row.moderationRatio.toFixed(3)} |`,
      ),
      '',
    ].join('\n'),
  );
}

/** The block lists at each size, and the whole upload with and without the largest (`docs/moderation.md`). */
async function printBlockLists(): Promise<void> {
  const listSizes = BLOCK_LISTS;
  const lists = measureBlockLists(listSizes, least(3));
  const largest = Math.max(...listSizes);
  const withList = process.env['BENCH_SKIP_HANDLER']
    ? undefined
    : await measureUploadWithList(largest, Math.max(least(10), ITERATIONS));
  process.stdout.write(
    [
      `Blocked pictures' lists of random hashes (a shared list's are as unrelated to an upload), each in fresh processes: from the stored form to an index ready, what it holds, and an upload's check against it, at its most (an opaque still picture: the eight turns of its hash, its ${CROP_QUERIES} crops and ${MOST_INNER_PICTURES} pictures inside it; one with transparency and a border: four hashes' turns, the crops and the pictures inside; an opaque animation: six frames, each as an opaque still picture) when nothing matches:`,
      '',
      `| hashes | stored (MB) | load p50 (ms) | index (MiB) | check, opaque (${pictureQueries(1)} queries): p50 / p99 (ms) | check, transparent and framed (${pictureQueries(4)}): p50 / p99 (ms) | check, animation (${HASHED_FRAMES * pictureQueries(1)}): p50 / p99 (ms) |`,
      '|---|---|---|---|---|---|---|',
      ...lists.map(
        (row) =>
          `| ${row.hashes} | ${row.storedMB.toFixed(1)} | ${row.loadMs.toFixed(0)} | ${row.indexMiB.toFixed(1)} | ${row.oneHashP50.toFixed(2)} / ${row.oneHashP99.toFixed(2)} | ${row.fourHashesP50.toFixed(2)} / ${row.fourHashesP99.toFixed(2)} | ${row.animationP50.toFixed(2)} / ${row.animationP99.toFixed(2)} |`,
      ),
      '',
      ...(withList
        ? [
            `The whole upload (JPEG, through the handler on the stand-ins) with a list of ${largest} blocked pictures and with none, in turns: p50 ${withList.withP50.toFixed(0)} ms and ${withList.withoutP50.toFixed(0)} ms, with / without (median of pairs) ${withList.ratio.toFixed(3)}. The first upload of each handler (its cold start, and for the one with the list its load): ${withList.firstWithMs.toFixed(0)} ms and ${withList.firstWithoutMs.toFixed(0)} ms.`,
            '',
          ]
        : []),
      '',
    ].join('\n'),
  );
}

/** The one-core rig: the upload's CPU against the floor's, by part, and against other checkouts (`BENCH_AGAINST`). */
async function printCpuRig(): Promise<void> {
  const rounds = Math.max(least(10), ITERATIONS);
  const result = await measureCpuRig(rounds, WARMUP, rounds);
  process.stdout.write(`${cpuRigTables(result, rounds)}\n`);
}

async function main(): Promise<void> {
  // BENCH_PART=whole-upload: that table alone (`docs/performance.md`, "The upload core, before and after")
  if (PART === 'whole-upload') return printWholeUpload(LATENCIES);
  // BENCH_PART=block-lists: those tables alone (`docs/moderation.md`, "Block lists at scale")
  if (PART === 'block-lists') return printBlockLists();
  // BENCH_PART=cpu: the one-core rig alone (`docs/performance.md`, "One upload's CPU on one core")
  if (PART === 'cpu') return printCpuRig();
  // BENCH_PART=gif-frames: what counting a GIF's LZW pixels costs (`docs/imaging.md`)
  if (PART === 'gif-frames') return printGifFrames(Math.max(least(15), ITERATIONS));
  // BENCH_ONLY=JPEG measures only the inputs whose name starts with it
  const processor = await defaultProcessor();
  const fixtures = await benchFixtures();
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const rows: string[] = [];
  try {
    for (const fixture of fixtures) {
      const service: number[] = [];
      const floor: number[] = [];
      serviceCpu.length = 0;
      for (let i = 0; i < WARMUP + ITERATIONS; i += 1) {
        // alternate which runs first, so neither always gets the warmer cache
        const pair =
          i % 2 === 0
            ? [() => imagingJob(processor, fixture.bytes), () => floorJob(fixture.bytes)]
            : [() => floorJob(fixture.bytes), () => imagingJob(processor, fixture.bytes)];
        const cpu = i < WARMUP ? undefined : serviceCpu;
        const first = await timed(pair[0]!, i % 2 === 0 ? cpu : undefined);
        const second = await timed(pair[1]!, i % 2 === 0 ? undefined : cpu);
        if (i < WARMUP) continue;
        service.push(i % 2 === 0 ? first : second);
        floor.push(i % 2 === 0 ? second : first);
      }
      const file = join(dir, 'input');
      writeFileSync(file, fixture.bytes);
      const serviceRss = peakRss(file, 'service');
      const floorRss = peakRss(file, 'floor');
      const row = {
        input: `${fixture.name}, ${(fixture.bytes.length / 1e6).toFixed(2)} MB`,
        serviceP50: median(service),
        floorP50: median(floor),
      };
      rows.push(
        `| ${row.input} | ${row.serviceP50.toFixed(1)} | ${row.floorP50.toFixed(1)} | ${medianOfRatios(service, floor).toFixed(2)} | ${serviceRss.peakMiB.toFixed(0)} (${floorRss.peakMiB.toFixed(0)}) | ${serviceRss.beforeMiB.toFixed(0)} | ${median(serviceCpu.map(({ cpuMs }) => cpuMs)).toFixed(1)} | ${median(serviceCpu.map(({ cpuMs, wallMs }) => cpuMs / wallMs)).toFixed(2)} |`,
      );
      process.stderr.write(`${rows[rows.length - 1]}\n`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(
    [
      '',
      `${ITERATIONS} interleaved runs each, after ${WARMUP} warm-up runs; node ${process.version}, ${cpus().length} cores`,
      '',
      '| input | service p50 (ms) | floor p50 (ms) | ratio (median of pairs) | peak RSS of one job, MiB (floor) | RSS before the job, MiB | service CPU p50 (ms) | cores busy (CPU / wall) |',
      '|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
  const moderationRows = await measureModerationCost(fixtures, ITERATIONS);
  const cold = measureClassifierColdStart(Math.max(least(9), Math.floor(ITERATIONS / 4)));
  const bundle = await measureBundleColdStart(Math.max(least(9), Math.floor(ITERATIONS / 2)));
  process.stdout.write(
    [
      'What moderation adds to the imaging: the same job with the perceptual hashes and the NSFW classifier (a default deployment), with the hashes only (`NSFW_POLICY=off`), and with neither, interleaved:',
      '',
      '| input | both (ms) | hashes only (ms) | neither (ms) | both / neither (median of runs) | hashes only / neither |',
      '|---|---|---|---|---|---|',
      ...moderationRows.map(
        (row) =>
          `| ${row.input} | ${row.bothP50.toFixed(1)} | ${row.hashesP50.toFixed(1)} | ${row.neitherP50.toFixed(1)} | ${row.bothRatio.toFixed(3)} | ${row.hashesRatio.toFixed(3)} |`,
      ),
      '',
      `The classifier at cold start, fresh processes: loading sharp ${cold.sharpP50.toFixed(0)} ms, sharp then onnxruntime and the model ${cold.withClassifierP50.toFixed(0)} ms (p50s): the classifier adds ${(cold.withClassifierP50 - cold.sharpP50).toFixed(0)} ms.`,
      '',
      "Cold start: the API function's bundle (as the stack bundles it) against a minimal bundle of the same SDK clients and sharp, each loaded by fresh processes, alternately:",
      '',
      '| bundle | size (MB) | load p50 (ms) |',
      '|---|---|---|',
      `| the API function's | ${(bundle.apiBytes / 1e6).toFixed(2)} | ${bundle.apiP50.toFixed(1)} |`,
      `| minimal | ${(bundle.minimalBytes / 1e6).toFixed(2)} | ${bundle.minimalP50.toFixed(1)} |`,
      '',
      `API / minimal (median of pairs): ${bundle.ratio.toFixed(3)}`,
      '',
      '',
    ].join('\n'),
  );
  await printBlockLists();
  if (process.env['BENCH_SKIP_HANDLER']) return;
  const latencies = LATENCIES;
  const npmStartRows = await measureThroughNpmStart(Math.max(least(5), Math.floor(ITERATIONS / 2)));
  process.stdout.write(
    [
      'Whole upload through `npm start` (the local server and its stand-ins in a process of their own, a multipart POST over loopback), interleaved with the floor job; in turns with it, the same upload through a second local server with `NSFW_POLICY=off`:',
      '',
      '| input | upload p50 (ms) | floor p50 (ms) | upload / floor (median of pairs) | NSFW_POLICY=off: upload p50 (ms) | NSFW_POLICY=off: upload / floor | upload / NSFW_POLICY=off (median of pairs) |',
      '|---|---|---|---|---|---|---|',
      ...npmStartRows.map(
        (row) =>
          `| ${row.input} | ${row.uploadP50.toFixed(0)} | ${row.floorP50.toFixed(0)} | ${row.ratio.toFixed(2)} | ${row.withoutClassifier.uploadP50.toFixed(0)} | ${row.withoutClassifier.ratio.toFixed(2)} | ${row.classifierRatio.toFixed(3)} |`,
      ),
      '',
      '',
    ].join('\n'),
  );
  await printWholeUpload(latencies);
  await printCpuRig();
}

commandLine(
  'usage: npm run bench   (settings in the environment: BENCH_ITERATIONS, BENCH_ONLY, BENCH_LATENCIES, BENCH_BLOCK_LISTS, BENCH_SKIP_HANDLER, BENCH_PART, BENCH_AGAINST, BENCH_PROFILE, BENCH_TRACE_GC, BENCH_NSFW_POLICY, BENCH_SMOKE; docs/performance.md) (exit codes: 0 done, 1 failed, 2 usage)',
);
void main();
