import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, type LocalProcess, startLocalProcess } from '../../test/support/local-process';
import { benchFixtures } from './fixtures';
import { floorJob } from './floor';
import { nowMs } from './latency-proxy';
import { median, medianOfRatios } from './median';

export interface NpmStartRow {
  input: string;
  uploadP50: number;
  floorP50: number;
  /** Median of the ratios of an upload to the floor job run next to it. */
  ratio: number;
  /** The same through a second local server with `NSFW_POLICY=off`, its uploads alternated with the first's. */
  withoutClassifier: { uploadP50: number; ratio: number };
  /** Median of the ratios of each upload to the one without the classifier next to it: what the classifier adds. */
  classifierRatio: number;
}

/** Uploads through one local server, and the floor job run next to each. */
interface Series {
  uploads: number[];
  floors: number[];
}

/**
 * The whole upload as a client sees it through `npm start`: the local server in a process of its own (the handler
 * and the embedded stand-ins in it, as it runs), a multipart POST over loopback, timed to the answer's last byte,
 * interleaved with the floor job on the same input in this process, each going first in turns. A second server with
 * `NSFW_POLICY=off` takes the same uploads in turns with the first: what the classifier adds through `npm start`.
 */
export async function measureThroughNpmStart(iterations: number): Promise<NpmStartRow[]> {
  const dataDirs: string[] = [];
  const start = async (settings: Record<string, string>): Promise<LocalProcess> => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-npm-start-'));
    dataDirs.push(dataDir);
    return startLocalProcess({
      PORT: String(await freePort()),
      DATA_DIR: dataDir,
      API_KEY: 'bench-key-0123456789abcdef',
      FLOOD_LIMITS: '{"minute":100000,"hour":100000,"day":100000,"week":100000,"month":100000}',
      // as the function in AWS keeps it, not npm start's 0
      MODERATION_CACHE_SECONDS: '30',
      ...settings,
    });
  };
  const servers: LocalProcess[] = [];
  try {
    const classifying = await start({});
    servers.push(classifying);
    const notClassifying = await start({ NSFW_POLICY: 'off' });
    servers.push(notClassifying);
    const rows: NpmStartRow[] = [];
    const fixtures = (await benchFixtures()).filter((item) => item.name.startsWith('JPEG') || item.name.startsWith('PNG'));
    for (const fixture of fixtures) {
      const [full, unclassified] = await measureInput(fixture.bytes, [classifying, notClassifying], iterations);
      rows.push({
        input: fixture.name,
        uploadP50: median(full.uploads),
        floorP50: median(full.floors),
        ratio: medianOfRatios(full.uploads, full.floors),
        withoutClassifier: {
          uploadP50: median(unclassified.uploads),
          ratio: medianOfRatios(unclassified.uploads, unclassified.floors),
        },
        classifierRatio: medianOfRatios(full.uploads, unclassified.uploads),
      });
      process.stderr.write(`${JSON.stringify(rows[rows.length - 1])}\n`);
    }
    return rows;
  } finally {
    for (const server of servers) await server.stop();
    for (const dataDir of dataDirs) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One input through each server in turns (which server goes first alternates), each upload beside a floor job. */
async function measureInput(
  bytes: Buffer,
  servers: readonly [LocalProcess, LocalProcess],
  iterations: number,
): Promise<[Series, Series]> {
  type Lane = Series & { server: LocalProcess };
  const lane = (server: LocalProcess): Lane => ({ server, uploads: [], floors: [] });
  const lanes: [Lane, Lane] = [lane(servers[0]), lane(servers[1])];
  const floor = async (): Promise<number> => {
    const floorStarted = nowMs();
    await floorJob(bytes);
    return nowMs() - floorStarted;
  };
  for (let run = 0; run < iterations + 2; run += 1) {
    for (const { server, uploads, floors } of run % 2 === 0 ? lanes : [...lanes].reverse()) {
      // a fresh image each time (bytes appended past the image's end): never a duplicate
      const form = await multipartBody(Buffer.concat([bytes, randomBytes(8)]));
      // in turns which goes first: the server's work after an answer (its collections, its stores' writes) would
      // otherwise always fall on the floor job
      const floorBefore = run % 2 === 0 ? await floor() : undefined;
      const started = nowMs();
      const { status, answer } = await post(`${server.url}/api/1/upload`, server.apiKey, form);
      const uploadMs = nowMs() - started;
      if (status !== 200) throw new Error(`upload failed: ${answer}`);
      const floorMs = floorBefore ?? (await floor());
      if (run < 2) continue; // warm-up: the cold start and the first caches
      uploads.push(uploadMs);
      floors.push(floorMs);
    }
  }
  return lanes;
}

/** A multipart/form-data body of one file field, `source`, encoded whole (by the platform's FormData) before the clock starts. */
async function multipartBody(file: Buffer): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData();
  form.append('source', new Blob([file]), 'bench.bin');
  const encoded = new Request('http://bench.invalid/', { method: 'POST', body: form });
  return { body: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type') ?? '' };
}

/**
 * POSTs a body written at once, as curl sends a file, and reads the whole answer. The client's own work runs on the
 * same two cores as the server: `fetch` with a `FormData` took 5.5 and 8.6 ms more of each 12 MP upload than
 * this (`docs/performance.md`): the bench's work, not the service's.
 */
function post(
  url: string,
  apiKey: string,
  form: { body: Buffer; contentType: string },
): Promise<{ status: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const headers = { 'X-API-Key': apiKey, 'Content-Type': form.contentType, 'Content-Length': form.body.length };
    const sent = request(url, { method: 'POST', headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, answer: Buffer.concat(chunks).toString() }));
      response.on('error', reject);
    });
    sent.on('error', reject);
    sent.end(form.body);
  });
}
