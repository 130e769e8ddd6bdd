import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makePng } from '../support/images';
import { startFreshLocalProcess, type LocalProcess } from '../support/local-process';
import { motoAvailable, startMoto } from '../support/moto';

/**
 * docs/local.md's AWS CLI lines, run as written with the real AWS CLI against `npm start`'s stand-ins, through their
 * signature gate: the key rotation, and the looks into the bucket and the table. The CLI signs other headers than the
 * SDK (no payload hash for SSM or DynamoDB), so a gate that re-signs as the SDK would refuse it.
 */
jest.setTimeout(90_000);

const ROOT = join(__dirname, '..', '..');
const DOC = readFileSync(join(ROOT, 'docs', 'local.md'), 'utf8');
/** The shell blocks of the doc that use the AWS CLI, in their order; the presigned link's apart. */
const blocks = [...DOC.matchAll(/```sh\n([\s\S]*?)```/g)]
  .map((match) => match[1] ?? '')
  .filter((block) => /\baws --endpoint-url\b/.test(block) || /^export AWS_/m.test(block));
const lines = blocks.filter((block) => !/ s3 presign /.test(block));
const presign = blocks.find((block) => / s3 presign /.test(block)) ?? '';

/** Whether the AWS CLI is here; CI installs Debian's where the machine has none, and must not pass without it. */
function cliAvailable(): boolean {
  const found = spawnSync('aws', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!found && process.env['CI']) throw new Error('the AWS CLI is missing: CI installs it (.ci/run)');
  if (!found) process.stderr.write('the AWS CLI is not installed: docs/local.md lines are not run\n');
  return found;
}

const suite = cliAvailable() ? describe : describe.skip;

suite("docs/local.md's AWS CLI lines, with the real CLI", () => {
  let server: LocalProcess & { dataDir: string };
  let workDir: string;

  beforeAll(async () => {
    server = await startFreshLocalProcess('aws-cli', { PARAMETERS_CACHE_SECONDS: '0' });
    // the doc's lines read `.data/endpoints.json`, as from the project's folder with the default data folder
    workDir = mkdtempSync(join(tmpdir(), 'aws-cli-'));
    symlinkSync(server.dataDir, join(workDir, '.data'));
  });

  afterAll(async () => {
    await server?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  /** Runs shell text in the work folder, with no AWS setting of this machine's (its config and credentials files). */
  const shell = (script: string, env: Record<string, string> = {}) =>
    spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: workDir,
      encoding: 'utf8',
      timeout: 60_000,
      // stdin no socket: bash takes one for a remote shell's, and reads the machine's bashrc
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: workDir,
        AWS_CONFIG_FILE: join(workDir, 'no-config'),
        AWS_SHARED_CREDENTIALS_FILE: join(workDir, 'no-credentials'),
        ...env,
      },
    });

  const upload = async (key: string): Promise<number> => {
    const form = new FormData();
    form.append('key', key);
    form.append('source', new Blob([await makePng(30, 20)]), 'cli.png');
    return (await fetch(`${server.url}/api/1/upload?format=json`, { method: 'POST', body: form })).status;
  };

  it('rotates the key, lists the files and counts the records', async () => {
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(await upload(server.apiKey)).toBe(200);
    const run = shell(lines.join('\n'));
    expect([run.status, run.stderr]).toEqual([0, '']);
    // the parameter's new version, the stored original among the files, and the one record
    expect(run.stdout).toMatch(/"Version": 2/);
    expect(run.stdout).toMatch(/images\/\d{4}\/\d\d\/\d\d\/cli\.png\n/);
    expect(run.stdout.trim().split('\n').at(-1)).toBe('1');
    // the new key is in force, the old one no longer
    expect(await upload('NEW_KEY')).toBe(200);
    expect(await upload(server.apiKey)).not.toBe(200);
  });

  it('makes a presigned link to a stored file that anyone can fetch: the gate checks it as S3 does (UNSIGNED-PAYLOAD)', async () => {
    expect(presign).toContain('curl');
    // a stored file to link to (the key is the doc's new one once the rotation above ran)
    const stored = (await upload(server.apiKey)) === 200 || (await upload('NEW_KEY')) === 200;
    expect(stored).toBe(true);
    const exports = lines.find((block) => /^export AWS_/m.test(block)) ?? '';
    const run = shell(`${exports.replace(/\naws [\s\S]*$/, '')}\n${presign}`);
    expect([run.status, run.stdout.trim().split('\n').at(-1), run.stderr]).toEqual([0, '200', '']);
  });

  it('refuses the same line signed with another secret', () => {
    const exports = lines.find((block) => /^export AWS_/m.test(block)) ?? '';
    const run = shell(
      `${exports}\nexport AWS_SECRET_ACCESS_KEY=not-the-secret\naws --endpoint-url "$(jq -r .ssm .data/endpoints.json)" ssm get-parameter --name /image-upload/api-key`,
    );
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain("it was signed with another secret than this data folder's (endpoints.json)");
  });
});

/**
 * The README's and docs/deployment.md's key lines (`aws ssm get-parameter`, `put-parameter`), as written, against
 * moto's SSM in place of an account's (`AWS_ENDPOINT_URL`): what the deployed stack's parameter answers to them.
 */
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const keyLines = [...README.matchAll(/^aws ssm (?:get|put)-parameter .*$/gm)].map((match) => match[0]);

(cliAvailable() && motoAvailable() ? describe : describe.skip)("the README's key lines, against moto's SSM", () => {
  it('reads the key, and rotates it to the one given', async () => {
    expect(keyLines).toHaveLength(2);
    const [read = '', rotate = ''] = keyLines;
    const moto = await startMoto();
    const workDir = mkdtempSync(join(tmpdir(), 'readme-key-'));
    const env = {
      PATH: process.env['PATH'] ?? '',
      HOME: workDir,
      AWS_CONFIG_FILE: join(workDir, 'no-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(workDir, 'no-credentials'),
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_DEFAULT_REGION: 'eu-west-1',
    };
    const run = (line: string) =>
      spawnSync('bash', ['-euo', 'pipefail', '-c', line], {
        cwd: workDir,
        encoding: 'utf8',
        timeout: 60_000,
        stdio: ['ignore', 'pipe', 'pipe'],
        env,
      });
    try {
      // the stack's parameter, as the setup step makes it
      expect(run(`${rotate.replace('NEW_KEY', 'first-key-0123456789')}`).status).toBe(0);
      const first = run(read);
      expect([first.stdout, first.stderr]).toEqual(['first-key-0123456789\n', '']);
      const rotated = run(rotate);
      expect([rotated.status, rotated.stderr]).toEqual([0, '']);
      expect(run(read).stdout).toBe('NEW_KEY\n');
    } finally {
      await moto.stop();
      rmSync(workDir, { recursive: true, force: true });
    }
  });
});
