import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { makePhoto, makePng } from '../support/images';
import { main as adminMain } from '../../scripts/admin';
import { UsageError } from '../../scripts/admin-verbs';
import { freePort, runAdmin, startFreshLocalProcess } from '../support/local-process';

/** `npm run admin` as an operator runs it, against `npm start`'s data folder. */
jest.setTimeout(90_000);

const API_KEY = 'admin-cli-key-0123456789';
let server: Awaited<ReturnType<typeof startFreshLocalProcess>>;

beforeAll(async () => {
  // npm start's own moderation cache (none): a block made here is in force at the next upload
  server = await startFreshLocalProcess('admin', { API_KEY, PARAMETERS_CACHE_SECONDS: '0' });
});

afterAll(async () => {
  await server?.stop();
});

function admin(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return runAdmin(['--data-dir', server.dataDir, ...args]);
}

/**
 * fetch, after a turn of the loop: the admin runs before it (spawnSync) hold this process's event loop, a dozen of them
 * in a row for a minute or more on a loaded machine, past the server's keep-alive (`KEEP_ALIVE_MS`); the turn lets
 * fetch see a connection the server closed meanwhile, rather than write a request to it (EPIPE).
 */
async function send(url: string, init?: RequestInit): Promise<Response> {
  await new Promise((resolve) => setTimeout(resolve, 20));
  return fetch(url, init);
}

