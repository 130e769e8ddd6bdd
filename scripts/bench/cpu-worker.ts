import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { fromRoot } from './side-modules';
import { cpuMsSince, helpersCpuMs, monotonicUs, threadCpuMs, type Span, type ThreadCpu } from './thread-cpu';

/**
 * One side of the one-core CPU rig (`cpu-rig.ts`): a handler of the checkout at `BENCH_ROOT` (this one, or another,
 * for a side-by-side run), on stores in moto_server made for it beforehand (`cpu-provision.ts`, whose API key
 * `BENCH_API_KEY` hands over), in a process that `taskset` holds to one core as a 1,769 MB Lambda has one vCPU. Driven
 * by messages: `{ round }` runs the floor job and one upload (in turns which first) and answers their CPU; `{ parts }`
 * answers what the parts of an upload cost alone (`cpu-parts.ts`, this checkout only). Only the modules every checkout
 * of the project has are loaded from `BENCH_ROOT`, so that an older main runs here too.
 */
const ROOT = process.env['BENCH_ROOT'] ?? join(__dirname, '..', '..');
const INPUT = process.env['BENCH_INPUT'] ?? '';

type Handler = (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>;

interface RoundAnswer {
  uploadCpuMs: number;
  uploadMs: number;
  floorCpuMs: number;
  /** V8's helpers' share of that: the parts table counts the floor without it, as it counts every part. */
  floorHelpersMs: number;
  gcMs: number;
  /**
   * The upload's CPU by thread: the main thread's, libvips' workers', V8's helpers', and the others' (the rest of
   * `uploadCpuMs`).
   */
  threads: ThreadCpu;
}

async function main(): Promise<void> {
  const { createHandler } = await fromRoot<{ createHandler: (env: Record<string, string>, options: object) => Handler }>(
    ROOT,
    'functions/roots/handler',
    'functions/api/handler',
  );
  const { eventOfRequest, localContext } = await fromRoot<{
    eventOfRequest: (request: Request, ip: string) => Promise<{ requestContext: { requestId: string } }>;
    localContext: (id: string) => unknown;
  }>(ROOT, 'local/api-gateway-event');
  const { floorJob } = await fromRoot<{ floorJob: (input: Buffer) => Promise<void> }>(ROOT, 'scripts/bench/floor');
  const names = JSON.parse(process.env['BENCH_NAMES'] ?? '{}') as { bucket: string; table: string; parameterPrefix: string };
  const apiKey = process.env['BENCH_API_KEY'] ?? '';
  const env = {
    BUCKET_NAME: names.bucket,
    TABLE_NAME: names.table,
    PARAMETER_PREFIX: names.parameterPrefix,
    PUBLIC_URL: 'https://img.example.test',
    PARAMETERS_CACHE_SECONDS: '300',
    MODERATION_CACHE_SECONDS: '300',
    // BENCH_NSFW_POLICY=off: both sides without the classifier, to weigh the rest apart from it
    ...(process.env['BENCH_NSFW_POLICY'] ? { NSFW_POLICY: process.env['BENCH_NSFW_POLICY'] } : {}),
  };
  const metrics = { add: () => undefined, flush: () => undefined };
  const input = readFileSync(INPUT);
  let gcMs = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration;
  }).observe({ entryTypes: ['gc'] });
  /** One upload of a fresh copy of the input (bytes past the image's end: never a duplicate) by a handler of `options`. */
  const uploader = (options: object = {}) => {
    const handler = createHandler(env, { metrics, ...options });
    return async (round: number): Promise<{ cpuMs: number; ms: number; gcMs: number; threads: ThreadCpu; span: Span }> => {
      const form = new FormData();
      form.append('source', new Blob([Buffer.concat([input, randomBytes(8)])]), `cpu-${round}.jpg`);
      form.append('key', apiKey);
      const request = new Request('https://img.example.test/api/1/upload', { method: 'POST', body: form });
      // as Lambda's runtime hands it over: parsed from JSON text, its base64 body a string on V8's heap (one that
      // `Buffer.toString` made is held outside it, and V8 counts it otherwise)
      const made = await eventOfRequest(request, '203.0.113.9');
      const event = JSON.parse(JSON.stringify(made)) as typeof made;
      const gcBefore = gcMs;
      const threadsBefore = threadCpuMs();
      const fromUs = monotonicUs();
      const cpuStart = process.cpuUsage();
      const answer = await handler(event, localContext(event.requestContext.requestId));
      const cpuMs = cpuMsSince(cpuStart);
      const span = { fromUs, toUs: monotonicUs() };
      const ms = (span.toUs - span.fromUs) / 1000;
      const threadsAfter = threadCpuMs();
      const main = threadsAfter.main - threadsBefore.main;
      const libvips = threadsAfter.libvips - threadsBefore.libvips;
      const v8 = threadsAfter.v8 - threadsBefore.v8;
      const threads = { main, libvips, v8, others: cpuMs - main - libvips - v8 };
      // the gc entries of the upload are delivered after it, in a later turn
      await new Promise((resolve) => setImmediate(resolve));
      if (answer.statusCode !== 200) throw new Error(`upload failed: ${answer.body}`);
      return { cpuMs, ms, gcMs: gcMs - gcBefore, threads, span };
    };
  };
  const upload = uploader();
  const floor = async (): Promise<{ cpuMs: number; helpersMs: number }> => {
    const helpersBefore = helpersCpuMs();
    const cpuStart = process.cpuUsage();
    await floorJob(input);
    return { cpuMs: cpuMsSince(cpuStart), helpersMs: helpersCpuMs() - helpersBefore };
  };
  process.on('message', (message: { round?: number; parts?: number; stop?: boolean }) => {
    const answer = async (): Promise<unknown> => {
      if (message.parts !== undefined) {
        const { measureParts } = await import('./cpu-parts');
        return measureParts(input, message.parts, uploader);
      }
      const round = message.round ?? 0;
      const floorFirst = round % 2 === 0;
      const floorBefore = floorFirst ? await floor() : undefined;
      const uploaded = await upload(round);
      const floored = floorBefore ?? (await floor());
      const result: RoundAnswer = {
        uploadCpuMs: uploaded.cpuMs,
        uploadMs: uploaded.ms,
        floorCpuMs: floored.cpuMs,
        floorHelpersMs: floored.helpersMs,
        gcMs: uploaded.gcMs,
        threads: uploaded.threads,
      };
      return result;
    };
    answer().then(
      (result) => process.send?.({ result }),
      (error: unknown) => process.send?.({ error: String(error instanceof Error ? error.stack : error) }),
    );
  });
  process.send?.({ ready: true });
}

main().catch((error: unknown) => {
  process.send?.({ error: String(error instanceof Error ? error.stack : error) });
  process.exit(1);
});
