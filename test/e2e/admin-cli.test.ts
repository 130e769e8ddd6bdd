import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makePng } from '../support/images';
import { startFreshLocalProcess } from '../support/local-process';

/** `npm run admin` as an operator runs it, against `npm start`'s data folder. */
jest.setTimeout(90_000);

const ROOT = join(__dirname, '..', '..');
const API_KEY = 'admin-cli-key-0123456789';
let server: Awaited<ReturnType<typeof startFreshLocalProcess>>;

beforeAll(async () => {
  server = await startFreshLocalProcess('admin', { API_KEY, KEY_CACHE_SECONDS: '0' });
});

afterAll(async () => {
  await server?.stop();
});

function runAdmin(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'scripts', 'admin.ts'), ...args],
    {
      encoding: 'utf8',
      timeout: 30_000,
      env,
    },
  );
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

function admin(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return runAdmin(['--data-dir', server.dataDir, ...args]);
}

async function upload(seed: number): Promise<{ id_encoded: string; url: string; url_viewer: string }> {
  const form = new FormData();
  form.append('source', new Blob([await makePng(30 + seed, 30)]), `cli${seed}.png`);
  const response = await fetch(`${server.url}/api/1/upload`, { method: 'POST', headers: { 'X-API-Key': API_KEY }, body: form });
  return ((await response.json()) as { image: { id_encoded: string; url: string; url_viewer: string } }).image;
}

describe('npm run admin (local service)', () => {
  it('lists, takes down (by viewer URL), and says so; a second takedown exits non-zero', async () => {
    const image = await upload(1);
    const listed = admin('list', '--json');
    expect(listed.status).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ viewerUrl: string }>).map((entry) => entry.viewerUrl)).toContain(
      image.url_viewer,
    );
    const done = admin('takedown', image.url_viewer, '--block');
    expect([done.status, done.stderr]).toEqual([0, '']);
    expect(done.stdout).toContain(`took down ${image.id_encoded}`);
    expect(done.stdout).toContain('blocked its bytes');
    expect((await fetch(image.url)).status).toBe(404);
    expect((await fetch(image.url_viewer)).status).toBe(404);
    const again = admin('takedown', image.url_viewer);
    expect([again.status, again.stderr.trim()]).toEqual([1, `no image ${image.url_viewer}: unknown, or taken down already`]);
  });

  it('bans and unbans a range, lists the bans, and refuses a bad range', () => {
    expect(admin('ban', '203.0.113.0/24', '--for', '2h').stdout).toMatch(/^banned 203\.0\.113\.0\/24 until \d{4}-\d\d-\d\d /);
    expect(admin('bans').stdout).toMatch(/^203\.0\.113\.0\/24\tuntil /m);
    expect(admin('unban', '203.0.113.0/24').stdout).toContain('lifted the ban of 203.0.113.0/24');
    expect(admin('bans').stdout.trim()).toBe('no bans');
    const bad = admin('ban', 'nonsense');
    expect([bad.status, bad.stderr.trim()]).toEqual([1, 'not an address or CIDR range: nonsense']);
  });

  it('prints the daily figures, and its usage for an unknown command', () => {
    const stats = admin('stats', '--days', '2');
    expect(stats.status).toBe(0);
    expect(stats.stdout.split('\n')[0]).toBe('day (UTC)\tuploads\tbytes\trefusals');
    expect(stats.stdout.trim().split('\n')).toHaveLength(3);
    const bad = admin('stats', '--days', 'lots');
    expect([bad.status, bad.stderr.trim()]).toEqual([1, '--days must be a whole number from 1 to 3660: lots']);
    const unknown = admin('frobnicate');
    expect(unknown.status).toBe(2);
    expect(unknown.stdout).toContain('usage: npm run admin --');
  });

  it("works from a stack's outputs file, with the id padding it names", async () => {
    const image = await upload(2);
    // cdk deploy --outputs-file, for a stack whose stores are this service's stand-ins
    const endpoints = JSON.parse(readFileSync(join(server.dataDir, 'endpoints.json'), 'utf8')) as Record<string, string>;
    const outputs = (padding: string) => {
      const file = join(server.dataDir, `outputs-${padding}.json`);
      const stack = {
        BucketName: endpoints['bucket'],
        TableName: endpoints['table'],
        BaseUrl: `${server.url}/`,
        ApiKeyParameter: `${endpoints['parameterPrefix']}/api-key`,
        IdPadding: padding,
      };
      writeFileSync(file, JSON.stringify({ ImageUpload: stack }));
      return file;
    };
    const env = {
      ...process.env,
      AWS_ENDPOINT_URL_S3: endpoints['s3'],
      AWS_ENDPOINT_URL_DYNAMODB: endpoints['dynamodb'],
      AWS_ENDPOINT_URL_SSM: endpoints['ssm'],
      AWS_REGION: endpoints['region'],
      AWS_ACCESS_KEY_ID: endpoints['accessKeyId'],
      AWS_SECRET_ACCESS_KEY: endpoints['secretAccessKey'],
    };
    const viewerUrls = (file: string) =>
      (JSON.parse(runAdmin(['--outputs', file, 'list', '--json'], env).stdout) as Array<{ viewerUrl: string }>).map(
        (entry) => entry.viewerUrl,
      );
    expect(viewerUrls(outputs('999'))).toContain(image.url_viewer);
    // another padding is another codec: the same ids read as other links
    expect(viewerUrls(outputs('5'))).not.toContain(image.url_viewer);
  });
});
