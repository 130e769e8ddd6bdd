import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildStores } from '../../../functions/roots/stores';
import { loadConfig } from '../../../functions/config';

/** What an S3 endpoint received: one request's method, path, headers and body. */
interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** An S3 endpoint that keeps each request and answers it as a stored object. */
async function captureEndpoint(): Promise<{ server: Server; endpoint: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(200, { ETag: '"e"' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

describe('S3ObjectStore puts, with the S3 client the function builds', () => {
  let capture: Awaited<ReturnType<typeof captureEndpoint>>;
  const saved = process.env['AWS_ENDPOINT_URL_S3'];

  beforeAll(async () => {
    capture = await captureEndpoint();
    process.env['AWS_ENDPOINT_URL_S3'] = capture.endpoint;
  });

  afterAll(async () => {
    if (saved === undefined) delete process.env['AWS_ENDPOINT_URL_S3'];
    else process.env['AWS_ENDPOINT_URL_S3'] = saved;
    await new Promise((resolve) => capture.server.close(resolve));
  });

  it('sends Content-MD5 under the signature, and neither hash the body for it (UNSIGNED-PAYLOAD) nor add a CRC32', async () => {
    const env = { BUCKET_NAME: 'bucket', TABLE_NAME: 'table', PUBLIC_URL: 'https://img.example' };
    const { objects } = buildStores(loadConfig(env), { ...env, AWS_ENDPOINT_URL_S3: capture.endpoint });
    const body = Buffer.from('the bytes of an image, as stored');
    const md5 = createHash('md5').update(body).digest('hex');
    await objects.put({ key: 'images/a.png', body, contentType: 'image/png', cacheControl: 'public', md5 });
    const [put] = capture.received;
    expect([put?.method, put?.url, put?.body.equals(body)]).toEqual(['PUT', '/bucket/images/a.png?x-id=PutObject', true]);
    expect(put?.headers['content-md5']).toBe(Buffer.from(md5, 'hex').toString('base64'));
    expect(put?.headers['x-amz-content-sha256']).toBe('UNSIGNED-PAYLOAD');
    expect(
      Object.keys(put?.headers ?? {}).filter(
        (name) => name.startsWith('x-amz-checksum') || name === 'x-amz-sdk-checksum-algorithm',
      ),
    ).toEqual([]);
    // the md5 and the payload's marker are among what the signature covers
    const signed = /SignedHeaders=([^,]+)/.exec(String(put?.headers['authorization']))?.[1]?.split(';') ?? [];
    expect(signed).toEqual(expect.arrayContaining(['content-md5', 'x-amz-content-sha256', 'if-none-match']));
  });
});
