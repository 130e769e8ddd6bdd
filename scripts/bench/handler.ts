import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { PutParameterCommand } from '@aws-sdk/client-ssm';
import { createHandler, type HandlerOptions } from '../../functions/roots/handler';
import { METRIC, type Metrics } from '../../functions/core/metrics';
import { eventOfRequest, localContext } from '../../local/api-gateway-event';
import { localClients, provision } from '../../local/provision';
import { standInEnvironment } from '../../local/stand-ins';
import { benchFixtures } from './fixtures';
import { floorJob } from './floor';
import { indexWriteUnits, nowMs, sequentialRoundTrips, type StoreCall } from './latency-proxy';
import { median, medianOfRatios } from './median';
import { unmoderatedProcessor } from './processor';

export interface WholeUploadRow {
  input: string;
  latencyMs: number;
  /** Timed straight against the stand-ins (no latency proxy, no calls recorded). */
  direct: boolean;
  uploadP50: number;
  floorP50: number;
  /** Median of the ratios of an upload to the floor job run next to it. */
  ratio: number;
  /** The upload's time past the floor, in units of the injected latency. */
  extraOverFloor: number;
  /** The upload's own imaging step (decode to renditions, as its `ImagingTime` metric says), p50. */
  imagingP50: number;
  /** The upload's time outside its own imaging step (parse, checks, store waits the imaging did not hide), p50. */
  outsideImagingP50: number;
  /**
   * Median of the CPU time of this process (the handler's, the stores being in another) during an upload over that of
   * the floor job next to it: the handler's own work, without the stand-ins' share of the same cores.
   */
  cpuRatio: number;
  roundTripsAfterImaging: number;
  roundTripsInAll: number;
  storeCalls: string;
  tableWriteUnits: number;
  indexWriteUnits: number;
  /**
   * The same upload by a handler with `NSFW_POLICY=off`, its p50, and the median of the ratios of each upload to the
   * one without the classifier run beside it (`docs/moderation.md`, "Cost").
   */
  withoutClassifierP50: number;
  classifierRatio: number;
  /**
   * The same upload without any moderation (`NSFW_POLICY=off` and no perceptual hashes), its p50, and the median of
   * the ratios of each upload to the one without moderation run beside it: issue 25's budget (`docs/moderation.md`).
   */
  withoutModerationP50: number;
  moderationRatio: number;
}

/** A bench handler's environment: its stores' names, and the settings and blocks read once for the whole run. */
export function benchHandlerEnv(names: { bucket: string; table: string; parameterPrefix: string }): Record<string, string> {
  return {
    BUCKET_NAME: names.bucket,
    TABLE_NAME: names.table,
    PARAMETER_PREFIX: names.parameterPrefix,
    PUBLIC_URL: 'https://img.example.test',
    PARAMETERS_CACHE_SECONDS: '300',
    MODERATION_CACHE_SECONDS: '300',
  };
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
}

/**
 * The whole upload as Lambda runs it (parse, key, flood, duplicates, imaging, S3 and DynamoDB writes) against the
 * local stand-ins, each behind a proxy that adds a store latency to every call and records it, interleaved with the
 * imaging floor job on the same input. Reports the ratio to the floor, the store round trips on the critical path
 * after the imaging ends (the imaging's end is when the handler records its `ImagingTime`), and the write units.
 */
