import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { documentedCommands } from '../support/doc-commands';
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
  /** `npm start` on a fresh data folder with these settings, as it ends (a mistake ends it at once). */
  const npmStart = (env: Record<string, string>) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bad-setting-'));
    try {
      return tsx('local/main.ts', [], { DATA_DIR: dataDir, PORT: '0', ...env });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  };

  it('npm start with a bad setting names it, and nothing else', () => {
    const run = npmStart({ NAMING: 'clever' });
    expect([run.status, run.stderr.trim()]).toEqual([
      1,
      'invalid configuration:\n- NAMING must be one of original, random, id, got "clever"',
    ]);
  });

  it('npm start with the endpoints of only some stores names those missing, in a line', () => {
    const run = npmStart({ AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9' });
    expect([run.status, run.stderr.trim()]).toEqual([
      1,
      'invalid configuration:\n- external stores need an endpoint for S3, DynamoDB and SSM; set AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SSM',
    ]);
  });

  it('bench, load and load:memory name every setting that is not one they take, before they run', () => {
    const bench = tsx('scripts/bench/index.ts', [], { BENCH_ITERATIONS: 'lots', BENCH_PART: 'cpus', BENCH_LATENCIES: '0,x' });
    expect([bench.status, bench.stdout, bench.stderr]).toEqual([
      1,
      '',
      [
        'npm run bench: invalid settings:',
        '- BENCH_ITERATIONS must be a whole number of at least 1, got "lots"',
        '- BENCH_PART must be one of whole-upload, block-lists, cpu, gif-frames, got "cpus"',
        '- BENCH_LATENCIES must be whole numbers of at least 0, separated by commas, got "0,x"',
        '',
      ].join('\n'),
    ]);
    const load = tsx('scripts/load.ts', [], { LOAD_SECONDS: '-5', LOAD_CONNECTIONS: '2.5' });
    expect([load.status, load.stderr.split('\n')]).toEqual([
      1,
      [
        'npm run load: invalid settings:',
        '- LOAD_SECONDS must be a whole number of at least 1, got "-5"',
        '- LOAD_CONNECTIONS must be a whole number of at least 1, got "2.5"',
        '',
      ],
    ]);
    const memory = tsx('scripts/bench/memory.ts', [], { MEMORY_UPLOADS: 'NaN' });
    expect([memory.status, memory.stderr.split('\n')[1]]).toEqual([
      1,
      '- MEMORY_UPLOADS must be a whole number of at least 1, got "NaN"',
    ]);
  });

  it('cdk synth with bad -c values names each by its key, without a stack trace', () => {
    // what the CDK CLI hands the app for `-c thumbSize=big -c thumbsize=320`
    const run = tsx('bin/app.ts', [], { CDK_CONTEXT_JSON: JSON.stringify({ thumbSize: 'big', thumbsize: '320' }) });
    expect([run.status, run.stdout, run.stderr]).toEqual([
      1,
      '',
      [
        'invalid context:',
        '- context thumbsize is not one the stack reads: did you mean thumbSize?',
        '- context thumbSize must be a whole number from 16 to 2000, got "big"',
        '',
      ].join('\n'),
    ]);
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

  /** The tools whose settings are in the environment, and client-config, by their npm name and script. */
  const TOOLS: Array<[string, string, number]> = [
    ['bench', 'scripts/bench/index.ts', 0],
    ['load', 'scripts/load.ts', 0],
    ['load:memory', 'scripts/bench/memory.ts', 0],
    ['openapi', 'scripts/openapi.ts', 0],
    ['build:browser', 'scripts/build-browser.ts', 0],
    ['docs:settings', 'scripts/settings-doc.ts', 0],
    ['map-stack', 'scripts/map-stack.ts', 1],
    ['client-config', 'scripts/client-config.ts', 3],
  ];

  it.each(TOOLS)(
    'npm run %s: --help exits 0 with its usage; an unknown option or an extra argument exits 2 in a line',
    (name, script, takes) => {
      const help = tsx(script, ['--help']);
      expect([help.status, help.stdout.split('\n')[0]]).toEqual([
        0,
        expect.stringMatching(new RegExp(`^usage: npm run ${name}\\b`)),
      ]);
      const unknown = tsx(script, ['--nonsense']);
      expect([unknown.status, unknown.stderr.split('\n')[0]]).toEqual([2, 'unknown option --nonsense']);
      // more arguments than it takes (client-config's are a client, a URL and a key)
      const extra =
        takes === 3
          ? ['sharex', 'http://127.0.0.1:9', 'key', 'more']
          : Array.from({ length: takes + 1 }, (_, at) => `extra${at}`);
      const run = tsx(script, extra);
      expect([run.status, run.stderr.split('\n')[0]]).toEqual([2, `unexpected argument: ${extra.at(-1) ?? ''}`]);
    },
  );
});

/** Each command line of a tool but the admin's the docs show, every URL sent to a closed port of this machine. */
function documentedLines(): Array<{ where: string; name: string; args: string[] }> {
  return documentedCommands()
    .filter(({ name }) => name !== 'admin')
    .map(({ where, name, line }) => ({
      where,
      name,
      // quoted values ("Holiday") as the shell passes them
      args: [...line.matchAll(/"([^"]*)"|(\S+)/g)]
        .map((token) => token[1] ?? token[2] ?? '')
        .map((arg) => (/^https?:\/\//.test(arg) || /^[A-Z_]*URL$/.test(arg) ? 'http://127.0.0.1:9' : arg)),
    }));
}

describe('the command lines the docs show', () => {
  it('are taken by their tools: none is a usage error (exit 2), whatever else comes of it here', () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const lines = documentedLines();
    expect(lines.map(({ name }) => name).sort()).toEqual(
      expect.arrayContaining(['client-config', 'map-stack', 'smoke', 'upload']),
    );
    const cwd = mkdtempSync(join(tmpdir(), 'documented-'));
    try {
      const refused = lines.flatMap(({ where, name, args }) => {
        const script = /^tsx (\S+)$/.exec(scripts[name] ?? '')?.[1];
        if (!script) return [`${where}: not a tsx script`];
        const run = spawnSync(
          process.execPath,
          [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, script), ...args],
          {
            cwd,
            encoding: 'utf8',
            input: '',
            env: { PATH: process.env['PATH'] ?? '' },
            timeout: 60_000,
          },
        );
        return run.status === 2 ? [`${where}: ${run.stderr.split('\n')[0]}`] : [];
      });
      expect(refused).toEqual([]);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe('npm itself', () => {
  it("reads the project's .npmrc without a warning: every key in it is one npm knows", () => {
    const run = spawnSync('npm', ['config', 'get', 'ignore-scripts'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect([run.status, run.stdout.trim()]).toEqual([0, 'true']);
    expect(run.stderr).not.toMatch(/Unknown (project|user|env|cli|builtin) config/i);
  });
});
