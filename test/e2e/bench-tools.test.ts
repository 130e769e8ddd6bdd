import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Every `npm run` bench and load tool, run for a few uploads at the default settings (NSFW_POLICY and all), so that
 * none can rot unseen: `npm run load:memory` once failed at its first upload. Their figures mean nothing here; that
 * each runs to its end and prints its tables does.
 */
jest.setTimeout(240_000);

const ROOT = join(__dirname, '..', '..');

function npmRun(script: string, env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync('npm', ['run', '-s', script], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 230_000,
    // the machine's environment but the test stand-ins' (each tool starts its own)
    env: { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_'))), ...env },
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('the bench and load tools, for a few uploads', () => {
  it('npm run load:memory: the bundled handler, as the stack bundles it, uploads with the classifier on', () => {
    const run = npmRun('load:memory', { MEMORY_UPLOADS: '2' });
    expect([run.status, run.stderr]).toEqual([0, expect.not.stringMatching(/upload failed|Error/) as unknown]);
    expect(run.stdout).toContain('| variant | RSS loaded (MiB) |');
    expect(run.stdout.match(/^\| (default arenas|MALLOC_ARENA_MAX=2)[^|]*\| \d+ \|/gm)).toHaveLength(3);
  });

  it('npm run load: mixed traffic against npm start, no errors', () => {
    // one connection after a short warm-up: a few requests, none of them waiting on the handler's cold start
    const run = npmRun('load', { LOAD_SECONDS: '3', LOAD_WARMUP_SECONDS: '2', LOAD_CONNECTIONS: '1' });
    // what failed, if anything, is in the output the assertion shows
    expect([run.status, run.stdout.split('\n').filter((line) => line.startsWith('failed '))]).toEqual([0, []]);
    expect(run.stdout).toMatch(/^\| all \| \d+ \| [\d.]+ \| \d+ \| \d+ \| 0 \|$/m);
  });

  it('npm run bench (BENCH_SMOKE): every part, once, prints its tables', () => {
    const run = npmRun('bench', { BENCH_SMOKE: '1', BENCH_ONLY: 'PNG', BENCH_BLOCK_LISTS: '1000', BENCH_LATENCIES: '0' });
    expect([run.status, run.stderr]).toEqual([0, expect.not.stringMatching(/Error/) as unknown]);
    for (const header of [
      '| input | service p50 (ms) |',
      '| input | both (ms) |',
      '| bundle | size (MB) |',
      '| hashes | stored (MB) |',
      '| input | upload p50 (ms) |',
      '| input | stores | store latency (ms) |',
      '| checkout | upload CPU p50 (ms) |',
      '| part of the upload | CPU ms per upload |',
    ])
      expect(run.stdout).toContain(header);
    expect(run.stdout).toMatch(/^\| PNG 1920x1080 screenshot \| through the proxies \| 0 \| \d+ /m);
    // the one-core rig: the upload's CPU, its floor's, their ratio (two ways), its wall time, GC, and its CPU by thread
    expect(run.stdout).toMatch(/^\| this one( \| -?\d+\.?\d*){10} \|$/m);
    expect(run.stdout).toMatch(/^\| V8's helper threads \(marking and sweeping [^|]*\| -?\d+\.\d \| -?\d+\.\d\d \|$/m);
    expect(run.stdout).toMatch(/^With some picture blocked, the fingerprint also makes .*: \d+\.\d ms alone/m);
  });
});