export async function measureWholeUpload(iterations: number, latencies: readonly number[]): Promise<WholeUploadRow[]> {
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
  process.env['POWERTOOLS_LOG_LEVEL'] = 'SILENT';
  const stores = await startStoresProcess();
  const standIns = stores.direct;
  try {
    const names = { bucket: 'bench', table: 'bench-table', parameterPrefix: '/bench' };
    // the stand-ins take requests signed with their own credentials only: the SDK finds them in the environment
    Object.assign(process.env, standInEnvironment(standIns));
    const { apiKey } = await provision({ endpoints: standIns, ...names });
    const { ssm } = localClients(standIns);
    // flood windows on (they cost what they cost in production), wide enough for the runs
    await ssm.send(
      new PutParameterCommand({
        Name: '/bench/flood-limits',
        Value: '{"minute":100000,"hour":100000,"day":100000,"week":100000,"month":100000}',
        Type: 'String',
        Overwrite: true,
      }),
    );
    ssm.destroy();
    let imagingEndMs = 0;
    let imagingMs = 0;
    const metrics: Metrics = {
      add: (name, _unit, value) => {
        if (name !== METRIC.imagingTime) return;
        imagingEndMs = nowMs();
        imagingMs = value;
      },
      flush: () => undefined,
    };
    // a handler of its own for each way to the stores: its SDK clients take their endpoints from the environment
    const handlerVia = (
      endpoints: Record<string, string>,
      settings: Record<string, string> = {},
      imageProcessor?: HandlerOptions['imageProcessor'],
    ) => {
      Object.assign(process.env, endpoints);
      return createHandler(
        { ...benchHandlerEnv(names), ...settings },
        { metrics, ...(imageProcessor ? { imageProcessor } : {}) },
      );
    };
    const unmoderatedImaging: HandlerOptions['imageProcessor'] = (config) => Promise.resolve(unmoderatedProcessor(config));
    const uploadEvent = async (fixture: { bytes: Buffer }, run: number) => {
      // a fresh image each time (a byte appended past the image's end): never a duplicate
      const bytes = Buffer.concat([fixture.bytes, randomBytes(8)]);
      const form = new FormData();
      form.append('source', new Blob([bytes]), `bench-${randomBytes(4).toString('hex')}.bin`);
      form.append('key', apiKey);
      const request = new Request('https://img.example.test/api/1/upload', { method: 'POST', body: form });
      return eventOfRequest(request, `203.0.113.${run % 250}`);
    };
    const rows: WholeUploadRow[] = [];
    const fixtures = (await benchFixtures()).filter((item) => item.name.startsWith('JPEG') || item.name.startsWith('PNG'));
    // Without added latency, the uploads are also timed straight against the stand-ins, as `npm start` calls them: the
    // proxies that record the calls cost CPU on the same cores. The proxied rows count the calls and round trips.
    const variants = [
      ...(latencies.includes(0) ? [{ latency: 0, direct: true }] : []),
      ...latencies.map((latency) => ({ latency, direct: false })),
    ];
    for (const { latency, direct } of variants) {
      const endpoints = direct ? standInEnvironment(standIns) : stores.proxied;
      const handler = handlerVia(endpoints);
      const withoutClassifier = handlerVia(endpoints, { NSFW_POLICY: 'off' });
      const withoutModeration = handlerVia(endpoints, { NSFW_POLICY: 'off' }, unmoderatedImaging);
      await stores.setLatency(latency);
      for (const fixture of fixtures) {
        const uploads: number[] = [];
        const floors: number[] = [];
        const after: number[] = [];
        const all: number[] = [];
        const tableUnits: number[] = [];
        const cpuRatios: number[] = [];
        const imagings: number[] = [];
        const outside: number[] = [];
        const indexUnits: number[] = [];
        const unclassified: number[] = [];
        const unmoderated: number[] = [];
        let callSummary = '';
        for (let run = 0; run < iterations + 2; run += 1) {
          // the same upload without the classifier, and without any moderation, beside it, in turns (their store calls
          // are not counted: taken below)
          const beside = run % 2 === 0 ? [withoutClassifier, withoutModeration] : [withoutModeration, withoutClassifier];
          for (const other of beside) {
            const plain = await uploadEvent(fixture, run);
            const plainStarted = nowMs();
            const answer = await other(plain, localContext(plain.requestContext.requestId));
            if (answer.statusCode !== 200) throw new Error(`upload failed: ${answer.body}`);
            (other === withoutClassifier ? unclassified : unmoderated).push(nowMs() - plainStarted);
          }
          const event = await uploadEvent(fixture, run);
          const floor = async (): Promise<{ floorMs: number; floorCpu: number }> => {
            const floorStarted = nowMs();
            const floorCpuStart = process.cpuUsage();
            await floorJob(fixture.bytes);
            return { floorCpu: cpuMsSince(floorCpuStart), floorMs: nowMs() - floorStarted };
          };
          // the floor job goes before the upload or after it, in turns (`npm-start.ts` says why)
          const floorBefore = run % 2 === 0 ? await floor() : undefined;
          await stores.takeCalls();
          const started = nowMs();
          const uploadCpuStart = process.cpuUsage();
          const response = await handler(event, localContext(event.requestContext.requestId));
          const uploadCpu = cpuMsSince(uploadCpuStart);
          const uploadMs = nowMs() - started;
          const calls = await stores.takeCalls();
          const { floorMs, floorCpu } = floorBefore ?? (await floor());
          if (response.statusCode !== 200) throw new Error(`upload failed: ${response.body}`);
          if (direct && calls.length > 0) throw new Error('an upload timed straight against the stand-ins went through a proxy');
          if (process.env['BENCH_TIMELINE'] && run === 3) {
            process.stderr.write(
              `timeline (ms from start; imaging ended at ${(imagingEndMs - started).toFixed(1)}, answer at ${uploadMs.toFixed(1)}):\n`,
            );
            for (const call of [...calls].sort((a, b) => a.startMs - b.startMs)) {
              process.stderr.write(
                `  ${(call.startMs - started).toFixed(1)} .. ${(call.endMs - started).toFixed(1)}  ${call.store} ${call.operation}\n`,
              );
            }
          }
          if (run < 2) continue; // warm-up: the cold start and the first caches
          uploads.push(uploadMs);
          floors.push(floorMs);
          imagings.push(imagingMs);
          outside.push(uploadMs - imagingMs);
          cpuRatios.push(uploadCpu / floorCpu);
          after.push(sequentialRoundTrips(calls.filter((call) => call.startMs >= imagingEndMs)));
          all.push(sequentialRoundTrips(calls));
          const writes = calls.filter((call) => call.writeUnits !== undefined);
          tableUnits.push(writes.reduce((sum, call) => sum + (call.writeUnits ?? 0), 0));
          indexUnits.push(writes.reduce((sum, call) => sum + indexWriteUnits(call), 0));
          callSummary = Object.entries(
            calls.reduce<Record<string, number>>((counts, call) => {
              const name = `${call.store} ${call.operation.replace(/ \/.*/, '')}`;
              counts[name] = (counts[name] ?? 0) + 1;
              return counts;
            }, {}),
          )
            .map(([name, count]) => `${count} ${name}`)
            .join(', ');
        }
        const floorP50 = median(floors);
        const uploadP50 = median(uploads);
        rows.push({
          input: fixture.name,
          latencyMs: latency,
          direct,
          uploadP50,
          floorP50,
          ratio: medianOfRatios(uploads, floors),
          extraOverFloor: latency > 0 ? (uploadP50 - floorP50) / latency : 0,
          imagingP50: median(imagings),
          outsideImagingP50: median(outside),
          cpuRatio: median(cpuRatios),
          roundTripsAfterImaging: median(after),
          roundTripsInAll: median(all),
          storeCalls: callSummary,
          tableWriteUnits: median(tableUnits),
          indexWriteUnits: median(indexUnits),
          withoutClassifierP50: median(unclassified.slice(2)),
          classifierRatio: medianOfRatios(uploads, unclassified.slice(2)),
          withoutModerationP50: median(unmoderated.slice(2)),
          moderationRatio: medianOfRatios(uploads, unmoderated.slice(2)),
        });
        process.stderr.write(`${JSON.stringify(rows[rows.length - 1])}\n`);
      }
    }
    return rows;
  } finally {
    stores.stop();
  }
}

export interface StoresProcess {
  direct: { s3: string; dynamodb: string; ssm: string; credentials: { accessKeyId: string; secretAccessKey: string } };
  proxied: Record<string, string>;
  setLatency(ms: number): Promise<void>;
  /** The calls the proxies saw since the last time. */
  takeCalls(): Promise<StoreCall[]>;
  stop(): void;
}

/** The stand-ins and the latency proxies, in a process of their own (`stores-process.ts`). */
export async function startStoresProcess(): Promise<StoresProcess> {
  const child = fork(join(__dirname, 'stores-process.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  const next = (): Promise<Record<string, unknown>> =>
    new Promise((resolve) => child.once('message', (message) => resolve(message as Record<string, unknown>)));
  const { ready } = (await next()) as { ready: { direct: StoresProcess['direct']; proxied: Record<string, string> } };
  return {
    ...ready,
    async setLatency(ms) {
      child.send({ latencyMs: ms });
      await new Promise((resolve) => setTimeout(resolve, 50));
    },
    async takeCalls() {
      const answer = next();
      child.send({ calls: true });
      return ((await answer) as { calls: StoreCall[] }).calls;
    },
    stop: () => child.kill(),
  };
}
