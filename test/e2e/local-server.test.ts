import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import imgbbUploader from 'imgbb-uploader';
import sharp from 'sharp';
import { makeJpeg, makePng } from '../support/images';
import { expectContract } from '../support/contract';
import { freePort, onFreePort, startLocalProcess, type LocalProcess } from '../support/local-process';
import { motoAvailable, startMoto, type Moto } from '../support/moto';

const md5 = (bytes: Uint8Array): string => createHash('md5').update(bytes).digest('hex');

interface ImageJson {
  url: string;
  url_viewer: string;
  display_url: string;
  size: number;
  md5: string;
  mime: string;
  thumb: { url: string; size: number };
  medium: { url: string; size: number };
}

let dataDir: string;
let port: number;
let server: LocalProcess;
const API_KEY = 'e2e-key-0123456789';

interface StoresMode {
  name: string;
  /** Extra environment of `npm start`, set once the stores run. */
  env(): Record<string, string>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

let moto: Moto | undefined;
/** The default, and the same server on moto_server through the AWS endpoint variables (external stores). */
const MODES: StoresMode[] = [
  { name: 'the embedded stand-ins', env: () => ({}), start: async () => undefined, stop: async () => undefined },
  ...(motoAvailable()
    ? [
        {
          name: 'moto_server as external stores',
          env: () => ({
            AWS_ENDPOINT_URL: moto?.endpoint ?? '',
            AWS_ACCESS_KEY_ID: 'testing',
            AWS_SECRET_ACCESS_KEY: 'testing',
            AWS_REGION: 'eu-west-1',
            BUCKET_NAME: 'e2e-external',
            TABLE_NAME: 'e2e-external',
          }),
          start: async () => {
            moto = await startMoto();
          },
          stop: async () => moto?.stop(),
        },
      ]
    : []),
];

/** The body of an answer, once it is checked against docs/openapi.yaml. */
async function matchingContract(method: string, response: Response): Promise<string> {
  const body = await response.text();
  expectContract(method, new URL(response.url).pathname, {
    status: response.status,
    contentType: response.headers.get('content-type') ?? undefined,
    body,
  });
  return body;
}

async function expectServed(image: ImageJson): Promise<void> {
  const original = await fetch(image.url);
  expect(original.status).toBe(200);
  expect(original.headers.get('content-type')).toBe(image.mime);
  expect(original.headers.get('x-content-type-options')).toBe('nosniff');
  // hours in browsers and shared caches, as CloudFront sends viewers; the stored object keeps its year
  expect(original.headers.get('cache-control')).toBe('public, max-age=14400');
  expect(original.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
  const bytes = new Uint8Array(await original.arrayBuffer());
  expect(bytes.length).toBe(image.size);
  expect(md5(bytes)).toBe(image.md5);
  for (const rendition of [image.thumb, image.medium]) {
    const response = await fetch(rendition.url);
    expect(response.status).toBe(200);
    expect((await response.arrayBuffer()).byteLength).toBe(rendition.size);
  }
  expect((await fetch(image.display_url)).status).toBe(200);
  const viewer = await fetch(image.url_viewer);
  expect(viewer.status).toBe(200);
  expect(await viewer.text()).toContain(image.display_url.slice(image.display_url.indexOf('/images/')));
}

describe.each(MODES)('the local server on $name, driven over HTTP like real clients', (mode) => {
  beforeAll(async () => {
    await mode.start();
    dataDir = mkdtempSync(join(tmpdir(), 'image-upload-e2e-'));
    server = await onFreePort((free) => {
      port = free;
      return startLocalProcess({
        PORT: String(port),
        DATA_DIR: dataDir,
        API_KEY,
        PUBLIC_URL: `http://127.0.0.1:${port}/`,
        ...mode.env(),
      });
    });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await mode.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints its URL, the key it was given, and writes endpoints.json', () => {
    expect(server.url).toBe(`http://127.0.0.1:${port}`);
    expect(server.apiKey).toBe(API_KEY);
    const endpoints = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as Record<string, string>;
    expect(Object.keys(endpoints)).toEqual(expect.arrayContaining(['s3', 'dynamodb', 'ssm', 'bucket', 'table', 'region']));
    expect(endpoints['s3']).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    if (mode.env()['AWS_ENDPOINT_URL']) {
      // the operator's stores: their names and region, never their credentials
      expect(endpoints).toMatchObject({ s3: moto?.endpoint, bucket: 'e2e-external', region: 'eu-west-1' });
      expect(Object.keys(endpoints)).not.toContain('secretAccessKey');
      expect(server.output()).toContain(`Stores:     S3 ${moto?.endpoint}`);
    } else expect(Object.keys(endpoints)).toEqual(expect.arrayContaining(['accessKeyId', 'secretAccessKey']));
  });

  it('takes a ShareX upload: multipart source file, key and format=json', async () => {
    const form = new FormData();
    form.append('source', new Blob([await makeJpeg(900, 700)], { type: 'image/jpeg' }), 'Screenshot 2026.jpg');
    form.append('key', API_KEY);
    form.append('format', 'json');
    const response = await fetch(`${server.url}/api/1/upload`, { method: 'POST', body: form });
    expect(response.status).toBe(200);
    const body = JSON.parse(await matchingContract('POST', response)) as { image: ImageJson & { filename: string } };
    expect(body.image.url).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:${port}/images/\\d{4}/\\d\\d/\\d\\d/Screenshot-2026\\.jpg$`),
    );
    await expectServed(body.image);
  });

  it('serves its OpenAPI document with its own URL, and answers in imgBB mode as the document says', async () => {
    const response = await fetch(`${server.url}/api/1/openapi.json`);
    const document = JSON.parse(await matchingContract('GET', response)) as { servers: Array<{ url: string }> };
    expect(document.servers).toEqual([{ url: `http://127.0.0.1:${port}` }]);
    const form = new URLSearchParams({ key: API_KEY, image: (await makePng(24, 24)).toString('base64') });
    const imgbb = await fetch(`${server.url}/api/1/upload`, { method: 'POST', body: form });
    expect(JSON.parse(await matchingContract('POST', imgbb))).toMatchObject({
      status: 200,
      data: { id: expect.any(String) as unknown },
    });
    const refused = await fetch(`${server.url}/api/1/upload`, { method: 'POST', body: new URLSearchParams({ key: 'wrong' }) });
    expect(JSON.parse(await matchingContract('POST', refused))).toMatchObject({ status_code: 401 });
  });

  it('takes an upload from the imgbb-uploader package in Chevereto mode', async () => {
    const png = await makePng(64, 48);
    const result = (await imgbbUploader({
      apiKey: API_KEY,
      base64string: png.toString('base64'),
      cheveretoHost: `http://127.0.0.1:${port}`,
      customPayload: { title: 'from imgbb-uploader' },
    })) as unknown as { status_code: number; image: ImageJson & { title: string } };
    expect(result.status_code).toBe(200);
    expect(result.image.title).toBe('from imgbb-uploader');
    expect(result.image.md5).toBe(md5(png));
    await expectServed(result.image);
  });

  it('takes a curl-style GET with everything in the query and answers the URL as text', async () => {
    const png = await makePng(16, 16);
    const query = new URLSearchParams({ key: API_KEY, source: png.toString('base64'), format: 'txt' });
    const response = await fetch(`${server.url}/api/1/upload?${query.toString()}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const url = await matchingContract('GET', response);
    const served = await fetch(url);
    expect(md5(new Uint8Array(await served.arrayBuffer()))).toBe(md5(png));
  });

  it('refuses a multipart body over 4.6 MB with the 413 envelope, as the edge does in AWS', async () => {
    const form = new FormData();
    form.append('key', API_KEY);
    form.append('source', new Blob([Buffer.alloc(4_600_000, 7)]), 'big.jpg');
    const response = await fetch(`${server.url}/api/1/upload`, { method: 'POST', body: form });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      status_code: 413,
      error: {
        message: 'Request too large - max 4.6 MB per request; larger images: the two-step upload (POST /api/1/upload-url)',
        code: 400,
      },
      status_txt: 'Payload Too Large',
    });
  });

  it('refuses a urlencoded body over 6.2 MB with the 413 envelope, and takes one just under it to the handler', async () => {
    const over = await fetch(`${server.url}/api/1/upload`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `key=${API_KEY}&source=${'A'.repeat(6_200_001)}`,
    });
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({
      error: {
        message: 'Request too large - max 6.2 MB per request; larger images: the two-step upload (POST /api/1/upload-url)',
        code: 400,
      },
    });
    const under = await fetch(`${server.url}/api/1/upload`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `key=${API_KEY}&source=${'A'.repeat(5_900_000)}`,
    });
    // past the edge: the handler answers (these bytes decode to no image)
    expect(under.status).not.toBe(413);
    expect(await under.json()).toMatchObject({ error: { code: 613 } });
  });

  it('answers a URL longer than CloudFront allows with 414, and headers past 16 KB with 431, in the envelope', async () => {
    // a URL past 8 KB is 414 (past 16 KB Node's own parser answered 431; it now gives up past 1 MiB only)
    for (const padding of [9_000, 20_000, 200_000]) {
      const long = await fetch(`${server.url}/api/1/upload?key=${API_KEY}&pad=${'p'.repeat(padding)}`);
      expect([padding, long.status]).toEqual([padding, 414]);
      expect(await long.json()).toMatchObject({
        status_code: 414,
        error: { code: 414, message: 'URL too long - max 8192 bytes' },
      });
    }
    for (const padding of [20_000, 200_000, 1_100_000]) {
      const huge = await fetch(`${server.url}/api/1/upload`, { headers: { 'X-Padding': 'h'.repeat(padding) } });
      expect([padding, huge.status]).toEqual([padding, 431]);
      expect(await huge.json()).toMatchObject({ status_code: 431, error: { message: 'Request header fields too large' } });
    }
    // under both limits, served
    expect((await fetch(`${server.url}/?pad=${'p'.repeat(8000)}`, { headers: { 'X-Padding': 'h'.repeat(15_000) } })).status).toBe(
      200,
    );
  });

  it('accepts a multipart file of several MB under the edge limit', async () => {
    const jpeg = await sharp({
      create: { width: 1400, height: 1400, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 60 } },
    })
      .jpeg({ quality: 100 })
      .toBuffer();
    expect(jpeg.length).toBeGreaterThan(1_000_000);
    expect(jpeg.length).toBeLessThan(4_500_000);
    expect(jpeg.length).toBeGreaterThan(2_000_000);
    const form = new FormData();
    form.append('key', API_KEY);
    form.append('source', new Blob([jpeg]), 'noise.jpg');
    const response = await fetch(`${server.url}/api/1/upload`, { method: 'POST', body: form });
    expect(response.status).toBe(200);
  });

  it('answers 404 for an image path that holds nothing and never serves outside the images', async () => {
    for (const path of [
      '/images/2020/01/01/none.jpg',
      '/images/../endpoints.json',
      '/images/%2e%2e/x',
      '/images//etc/passwd',
      '/images/a//b.png',
      '/images/./a.png',
    ]) {
      const response = await fetch(`${server.url}${path}`);
      expect([path, response.status]).toEqual([path, 404]);
    }
  });

  it('passes the post-deploy smoke test (npm run smoke -- BASE_URL KEY)', () => {
    const output = execFileSync(
      process.execPath,
      [
        join(__dirname, '..', '..', 'node_modules', 'tsx', 'dist', 'cli.mjs'),
        join(__dirname, '..', '..', 'scripts', 'smoke.ts'),
        server.url,
        API_KEY,
      ],
      {
        encoding: 'utf8',
      },
    );
    expect(output).toContain('smoke test passed');
    expect(output.match(/^ok {2}/gm)).toHaveLength(12);
    expect(output).toContain('ok  deleted file: 404');
    for (const megabytes of [5, 8, 11])
      expect(output).toContain(`ok  ${megabytes} MB request: 413, Request too large - max 4.6 MB`);
    expect(() =>
      execFileSync(
        process.execPath,
        [
          join(__dirname, '..', '..', 'node_modules', 'tsx', 'dist', 'cli.mjs'),
          join(__dirname, '..', '..', 'scripts', 'smoke.ts'),
          server.url,
          'wrong-key',
        ],
        { stdio: 'pipe' },
      ),
    ).toThrow(/Invalid API key/);
  });

  it('keeps its data, key and images across a restart', async () => {
    const form = new FormData();
    form.append('source', new Blob([await makePng(20, 20)]), 'kept.png');
    form.append('key', API_KEY);
    const before = (
      (await (await fetch(`${server.url}/api/1/upload`, { method: 'POST', body: form })).json()) as { image: ImageJson }
    ).image;
    await server.stop();
    server = await startLocalProcess({
      PORT: String(port),
      DATA_DIR: dataDir,
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ...mode.env(),
    });
    expect(server.apiKey).toBe(API_KEY);
    await expectServed(before);
  });
});

describe('the local server, misconfigured', () => {
  it.each(['0', '2.5', 'many'])('refuses to start with LOCAL_INVOCATIONS=%s, naming the setting', async (value) => {
    const folder = mkdtempSync(join(tmpdir(), 'image-upload-e2e-'));
    try {
      await expect(
        startLocalProcess({ PORT: String(await freePort()), DATA_DIR: folder, LOCAL_INVOCATIONS: value }),
      ).rejects.toThrow(`LOCAL_INVOCATIONS must be a whole number of requests, 1 or more, got ${value}`);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