async function upload(seed: number, bytes?: Buffer): Promise<{ id_encoded: string; url: string; url_viewer: string }> {
  const form = new FormData();
  form.append('source', new Blob([bytes ?? (await makePng(30 + seed, 30))]), `cli${seed}.png`);
  const response = await send(`${server.url}/api/1/upload`, { method: 'POST', headers: { 'X-API-Key': API_KEY }, body: form });
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
    expect((await send(image.url)).status).toBe(404);
    expect((await send(image.url_viewer)).status).toBe(404);
    const again = admin('takedown', image.url_viewer);
    expect([again.status, again.stderr.trim()]).toEqual([
      1,
      `no image ${image.url_viewer}: unknown, taken down, or removed for good`,
    ]);
  });

  it("blocks a takedown's picture by a batch a part, which blocks and unblock name; lifted whole, they go", async () => {
    const photo = await makePhoto(21, 320, 240);
    const image = await upload(21, photo);
    const done = admin('takedown', image.id_encoded, '--block');
    expect([done.status, done.stderr]).toEqual([0, '']);
    // when the block holds, where the tool ran: npm start keeps no moderation cache, so at its next upload
    expect(done.stdout).toMatch(
      /edited copies of it are refused too \(in force at the next upload: npm start keeps no moderation cache\)\n/,
    );
    // a copy re-encoded and uploaded at once is refused
    const copy = await sharp(photo).jpeg({ quality: 70 }).toBuffer();
    const form = new FormData();
    form.append('source', new Blob([new Uint8Array(copy)]), 'copy.jpg');
    const refused = await send(`${server.url}/api/1/upload`, { method: 'POST', headers: { 'X-API-Key': API_KEY }, body: form });
    expect([refused.status, ((await refused.json()) as { error: { code: number } }).error.code]).toEqual([403, 151]);
    // its own hashes, then its crops': two batches, named by the image and the part
    const listed = JSON.parse(admin('blocks', '--json').stdout) as {
      pictures: Array<{ id: number; reason: string; count: number }>;
    };
    expect(listed.pictures.map((batch) => batch.reason)).toEqual([
      `taken down: ${image.id_encoded}`,
      `taken down: ${image.id_encoded}, its crops`,
    ]);
    const [, crops] = listed.pictures;
    expect(crops?.count).toBeGreaterThan(10);
    const blocks = admin('blocks').stdout;
    expect(blocks).toContain(`\ttaken down: ${image.id_encoded}, its crops\n`);
    // a hash of its own lifted: the rest of the takedown, by batch, still blocks the picture
    const hash = /blocked its picture \(PDQ ([0-9a-f]{64})/.exec(done.stdout)?.[1];
    const lifted = admin('unblock', hash ?? '');
    expect(lifted.stdout).toContain(
      `the rest of its takedown still blocks that picture, by batch ${crops?.id} (taken down: ${image.id_encoded}, its crops): ${crops?.count} more`,
    );
    for (const batch of listed.pictures) admin('unblock', String(batch.id));
    expect(admin('blocks').stdout).toContain('blocked pictures: 0, in 0 batches');
  });

  it('bans and unbans a range, lists the bans, and refuses a bad range', () => {
    expect(admin('ban', '203.0.113.0/24', '--for', '2h').stdout).toMatch(/^banned 203\.0\.113\.0\/24 until \d{4}-\d\d-\d\d /);
    expect(admin('bans').stdout).toMatch(/^range\tuntil\n203\.0\.113\.0\/24\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n$/);
    expect(admin('unban', '203.0.113.0/24').stdout).toContain('lifted the ban of 203.0.113.0/24');
    expect(admin('bans').stdout.trim()).toBe('no bans');
    const bad = admin('ban', 'nonsense');
    expect([bad.status, bad.stderr.trim()]).toEqual([1, 'not an address or CIDR range: nonsense']);
    const wide = admin('ban', '::ffff:1.2.3.4/90');
    expect([wide.status, wide.stderr]).toEqual([1, expect.stringContaining('IPv4-mapped range needs a prefix of 96 or more')]);
  });

  it('bans by an IPv4-mapped range, for an ISO 8601 duration, and the client it names is refused', async () => {
    // the local server sees this suite's uploads from 127.0.0.1
    const ban = admin('ban', '::ffff:127.0.0.1/128', '--for', 'PT10M');
    expect([ban.status, ban.stderr]).toEqual([0, '']);
    expect(ban.stdout).toMatch(/^banned 127\.0\.0\.1\/32 until \d{4}-\d\d-\d\d /);
    const form = new FormData();
    form.append('source', new Blob([await makePng(44, 30)]), 'banned.png');
    const refused = await send(`${server.url}/api/1/upload`, { method: 'POST', headers: { 'X-API-Key': API_KEY }, body: form });
    expect([refused.status, ((await refused.json()) as { error: { code: number } }).error.code]).toEqual([403, 150]);
    expect(admin('unban', '127.0.0.1').status).toBe(0);
    expect(admin('ban', '198.51.100.0/24', '--for', 'P7D').stdout).toMatch(/^banned 198\.51\.100\.0\/24 until /);
    expect(admin('unban', '198.51.100.0/24').status).toBe(0);
    const nonsense = admin('ban', '198.51.100.0/24', '--for', 'PT');
    expect([nonsense.status, nonsense.stderr.trim()]).toEqual([1, 'not a duration: PT (say 30m, 12h, 7d, 2w, or PT10M, P7D)']);
  });

  it('says the local service is not running when its stores do not answer, not "try again"', async () => {
    const endpoints = JSON.parse(readFileSync(join(server.dataDir, 'endpoints.json'), 'utf8')) as Record<string, string>;
    const stopped = mkdtempSync(join(tmpdir(), 'image-upload-stopped-'));
    try {
      const closed = `http://127.0.0.1:${await freePort()}`;
      writeFileSync(join(stopped, 'endpoints.json'), JSON.stringify({ ...endpoints, s3: closed, dynamodb: closed, ssm: closed }));
      // every verb says so, the key's too (its parameter is read by the SDK's client, not an adapter)
      for (const verb of [['bans'], ['key', 'show'], ['key', 'rotate']]) {
        const run = runAdmin(['--data-dir', stopped, ...verb]);
        expect([verb, run.status, run.stderr.trim()]).toEqual([
          verb,
          1,
          'the local service is not running: start it with `npm start`',
        ]);
      }
      // an endpoints file that is not its JSON, or lacks a store, is named, with what to do
      const file = join(stopped, 'endpoints.json');
      writeFileSync(file, '{not json');
      const corrupt = runAdmin(['--data-dir', stopped, 'bans']);
      expect([corrupt.status, corrupt.stderr]).toEqual([1, `${file} is not JSON: npm start writes it anew, start it once\n`]);
      writeFileSync(file, JSON.stringify({ ...endpoints, table: undefined, ssm: '' }));
      const incomplete = runAdmin(['--data-dir', stopped, 'bans']);
      expect([incomplete.status, incomplete.stderr]).toEqual([
        1,
        `${file} does not name table, ssm: npm start writes it anew, start it once\n`,
      ]);
    } finally {
      rmSync(stopped, { recursive: true, force: true });
    }
  });

  it('names a file it cannot read, a stack it cannot reach, and stops quietly when its reader does', () => {
    const missing = join(tmpdir(), 'no-such-dir', 'outputs.json');
    expect(runAdmin(['--outputs', missing, 'bans']).stderr).toBe(`--outputs ${missing}: no such file\n`);
    const folder = mkdtempSync(join(tmpdir(), 'outputs-'));
    try {
      expect(runAdmin(['--outputs', folder, 'bans']).stderr).toBe(`--outputs ${folder}: a folder, not a file\n`);
      writeFileSync(join(folder, 'o.json'), 'not json');
      expect(runAdmin(['--outputs', join(folder, 'o.json'), 'bans']).stderr).toBe(
        `--outputs ${join(folder, 'o.json')}: not JSON, not the file cdk deploy --outputs-file writes\n`,
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    const list = admin('block-hashes', 'import', missing);
    expect([list.status, list.stderr]).toEqual([1, `the hash list ${missing}: no such file\n`]);
    // a stack, without a region, then without credentials (and no instance metadata to ask: nothing leaves this machine)
    const bare = { HOME: mkdtempSync(join(tmpdir(), 'home-')), AWS_EC2_METADATA_DISABLED: 'true' };
    const noRegion = runAdmin(['--stack', 'ImageUpload', 'bans'], bare);
    expect([noRegion.status, noRegion.stderr]).toEqual([
      1,
      '--stack ImageUpload: no AWS region is set: set AWS_REGION (or AWS_PROFILE, a profile with one)\n',
    ]);
    const noCredentials = runAdmin(['--stack', 'ImageUpload', 'bans'], { ...bare, AWS_REGION: 'eu-west-1' });
    expect([noCredentials.status, noCredentials.stderr]).toEqual([
      1,
      '--stack ImageUpload: no AWS credentials were found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY\n',
    ]);
    rmSync(bare.HOME, { recursive: true, force: true });
    // `| head -1`: the reader is gone (here before the first line: `true` reads nothing), and the tool ends quietly
    const root = join(__dirname, '..', '..');
    const command = [process.execPath, join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(root, 'scripts', 'admin.ts')]
      .concat(['--data-dir', server.dataDir, 'list'])
      .map((word) => `'${word}'`)
      .join(' ');
    const piped = spawnSync('bash', ['-c', `set -o pipefail; ${command} | true; echo "exit $?" >&2`], { encoding: 'utf8' });
    expect(piped.stderr).toBe('exit 0\n');
  });

  it('prints the daily figures, and its usage for an unknown command', () => {
    const stats = admin('stats', '--days', '2');
    expect(stats.status).toBe(0);
    expect(stats.stdout.split('\n')[0]).toBe('day (UTC)\tuploads\tbytes\trefusals\twithout key\treports');
    // two days, then what waits in the staging place now, and how far the figures trail the uploads
    expect(stats.stdout.trim().split('\n')).toHaveLength(5);
    expect(stats.stdout.trim().split('\n')[3]).toMatch(/^staged now: \d+ files, \d+(\.\d)? [kMG]?B /);
    expect(stats.stdout.trim().split('\n')[4]).toBe(
      'uploads and bytes are counted by the sweep about 15 minutes after each upload (docs/operations.md)',
    );
    const bad = admin('stats', '--days', 'lots');
    expect([bad.status, bad.stderr.trim()]).toEqual([1, '--days must be a whole number from 1 to 3660: lots']);
  });

  it('explains itself: help (exit 0), one-line usage errors naming what is wrong (exit 2), failures (exit 1)', async () => {
    // the exit codes, as a shell sees them
    const help = runAdmin(['--help']);
    expect([help.status, help.stderr]).toEqual([0, '']);
    expect(help.stdout).toMatch(/^usage: npm run admin -- \[TARGET\] COMMAND/);
    const missing = admin('takedown');
    expect([missing.status, missing.stdout, missing.stderr]).toEqual([
      2,
      '',
      'takedown: missing REFERENCE (npm run admin -- help takedown)\n',
    ]);
    const failed = admin('info', 'zzzzzz');
    expect([failed.status, failed.stdout]).toEqual([1, '']);
    // the rest in this process: what each says
    const printed: string[] = [];
    const output = { print: (line: string) => void printed.push(line), progress: () => undefined, warn: () => undefined };
    for (const asked of [['-h'], ['help']]) {
      printed.length = 0;
      expect(await adminMain(asked, output)).toBe(0);
      for (const verb of ['takedown', 'restore', 'info', 'blocks', 'unblock', 'unban', 'key show|rotate', 'list'])
        expect(printed.join('\n')).toContain(`\n  ${verb}`);
      expect(printed.join('\n')).toContain('exit codes: 0 done, 1 failed, 2 usage');
    }
    for (const asked of [
      ['help', 'restore'],
      ['restore', '--help'],
    ]) {
      printed.length = 0;
      expect(await adminMain(asked, output)).toBe(0);
      expect(printed.join('\n').split('\n')[0]).toBe('usage: npm run admin -- [TARGET] restore REFERENCE');
    }
    const usage: Array<[string[], string]> = [
      [[], 'no command given (npm run admin -- --help lists them)'],
      [['frobnicate'], 'no command frobnicate (npm run admin -- --help lists them)'],
      [['help', 'frobnicate'], 'no command frobnicate (npm run admin -- --help lists them)'],
      [['block-hashes', 'import'], 'block-hashes: missing FILE (npm run admin -- help block-hashes)'],
      [['bans', 'extra'], 'bans: unexpected argument extra (npm run admin -- help bans)'],
      [['list', '--days', '2'], 'list: it takes no --days (npm run admin -- help list)'],
      [['list', '--frob'], 'unknown option --frob (npm run admin -- --help)'],
      [['stats', '--days'], '--days needs a value (npm run admin -- --help)'],
    ];
    for (const [args, said] of usage) {
      const run = adminMain(['--data-dir', server.dataDir, ...args], output);
      await expect(run).rejects.toThrow(UsageError);
      await expect(run).rejects.toThrow(said);
    }
  });

  it('shows all that is kept of an image, and its reports in the singular; JSON dates in ISO 8601', async () => {
    // a photo: its picture has a PDQ hash
    const image = await upload(11, await makePhoto(11, 240, 180));
    await send(`${server.url}/image/${image.id_encoded}/report`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'same-origin', Origin: server.url },
      body: new URLSearchParams({ reason: 'spam', note: 'ads' }).toString(),
    });
    const info = admin('info', image.url_viewer);
    expect([info.status, info.stderr]).toEqual([0, '']);
    const rows = info.stdout.split('\n');
    expect(rows[0]).toBe(`image        ${image.id_encoded} ${image.url_viewer}`);
    expect(rows).toContain('status       active');
    expect(rows.filter((row) => row.startsWith('file         images/'))).toHaveLength(3);
    expect(rows).toContain('delete links 1 issued, unused; their uploads end never');
    expect(rows).toContain('reports      1 report (spam 1)');
    expect(rows).toContain('             "ads"');
    expect(rows.find((row) => row.startsWith('pdq'))).toMatch(/^pdq {10}[0-9a-f]{64}(, [0-9a-f]{64})? \(quality \d+\)$/);
    const json = JSON.parse(admin('info', image.id_encoded, '--json').stdout) as Record<string, unknown>;
    expect(json['createdAt']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(json).not.toHaveProperty('createdAtMs');
    expect([json['expiresAt'], json['restorableUntil']]).toEqual([null, null]);
    expect(admin('reports').stdout).toContain('\t1 report (spam 1)\t');
    const listed = admin('list');
    expect(listed.stdout.split('\n')[0]).toBe('id\tviewer\tsize\tclient\tuploaded (UTC)\tnsfw\texpires (UTC)');
    expect((JSON.parse(admin('list', '--json').stdout) as Array<Record<string, unknown>>)[0]).toMatchObject({
      createdAt: expect.stringMatching(/Z$/) as unknown,
      expiresAt: null,
    });
    // the local service has no CDN, and says nothing of one
    const done = admin('takedown', image.id_encoded);
    expect(done.stdout).toMatch(
      /^took down \w+: removed images\/\S+, images\/\S+, images\/\S+ and its record\nresolved 1 viewer's report of it\n$/,
    );
  });

  it('shows and rotates the API key; warns when an unbanned address stays within a wider ban', async () => {
    expect(admin('key', 'show').stdout).toBe(`${API_KEY}\n`);
    const rotated = admin('key', 'rotate', 'rotated-key-0123456789');
    expect([rotated.status, rotated.stdout.split('\n')[0]]).toEqual([0, 'rotated-key-0123456789']);
    expect(admin('key', 'show').stdout).toBe('rotated-key-0123456789\n');
    const random = admin('key', 'rotate');
    const fresh = random.stdout.split('\n')[0] ?? '';
    expect(fresh).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(admin('key', 'rotate', 'short').status).toBe(2);
    expect(admin('key', 'spin').status).toBe(2);
    // the service takes the new key (PARAMETERS_CACHE_SECONDS is 0 here), then the suite's own again
    const form = new FormData();
    form.append('source', new Blob([await makePng(90, 30)]), 'rotated.png');
    const sent = await send(`${server.url}/api/1/upload`, { method: 'POST', headers: { 'X-API-Key': fresh }, body: form });
    expect(sent.status).toBe(200);
    expect(admin('key', 'rotate', API_KEY).status).toBe(0);

    expect(admin('ban', '198.51.100.0/24').status).toBe(0);
    expect(admin('ban', '198.51.100.7').status).toBe(0);
    const lifted = admin('unban', '198.51.100.7');
    expect([lifted.status, lifted.stderr]).toEqual([0, '198.51.100.7/32 is still refused: 1 ban of 198.51.100.0/24 covers it\n']);
    const none = admin('unban', '198.51.100.9');
    expect([none.status, none.stderr]).toEqual([1, 'no ban of 198.51.100.9/32; it is within the ban of 198.51.100.0/24\n']);
    expect(JSON.parse(admin('bans', '--json').stdout)).toEqual([{ range: '198.51.100.0/24', until: null }]);
    expect(admin('unban', '198.51.100.0/24').stderr).toBe('');
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

  it('prints stored and imported text with its control and bidi characters escaped', async () => {
    const image = await upload(7);
    const note = 'see \u009b31mred\u001b[2J \u202eevil\u2028next';
    const sent = await send(`${server.url}/image/${image.id_encoded}/report`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'same-origin', Origin: server.url },
      body: new URLSearchParams({ reason: 'spam', note }).toString(),
    });
    expect(sent.status).toBe(200);
    const raw = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;
    const reports = admin('reports');
    expect(reports.status).toBe(0);
    expect(reports.stdout).not.toMatch(raw);
    expect(reports.stdout).toContain('see \\u009b31mred\\u001b[2J \\u202eevil');
    const json = admin('reports', '--json');
    expect(json.stdout).not.toMatch(raw);
    // still JSON, with the note as it was stored
    const [reported] = JSON.parse(json.stdout) as Array<{ notes: string[] }>;
    expect(reported?.notes[0]).toContain('\u009b31mred\u001b[2J \u202eevil');
    const list = join(mkdtempSync(join(tmpdir(), 'hashes-')), 'list.txt');
    writeFileSync(list, '\u001b]0;owned\u0007\u001b[2Jnot a hash\n');
    const bad = admin('block-hashes', 'import', list);
    expect(bad.status).toBe(1);
    expect(bad.stderr).not.toMatch(raw);
    expect(bad.stderr.trim()).toBe(
      'line 1 holds no PDQ hash (64 hex digits): \\u001b]0;owned\\u0007\\u001b[2Jnot a hash: nothing was blocked',
    );
    // a list's name, printed in its batch's line, cannot print lines or columns of its own
    const forged = join(mkdtempSync(join(tmpdir(), 'hashes-')), 'evil\n  batch 1\t999999 pictures\tforged.txt');
    writeFileSync(forged, `${'6b'.repeat(32)}\n`);
    expect(admin('block-hashes', 'import', forged).status).toBe(0);
    const blocks = admin('blocks').stdout;
    expect(blocks).toContain('imported: evil\\n  batch 1\\t999999 pictures\\tforged.txt');
    expect(blocks).not.toMatch(/^ {2}batch 1\t999999/m);
    expect(admin('block-hashes', 'remove', forged).stdout).toContain('lifted the blocks of 1 picture');
  });

  it('imports a hash list as one batch, lists the blocks, and lifts them by hash, by batch and by list', () => {
    const hashes = ['a5', '3c', '96'].map((pair, n) => `${n}${pair.repeat(31)}f`);
    const list = join(mkdtempSync(join(tmpdir(), 'hashes-')), 'shared.csv');
    writeFileSync(list, `${hashes.map((hash) => `${hash},100`).join('\n')}\n${'5a'.repeat(32)},20\n`);
    const imported = admin('block-hashes', 'import', list);
    expect([imported.status, imported.stderr]).toEqual([0, '']);
    expect(imported.stdout).toMatch(/^blocked 3 pictures by their PDQ hashes \(in force at the next upload: /);
    expect(imported.stdout).toContain('skipped 1 hash of quality under 50');
    expect(admin('block-hashes', 'import', list).stdout).toContain('blocked 0 pictures by their PDQ hashes');
    const blocks = admin('blocks');
    expect(blocks.stdout).toMatch(/blocked pictures: 3, in 1 batch\n {2}batch \d+\t3 pictures\t\d{4}-.+\timported: shared\.csv/);
    const [batch] = (JSON.parse(admin('blocks', '--json').stdout) as { pictures: Array<{ id: number }> }).pictures;
    const one = admin('unblock', hashes[0]?.toUpperCase() ?? '');
    expect([one.status, one.stdout]).toEqual([
      0,
      expect.stringContaining(`lifted the block of the picture of PDQ hash ${hashes[0]}`),
    ]);
    // a block is lifted by its hash whatever quality the list gives it
    const lift = join(mkdtempSync(join(tmpdir(), 'hashes-')), 'lift.txt');
    writeFileSync(lift, `${hashes[1]},10\n${hashes[2]}\n`);
    expect(admin('block-hashes', 'remove', lift).stdout).toContain('lifted the blocks of 2 pictures');
    const gone = admin('unblock', String(batch?.id));
    expect([gone.status, gone.stderr.trim()]).toEqual([1, `no batch ${batch?.id} of blocked pictures (admin blocks lists them)`]);
    expect(admin('blocks').stdout).toContain('blocked pictures: 0, in 0 batches');
    expect(admin('unblock', 'nonsense').status).toBe(1);
    const long = admin('unblock', '1'.repeat(33));
    expect([long.status, long.stderr.trim()]).toEqual([
      1,
      `not a PDQ hash (64 hex digits), a batch number or an md5 (32 hex digits): ${'1'.repeat(33)}`,
    ]);
    expect(admin('unblock').status).toBe(2);
    expect(admin('block-hashes', 'export', list).status).toBe(2);
  });
});
