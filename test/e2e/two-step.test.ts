import { createHash, randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { DIRECT_MAX_BYTES, main as uploadTool, progressLine } from '../../scripts/upload';
import { expectContract } from '../support/contract';
import { freePort, startFreshLocalProcess, type LocalProcess } from '../support/local-process';

/** The two-step upload over HTTP against `npm start`: its upload URL points at the stand-in S3. */
jest.setTimeout(90_000);

const API_KEY = 'two-step-key-0123456789';
let server: LocalProcess;

interface Ticket {
  url: string;
  method: string;
  headers: Record<string, string>;
  token: string;
  max_bytes: number;
  expires_at: string;
}

beforeAll(async () => {
  server = await startFreshLocalProcess('two-step', { API_KEY });
});

afterAll(() => server?.stop());

/** Answers checked against docs/openapi.yaml, then read as JSON. */
async function json(method: string, response: Response): Promise<Record<string, unknown>> {
  const body = await response.text();
  expectContract(method, new URL(response.url).pathname, {
    status: response.status,
    contentType: response.headers.get('content-type') ?? undefined,
    body,
  });
  return JSON.parse(body) as Record<string, unknown>;
}

async function uploadUrl(
  size: number,
  filename = 'big.png',
  key = API_KEY,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.url}/api/1/upload-url`, {
    method: 'POST',
    headers: { 'X-API-Key': key },
    body: new URLSearchParams({ size: String(size), filename }),
  });
  return { status: response.status, body: await json('POST', response) };
}

async function ticketFor(bytes: Uint8Array, filename?: string): Promise<Ticket> {
  const { status, body } = await uploadUrl(bytes.length, filename);
  expect(status).toBe(200);
  const ticket = body['upload'] as Ticket;
  const put = await fetch(ticket.url, { method: ticket.method, headers: ticket.headers, body: bytes });
  expect(put.status).toBe(200);
  return ticket;
}

async function finish(token: string, fields: Record<string, string> = {}, key = API_KEY) {
  const response = await fetch(`${server.url}/api/1/upload`, {
    method: 'POST',
    headers: { 'X-API-Key': key },
    body: new URLSearchParams({ upload_token: token, ...fields }),
  });
  return { status: response.status, body: await json('POST', response) };
}

/** A PNG of noise, which no compression shrinks: about 3 bytes a pixel. */
function noisePng(width: number, height: number): Promise<Buffer> {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
}

describe('the two-step upload over HTTP', () => {
  it('stores a 12 MB image: upload URL, PUT to the stand-in S3, then the upload with its token', async () => {
    const png = await noisePng(2100, 1950);
    expect(png.length).toBeGreaterThan(12_000_000);
    const ticket = await ticketFor(png, 'holiday panorama.png');
    expect(new URL(ticket.url).pathname).toMatch(/\/staging\/[0-9a-f]{32}$/);
    expect(ticket.headers).toEqual({ 'Content-Length': String(png.length) });
    expect(Date.parse(ticket.expires_at) - Date.now()).toBeGreaterThan(14 * 60_000);
    const { status, body } = await finish(ticket.token, { title: 'Panorama' });
    expect(status).toBe(200);
    const image = body['image'] as {
      url: string;
      size: number;
      md5: string;
      original_filename: string;
      title: string;
      width: number;
    };
    expect(image).toMatchObject({ original_filename: 'holiday panorama.png', title: 'Panorama', width: 2100 });
    const served = Buffer.from(await (await fetch(image.url)).arrayBuffer());
    expect(served.length).toBe(image.size);
    expect(createHash('md5').update(served).digest('hex')).toBe(image.md5);
    // the token is spent, and its staged bytes are gone
    const again = await finish(ticket.token);
    expect([again.status, (again.body['error'] as { code: number }).code]).toEqual([409, 143]);
    expect((await fetch(ticket.url.split('?')[0] ?? '')).status).not.toBe(200);
  });

  it('answers in every format: txt with the link, redirect to the viewer', async () => {
    const png = await noisePng(64, 64);
    const txt = await fetch(`${server.url}/api/1/upload`, {
      method: 'POST',
      headers: { 'X-API-Key': API_KEY },
      body: new URLSearchParams({ upload_token: (await ticketFor(png)).token, format: 'txt' }),
    });
    expect([txt.status, await txt.text()]).toEqual([200, expect.stringMatching(/\/images\/\d{4}\/\d\d\/\d\d\/big\.png$/)]);
    const redirect = await fetch(`${server.url}/api/1/upload`, {
      method: 'POST',
      headers: { 'X-API-Key': API_KEY },
      body: new URLSearchParams({ upload_token: (await ticketFor(await noisePng(60, 60))).token, format: 'redirect' }),
      redirect: 'manual',
    });
    expect([redirect.status, redirect.headers.get('location')]).toEqual([302, expect.stringMatching(/\/image\/\w+$/)]);
  });

  it('refuses a size over the limit (413) before signing, a wrong key, a forged token, and a staged non-image', async () => {
    const over = await uploadUrl(32_000_001);
    expect([over.status, (over.body['error'] as { message: string }).message]).toEqual([413, 'File too big - max 32 MB']);
    expect((await uploadUrl(10, 'x.png', 'wrong')).status).toBe(401);
    const ticket = await ticketFor(Buffer.from('this is a text file, not a picture'));
    expect((await finish(ticket.token, {}, 'wrong')).status).toBe(401);
    const forged = await finish(`${ticket.token.slice(0, -4)}AAAA`);
    expect([forged.status, (forged.body['error'] as { code: number }).code]).toEqual([400, 141]);
    const junk = await finish(ticket.token);
    expect([junk.status, (junk.body['error'] as { code: number }).code]).toEqual([415, 613]);
  });

  it('holds the PUT to the declared size: the stand-in S3 refuses another, or the service refuses what it staged', async () => {
    const { body } = await uploadUrl(100);
    const ticket = body['upload'] as Ticket;
    const bytes = await noisePng(10, 10);
    const status = await new Promise<number>((resolve, reject) => {
      const put = httpRequest(ticket.url, { method: 'PUT', headers: { 'Content-Length': String(bytes.length) } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      put.on('error', reject);
      put.end(bytes);
    });
    if (status === 200) {
      const refused = await finish(ticket.token);
      expect([refused.status, (refused.body['error'] as { code: number }).code]).toEqual([400, 145]);
    } else expect(status).toBe(403);
    // nothing staged under a fresh token: the token is kept for a retry
    const fresh = (await uploadUrl(bytes.length)).body['upload'] as Ticket;
    const early = await finish(fresh.token);
    expect([early.status, (early.body['error'] as { code: number }).code]).toEqual([400, 144]);
    expect((await fetch(fresh.url, { method: 'PUT', headers: fresh.headers, body: bytes })).status).toBe(200);
    expect((await finish(fresh.token)).status).toBe(200);
  });

  it('a direct upload too large for the gateway says that the two-step upload exists', async () => {
    const form = new FormData();
    form.append('source', new Blob([Buffer.alloc(4_700_000)]), 'big.png');
    const response = await fetch(`${server.url}/api/1/upload`, { method: 'POST', headers: { 'X-API-Key': API_KEY }, body: form });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      'the two-step upload (POST /api/1/upload-url)',
    );
  });

  it('npm run upload sends several files, directly or in two steps, with options, and prints their three links', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'upload-script-'));
    try {
      const small = join(folder, 'small.png');
      const large = join(folder, 'large.png');
      writeFileSync(small, await noisePng(40, 40));
      const largeBytes = await noisePng(1300, 1300);
      expect(largeBytes.length).toBeGreaterThan(DIRECT_MAX_BYTES); // past what one request through the gateway takes
      writeFileSync(large, largeBytes);
      const cli = join(__dirname, '..', '..', 'node_modules', 'tsx', 'dist', 'cli.mjs');
      const script = join(__dirname, '..', '..', 'scripts', 'upload.ts');
      const run = (args: string[], env: Record<string, string> = {}) =>
        spawnSync(process.execPath, [cli, script, ...args], {
          encoding: 'utf8',
          env: { PATH: process.env['PATH'] ?? '', ...env },
        });
      const sent = run([small, large, server.url, API_KEY, '--title', 'Holiday', '--nsfw', '--expiration', 'PT10M']);
      // piped: no progress bar, only the links
      expect([sent.status, sent.stderr]).toEqual([0, '']);
      const blocks = sent.stdout.trim().split(/\n(?=\S)/);
      expect(blocks).toHaveLength(2);
      for (const [index, name] of ['small', 'large'].entries()) {
        const [link = '', viewer = '', remove = ''] = (blocks[index] ?? '').split('\n');
        expect(link).toMatch(new RegExp(`/images/\\d{4}/\\d\\d/\\d\\d/${name}\\.png$`));
        expect(viewer).toMatch(/^ {2}viewer: http:\/\/\S+\/image\/\w+$/);
        expect(remove).toMatch(/^ {2}delete: http:\/\/\S+\/image\/\w+\/delete\/[0-9a-f]{48}$/);
        expect((await fetch(link)).status).toBe(200);
        const page = await fetch(viewer.replace('  viewer: ', ''));
        expect([page.status, (await page.text()).includes('Holiday')]).toEqual([200, true]);
        expect((await fetch(remove.replace('  delete: ', ''))).status).toBe(200);
      }
      // --json: the API's image objects, the options applied; the key and URL from the environment
      // (other bytes: the same ones again would answer the stored image, as a duplicate)
      const other = join(folder, 'other.png');
      writeFileSync(other, await noisePng(41, 40));
      const json = run([other, '--json', '--description', 'by the sea'], {
        IMAGE_UPLOAD_URL: server.url,
        IMAGE_UPLOAD_KEY: API_KEY,
      });
      expect([json.status, json.stderr]).toEqual([0, '']);
      const [image] = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
      expect(image).toMatchObject({ description: 'by the sea', nsfw: '0', expiration_date_gmt: null });
      // a failed file is said, the others still go, and the exit is 1
      const mixed = run([join(folder, 'none.png'), small, server.url, API_KEY]);
      expect([mixed.status, mixed.stderr]).toEqual([1, `none.png: upload failed: no such file: ${join(folder, 'none.png')}\n`]);
      expect(mixed.stdout).toMatch(/\/small\.png\n {2}viewer: /);
      // BASE_URL alone: the key from the environment
      const keyed = run([small, server.url], { IMAGE_UPLOAD_KEY: API_KEY });
      expect([keyed.status, keyed.stderr, keyed.stdout.split('\n')[0]]).toEqual([0, '', expect.stringMatching(/small\.png$/)]);
      const refused = run([small, server.url, 'wrong']);
      expect([refused.status, refused.stderr.trim()]).toEqual([1, 'upload failed: Invalid API key.']);
      // a service that is not running: said as such, not "fetch failed"
      const closed = `http://127.0.0.1:${await freePort()}`;
      const down = run([small, closed, API_KEY]);
      expect([down.status, down.stderr.trim()]).toEqual([
        1,
        `upload failed: nothing answers at ${closed}: start the service (npm start), or give its BASE_URL (or IMAGE_UPLOAD_URL)`,
      ]);

      for (const args of [[], ['--frob', small], [small, server.url], [small, '--title'], [small, server.url, 'k', 'x']]) {
        const usage = run(args);
        expect([args, usage.status, usage.stderr]).toEqual([args, 2, expect.stringContaining('usage: npm run upload --')]);
      }
      expect(run(['--frob', small]).stderr.split('\n')[0]).toBe('unknown option --frob');
      expect(run([small, '--title']).stderr.split('\n')[0]).toBe('--title needs a value');
      expect(run(['--help']).status).toBe(0);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('npm run upload draws a progress bar of the PUT on a terminal, and ends it at 100%', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'upload-bar-'));
    try {
      const large = join(folder, 'bar.png');
      writeFileSync(large, await noisePng(1301, 1300));
      let out = '';
      let err = '';
      const io = { out: (text: string) => void (out += text), err: (text: string) => void (err += text), terminal: true };
      expect(await uploadTool([large, server.url, API_KEY], io)).toBe(0);
      expect(out).toMatch(/\/bar\.png\n {2}viewer: /);
      const frames = err.split('\r').filter((frame) => frame !== '');
      expect(frames.length).toBeGreaterThanOrEqual(1);
      expect(frames.at(-1)).toMatch(/^bar\.png \[#{20}\] 100% \d+(\.\d)? MB of \d+(\.\d)? MB\n$/);
      expect(progressLine('a.png', 5, 10, 10)).toBe('a.png [#####-----] 50% 5 B of 10 B');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
