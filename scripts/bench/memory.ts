import { spawn } from 'node:child_process';
import { commandLine } from '../command-line';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutParameterCommand } from '@aws-sdk/client-ssm';
import { localClients, provision } from '../../local/provision';
import { standInEnvironment } from '../../local/stand-ins';
import { bundleApi } from './api-bundle';
import { benchJpeg } from './fixtures';
import { startStoresProcess } from './handler';
import { EnvSettings } from '../env-settings';

/**
 * `npm run load:memory`: the memory of one instance of the bundled API function over many uploads. The handler is
 * bundled with esbuild as the stack bundles it (its node modules left out, the NSFW model beside it), and each variant runs in a
 * fresh process against the stand-ins in another: with glibc's default malloc arenas and with `MALLOC_ARENA_MAX=2`
 * (what the stack sets), 4 uploads at once (a local server's case) and one at a time (a Lambda instance's). Prints the
 * RSS every 50 uploads and a summary table. MEMORY_UPLOADS (1000) sets the uploads per variant.
 */
const ROOT = join(__dirname, '..', '..');
const settings = new EnvSettings('load:memory');
const UPLOADS = settings.whole('MEMORY_UPLOADS', 1000);
settings.check();

interface Variant {
  name: string;
  arenaMax: string | undefined;
  concurrency: number;
}

const VARIANTS: Variant[] = [
  { name: 'default arenas, 4 at once', arenaMax: undefined, concurrency: 4 },
  { name: 'MALLOC_ARENA_MAX=2, 4 at once', arenaMax: '2', concurrency: 4 },
  { name: 'MALLOC_ARENA_MAX=2, one at a time (Lambda)', arenaMax: '2', concurrency: 1 },
];

interface Report {
  done: number;
  rssMiB: number;
  heapMiB: number;
  externalMiB: number;
  seconds: number;
}

/** The handler bundled as the stack bundles it: its node modules left out, the NSFW model beside it. */
async function bundle(): Promise<string> {
  const outfile = join(ROOT, 'cdk.out', 'memory-bundle', 'handler.js');
  await bundleApi(join(ROOT, 'functions', 'roots', 'handler.ts'), outfile);
  return outfile;
}

async function runVariant(variant: Variant, handlerPath: string, env: Record<string, string>): Promise<Report[]> {
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    ...env,
    MEMORY_UPLOADS: String(UPLOADS),
    MEMORY_CONCURRENCY: String(variant.concurrency),
  };
  if (variant.arenaMax === undefined) delete childEnv['MALLOC_ARENA_MAX'];
  else childEnv['MALLOC_ARENA_MAX'] = variant.arenaMax;
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'memory-child.ts'), handlerPath], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const reports: Report[] = [];
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const report = JSON.parse(line) as Report;
      reports.push(report);
      process.stderr.write(`${variant.name}: ${report.done} uploads, RSS ${report.rssMiB.toFixed(0)} MiB\n`);
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`${variant.name}: the instance exited with ${code}`);
  return reports;
}

async function main(): Promise<void> {
  const handlerPath = await bundle();
  const input = join(ROOT, 'cdk.out', 'memory-bundle', 'input.jpg');
  writeFileSync(input, await benchJpeg());
  const stores = await startStoresProcess();
  try {
    const names = { bucket: 'memory', table: 'memory-table', parameterPrefix: '/memory' };
    // the stand-ins take requests signed with their own credentials only: the SDK finds them in the environment
    Object.assign(process.env, standInEnvironment(stores.direct));
    const { apiKey } = await provision({ endpoints: stores.direct, ...names });
    const { ssm } = localClients(stores.direct);
    await ssm.send(
      new PutParameterCommand({
        Name: '/memory/flood-limits',
        Value: '{"minute":0,"hour":0,"day":0,"week":0,"month":0}',
        Type: 'String',
        Overwrite: true,
      }),
    );
    ssm.destroy();
    const env = {
      ...stores.proxied,
      BUCKET_NAME: names.bucket,
      TABLE_NAME: names.table,
      PARAMETER_PREFIX: names.parameterPrefix,
      PUBLIC_URL: 'https://img.example.test',
      MEMORY_API_KEY: apiKey,
      MEMORY_INPUT: input,
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
    };
    const rows: string[] = [];
    for (const variant of VARIANTS) {
      const reports = await runVariant(variant, handlerPath, env);
      // the RSS once `done` uploads were made; '-' for a count past the run's
      const at = (done: number): string => reports.find((report) => report.done >= done)?.rssMiB.toFixed(0) ?? '-';
      const last = reports[reports.length - 1];
      const peak = Math.max(...reports.map((report) => report.rssMiB));
      rows.push(
        `| ${variant.name} | ${at(0)} | ${at(50)} | ${at(Math.floor(UPLOADS / 2))} | ${last?.rssMiB.toFixed(0)} | ${peak.toFixed(0)} | ${last?.heapMiB.toFixed(0)} | ${(((last?.seconds ?? 0) / UPLOADS) * 1000).toFixed(0)} |`,
      );
    }
    process.stdout.write(
      [
        '',
        `${UPLOADS} uploads of the 12 MP JPEG per variant, each in a fresh process running the bundled handler; node ${process.version}`,
        '',
        `| variant | RSS loaded (MiB) | after 50 | after ${Math.floor(UPLOADS / 2)} | after ${UPLOADS} | peak | JS heap at the end | ms per upload |`,
        '|---|---|---|---|---|---|---|---|',
        ...rows,
        '',
      ].join('\n'),
    );
  } finally {
    stores.stop();
  }
}

commandLine(
  'usage: npm run load:memory   (settings in the environment: MEMORY_UPLOADS; docs/performance.md) (exit codes: 0 done, 1 failed, 2 usage)',
);
void main();
