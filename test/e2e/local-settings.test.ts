import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makePng } from '../support/images';
import { npmStartCommand, onFreePort, startLocalProcess } from '../support/local-process';

/**
 * `npm start`'s API key and flood limits stay in the data folder, as the parameters they are in AWS: its banner says
 * where each came from, and `API_KEY=new` and `FLOOD_LIMITS=default` go back (docs/local.md, "Settings that stay").
 */
jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');
let dataDir: string;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'image-upload-settings-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** One start on the data folder with these settings: its banner's lines, and what the uploads of `sends` answered. */
async function startWith(env: Record<string, string>, sends = 0): Promise<{ lines: string[]; apiKey: string; codes: number[] }> {
  const server = await onFreePort((port) =>
    startLocalProcess({ PORT: String(port), DATA_DIR: dataDir, PARAMETERS_CACHE_SECONDS: '0', ...env }),
  );
  try {
    const codes: number[] = [];
    for (let index = 0; index < sends; index += 1) {
      const form = new FormData();
      form.append('key', server.apiKey);
      form.append('source', new Blob([await makePng(40 + index, 12)]), `s${index}.png`);
      codes.push((await fetch(`${server.url}/api/1/upload?format=json`, { method: 'POST', body: form })).status);
    }
    return { lines: server.output().split('\n'), apiKey: server.apiKey, codes };
  } finally {
    await server.stop();
  }
}

const line = (lines: string[], label: string): string => lines.find((text) => text.startsWith(`  ${label}`)) ?? '';

describe('npm start: settings that stay in the data folder', () => {
  it('says where the key and the limits came from, keeps them, and goes back to the defaults on request', async () => {
    const first = await startWith({ API_KEY: 'settings-key-0123456789', FLOOD_LIMITS: '{"minute":2,"hour":0}' }, 3);
    expect(line(first.lines, 'API key:')).toBe('  API key:    settings-key-0123456789 (from API_KEY, kept for later starts)');
    expect(line(first.lines, 'Flood:')).toBe(
      '  Flood:      2 a minute, 1000 a day, 5000 a week, 10000 a month per client (from FLOOD_LIMITS, kept for later starts)',
    );
    expect(first.codes).toEqual([200, 200, 429]);

    // a start without them: the same key and limits, said to be the data folder's
    const second = await startWith({});
    expect(second.apiKey).toBe('settings-key-0123456789');
    expect(line(second.lines, 'API key:')).toContain('(kept in the data folder; API_KEY=new makes a new one)');
    expect(line(second.lines, 'Flood:')).toBe(
      '  Flood:      2 a minute, 1000 a day, 5000 a week, 10000 a month per client (kept in the data folder; FLOOD_LIMITS=default goes back to the defaults)',
    );

    // back to the defaults, and a new random key
    const third = await startWith({ API_KEY: 'new', FLOOD_LIMITS: 'default' }, 3);
    expect(third.apiKey).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(line(third.lines, 'API key:')).toBe(`  API key:    ${third.apiKey} (new)`);
    expect(line(third.lines, 'Flood:')).toBe(
      '  Flood:      50 a minute, 500 an hour, 1000 a day, 5000 a week, 10000 a month per client (the defaults)',
    );
    expect(third.codes).toEqual([200, 200, 200]);
    expect((await startWith({})).apiKey).toBe(third.apiKey);
  });

  it('refuses flood limits it cannot read, naming the mistake, and changes nothing', async () => {
    const start = npmStartCommand();
    const run = spawnSync(process.execPath, start.args, {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...start.env, PATH: process.env['PATH'] ?? '', DATA_DIR: dataDir, PORT: '0', FLOOD_LIMITS: '{"minute":-1}' },
      timeout: 60_000,
    });
    expect([run.status, run.stderr.trim()]).toEqual([
      1,
      'invalid configuration:\n- FLOOD_LIMITS: flood limit minute must be a whole number >= 0',
    ]);
    expect(line((await startWith({})).lines, 'Flood:')).toContain('per client (the defaults)');
  });

  it('says where it listens when the public URL is elsewhere (a proxy in front)', async () => {
    const { lines } = await startWith({ PUBLIC_URL: 'https://img.example.test' });
    expect(lines).toContain('Image upload service running at https://img.example.test');
    expect(line(lines, 'Listening:')).toMatch(/^ {2}Listening: {2}http:\/\/127\.0\.0\.1:\d+$/);
    expect(line((await startWith({})).lines, 'Listening:')).toBe('');
  });
});
