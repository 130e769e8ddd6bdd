import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A person's mistake with a tool is told in a line (exit 1), without the tool's own stack trace. */
const ROOT = join(__dirname, '..', '..');
const tsx = (script: string, args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, script), ...args], {
    encoding: 'utf8',
    input: '',
    env: { PATH: process.env['PATH'] ?? '', ...env },
    timeout: 60_000,
  });

describe('tools told a mistake', () => {
  it('npm start with a bad setting names it, and nothing else', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bad-setting-'));
    try {
      const run = tsx('local/main.ts', [], { DATA_DIR: dataDir, PORT: '0', NAMING: 'clever' });
      expect([run.status, run.stderr.trim()]).toEqual([
        1,
        'invalid configuration:\n- NAMING must be one of original, random, id, got "clever"',
      ]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('map-stack without its map says so in a line', () => {
    const run = tsx('scripts/map-stack.ts', [join(tmpdir(), 'no-such-dir', 'index.js.map')]);
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^ENOENT: no such file or directory/)]);
  });

  it('smoke: usage mistakes exit 2 with one line and the usage, --help exits 0', () => {
    for (const [args, said] of [
      [[], 'missing BASE_URL and KEY'],
      [['http://127.0.0.1:9'], 'missing KEY'],
      [['img.example.com', 'key'], 'BASE_URL is not an http(s) URL: img.example.com'],
      [['http://127.0.0.1:9', 'key', 'http://127.0.0.1:9', 'more'], 'unexpected argument more'],
    ] as Array<[string[], string]>) {
      const run = tsx('scripts/smoke.ts', args);
      expect([args, run.status, run.stderr.split('\n')[0]]).toEqual([args, 2, said]);
    }
    const help = tsx('scripts/smoke.ts', ['--help']);
    expect([help.status, help.stdout]).toEqual([0, expect.stringMatching(/^usage: npm run smoke -- BASE_URL KEY/)]);
  });
});
