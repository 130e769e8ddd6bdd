import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { commandLine } from './command-line';
import { EnvSettings } from './env-settings';
import { freePort, startLocalProcess } from '../test/support/local-process';

/**
 * `npm run load`: drives the local server (its own process, on a fresh data folder) with mixed uploads and page views
 * over LOAD_CONNECTIONS (4) connections: LOAD_WARMUP_SECONDS (20) of warm-up, then LOAD_SECONDS (60) measured. Reports
 * throughput, latency percentiles, errors, and the server's memory at the start and the end of the measured part.
 */
const settings = new EnvSettings('load');
const SECONDS = settings.whole('LOAD_SECONDS', 60);
/** Load before the measurement: the allocator's arenas, V8's heap and the stand-ins' buffers grow to their working size. */
const WARMUP_SECONDS = settings.whole('LOAD_WARMUP_SECONDS', 20, 0);
const CONNECTIONS = settings.whole('LOAD_CONNECTIONS', 4);
settings.check();
const API_KEY = 'load-test-key';

interface Sample {
  kind: string;
  ms: number;
  ok: boolean;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** A JPEG made unique by a random comment (removed when stored, but it changes the md5 the duplicate check sees). */
function unique(jpeg: Buffer): Buffer {
  const comment = Buffer.concat([Buffer.from([0xff, 0xfe, 0, 18]), randomBytes(16)]);
  return Buffer.concat([jpeg.subarray(0, 2), comment, jpeg.subarray(2)]);
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'image-upload-load-'));
  const port = await freePort();
  const server = await startLocalProcess({
    PORT: String(port),
    DATA_DIR: dataDir,
    API_KEY,
    FLOOD_LIMITS: '{"minute":0,"hour":0,"day":0,"week":0,"month":0}',
    POWERTOOLS_LOG_LEVEL: 'WARN',
    // as the function in AWS keeps it, not npm start's 0
    MODERATION_CACHE_SECONDS: '30',
    MEMORY_REPORT_SECONDS: '10',
  });
  const pid = server.pid;
  const base = server.url;
  const photo = await sharp({
    create: { width: 1600, height: 1200, channels: 3, background: '#456', noise: { type: 'gaussian', mean: 120, sigma: 40 } },
  })
    .jpeg({ quality: 85 })
    .toBuffer();
  const gifFrames = await sharp({
    create: { width: 120, height: 80 * 6, channels: 4, background: '#0000', noise: { type: 'gaussian', mean: 128, sigma: 60 } },
  })
    .raw()
    .toBuffer();
  const gif = await sharp(gifFrames, { raw: { width: 120, height: 480, channels: 4, pageHeight: 80 } })
    .gif({ loop: 0 })
    .toBuffer();
  const viewers: string[] = [];
  const samples: Sample[] = [];

  const smallPng = (): Promise<Buffer> =>
    sharp(randomBytes(32 * 24 * 3), { raw: { width: 32, height: 24, channels: 3 } })
      .png()
      .toBuffer();
  const kinds: Array<[string, number, () => Promise<Response>]> = [
    [
      'multipart JPEG 1600x1200',
      40,
      async () => {
        const form = new FormData();
        form.append('source', new Blob([unique(photo)]), 'photo.jpg');
        form.append('key', API_KEY);
        return fetch(`${base}/api/1/upload`, { method: 'POST', body: form });
      },
    ],
    [
      'urlencoded base64 PNG',
      25,
      async () => {
        const body = new URLSearchParams({ key: API_KEY, source: (await smallPng()).toString('base64') });
        return fetch(`${base}/api/1/upload`, { method: 'POST', body });
      },
    ],
    [
      'GET query base64, format=txt',
      15,
      async () => {
        const query = new URLSearchParams({ key: API_KEY, format: 'txt', source: (await smallPng()).toString('base64') });
        return fetch(`${base}/api/1/upload?${query.toString()}`);
      },
    ],
    [
      'multipart animated GIF',
      10,
      async () => {
        const form = new FormData();
        form.append(
          'source',
          new Blob([
            Buffer.concat([
              gif.subarray(0, gif.length - 1),
              Buffer.from([0x21, 0xfe, 8]),
              randomBytes(8),
              Buffer.from([0, 0x3b]),
            ]),
          ]),
          'loop.gif',
        );
        form.append('key', API_KEY);
        return fetch(`${base}/api/1/upload`, { method: 'POST', body: form });
      },
    ],
    [
      'viewer page + medium',
      10,
      async () => {
        const viewer = viewers[Math.floor(Math.random() * viewers.length)];
        if (!viewer) return fetch(`${base}/image/none`);
        const page = await fetch(viewer);
        const html = await page.text();
        // the picture's, not the header's icon
        const medium = /<div class="picture">(?:<a [^>]*>)?<img src="([^"]+)"/.exec(html)?.[1];
        if (medium) await (await fetch(medium)).arrayBuffer();
        return new Response(html, { status: page.status });
      },
    ],
  ];
  const totalWeight = kinds.reduce((sum, [, weight]) => sum + weight, 0);
  const pick = (): [string, number, () => Promise<Response>] => {
    let roll = Math.random() * totalWeight;
    for (const kind of kinds) {
      roll -= kind[1];
      if (roll < 0) return kind;
    }
    return kinds[0]!;
  };

  /** Why requests failed, and how often: said after the table, so that a failing run says what failed. */
  const failures = new Map<string, number>();
  const failed = (why: string): void => void failures.set(why, (failures.get(why) ?? 0) + 1);
  const drive = async (untilMs: number, record: boolean): Promise<void> => {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (Date.now() < untilMs) {
          const [kind, , run] = pick();
          const started = process.hrtime.bigint();
          let ok = false;
          try {
            const response = await run();
            const text = await response.text();
            ok = response.status === 200;
            if (ok && kind.startsWith('multipart'))
              viewers.push((JSON.parse(text) as { image: { url_viewer: string } }).image.url_viewer);
            if (!ok && record) failed(`${response.status} ${text.slice(0, 120)}`);
          } catch (error) {
            ok = false;
            if (record) failed(String(error));
          }
          if (record) samples.push({ kind, ms: Number(process.hrtime.bigint() - started) / 1e6, ok });
        }
      }),
    );
  };

  await drive(Date.now() + WARMUP_SECONDS * 1000, false);
  const rssStart = rssMiB(pid);
  let rssMax = rssStart;
  const rssTimeline: number[] = [];
  let ticks = 0;
  const memoryTimer = setInterval(() => {
    const rss = rssMiB(pid);
    rssMax = Math.max(rssMax, rss);
    ticks += 1;
    if (ticks % 20 === 0) rssTimeline.push(rss);
  }, 500);
  await drive(Date.now() + SECONDS * 1000, true);
  clearInterval(memoryTimer);
  const rssEnd = rssMiB(pid);
  // the server's own view of its memory, every 10 s: the JavaScript heap apart from native memory
  const heapLines = [...server.output().matchAll(/memory rss=([\d.]+) heapUsed=([\d.]+) external=([\d.]+)/g)];
  const measured = heapLines.slice(Math.floor(WARMUP_SECONDS / 10));
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });

  const percentile = (values: number[], p: number): number => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
  };
  const row = (label: string, list: Sample[]): string =>
    `| ${label} | ${list.length} | ${(list.length / SECONDS).toFixed(1)} | ${percentile(
      list.map((s) => s.ms),
      50,
    ).toFixed(0)} | ${percentile(
      list.map((s) => s.ms),
      99,
    ).toFixed(0)} | ${list.filter((s) => !s.ok).length} |`;
  process.stdout.write(
    [
      '',
      `${SECONDS} s measured after ${WARMUP_SECONDS} s of warm-up, ${CONNECTIONS} connections, node ${process.version}`,
      '',
      '| requests | count | per second | p50 (ms) | p99 (ms) | errors |',
      '|---|---|---|---|---|---|',
      row('all', samples),
      ...kinds.map(([kind]) =>
        row(
          kind,
          samples.filter((sample) => sample.kind === kind),
        ),
      ),
      '',
      `server RSS: ${rssStart.toFixed(0)} MiB at the start of the measurement, ${rssEnd.toFixed(0)} MiB at its end, ${rssMax.toFixed(0)} MiB at most`,
      `server RSS every 10 s: ${rssTimeline.map((rss) => rss.toFixed(0)).join(', ')} MiB`,
      `server JavaScript heap used every 10 s: ${measured.map((line) => Number(line[2]).toFixed(0)).join(', ')} MiB; external (Buffers): ${measured.map((line) => Number(line[3]).toFixed(0)).join(', ')} MiB`,
      '',
    ].join('\n'),
  );
  for (const [why, count] of failures) process.stdout.write(`failed ${count} times: ${why}\n`);
  if (samples.some((sample) => !sample.ok)) process.exitCode = 1;
}

commandLine(
  'usage: npm run load   (settings in the environment: LOAD_SECONDS, LOAD_WARMUP_SECONDS, LOAD_CONNECTIONS; docs/reliability.md) (exit codes: 0 done, 1 failed, 2 usage)',
);
void main();
