import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { isPublicAddress, SafeUrlFetcher, type Resolver } from '../../functions/adapters/safe-url-fetcher';
import { ServiceError } from '../../functions/core/errors';
import { makePng } from '../support/images';
import { createTestService, jsonBody, urlencodedUpload } from '../support/test-service';

const TLS = join(__dirname, '..', 'fixtures', 'tls');
let png: Buffer;
let server: Server;
let base: string;
let port: number;
let bytesSentToEndless = 0;
/** Every request the local source server got. */
let requestsSeen = 0;
let endlessClosed = false;

function resolverFor(table: Record<string, string[]>, calls: string[] = []): Resolver {
  return (hostname, callback) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) return callback(Object.assign(new Error(`unknown ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };
}

function route(url: string, response: ServerResponse): void {
  const redirect = /^\/redirect\/(\d+)$/.exec(url);
  if (redirect) {
    const left = Number(redirect[1]);
    response.writeHead(302, { Location: left > 1 ? `/redirect/${left - 1}` : '/photo%20one.png' }).end();
  } else if (url === '/photo%20one.png' || url === '/img.png') {
    response.writeHead(200, { 'Content-Type': 'text/html' }).end(png); // the type comes from the bytes, not this header
  } else if (url === '/slow') {
    response.writeHead(200); // and never a byte more
  } else if (url === '/endless') {
    response.writeHead(200, { 'Content-Type': 'image/png' });
    const chunk = Buffer.alloc(64 * 1024, 7);
    const pump = (): void => {
      if (response.destroyed) return;
      bytesSentToEndless += chunk.length;
      if (response.write(chunk)) setImmediate(pump);
      else response.once('drain', pump);
    };
    response.on('close', () => (endlessClosed = true));
    pump();
  } else if (url === '/trickle' || url === '/steady') {
    // 1 KB every 100 ms (10 KB/s), or 8 KB every 100 ms (80 KB/s), of a 240 KB body
    const [size, everyMs] = url === '/trickle' ? [1024, 100] : [8 * 1024, 100];
    response.writeHead(200, { 'Content-Type': 'application/octet-stream' });
    let sent = 0;
    const timer = setInterval(() => {
      if (response.destroyed || sent >= 240 * 1024) {
        clearInterval(timer);
        response.end();
        return;
      }
      response.write(Buffer.alloc(size, 9));
      sent += size;
    }, everyMs);
  } else if (url === '/declared-big') {
    response.writeHead(200, { 'Content-Length': '50000000' }).end();
  } else if (url === '/to-loopback') {
    response.writeHead(301, { Location: `http://127.0.0.1:${port}/img.png` }).end();
  } else {
    response.writeHead(404).end('nope');
  }
}

beforeAll(async () => {
  png = await makePng(30, 20);
  server = createHttpServer((request, response) => {
    requestsSeen += 1;
    route(request.url ?? '/', response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(fetcher: SafeUrlFetcher, url: string, maxBytes = 1_000_000): Promise<{ kind: string; message: string }> {
  try {
    await fetcher.fetch(url, maxBytes);
  } catch (error) {
    if (error instanceof ServiceError) return { kind: error.kind, message: error.message };
    throw error;
  }
  throw new Error(`${url} was fetched`);
}

describe('URL sources: refused before any connection', () => {
  const fetcher = new SafeUrlFetcher({
    allowHosts: [],
    resolve: resolverFor({
      'images.example.com': ['127.0.0.1'],
      'mixed.example.com': ['93.184.216.34', '10.0.0.7'],
      localhost: ['127.0.0.1', '::1'],
    }),
  });

  it.each([
    'ftp://example.com/a.png',
    'file:///etc/passwd',
    'gopher://example.com/',
    'javascript:alert(1)',
    'data:image/png;base64,AAAA',
    'http://user:secret@93.184.216.34/a.png',
    'http://127.0.0.1/',
    'http://localhost/',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://0x7f.1/',
    'http://0177.0.0.1/',
    'http://127.1/',
    'http://127.0.0.1.:80/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://[::7f00:1]/',
    'http://[2002:7f00:1::]/',
    'http://[64:ff9b::7f00:1]/',
    'http://[2001::1]/',
    'http://0.0.0.0/',
    'http://0/',
    'http://[::]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://240.0.0.1/',
    'http://192.0.2.1/',
    'http://198.51.100.1/',
    'http://203.0.113.1/',
    'http://[fe80::1]/',
    'http://[fc00::1]/',
    'http://[ff02::1]/',
    'http://[2001:db8::1]/',
    'http://images.example.com/cat.png',
    'http://mixed.example.com/cat.png',
    'not a url',
  ])('refuses %s with 400 code 630', async (url) => {
    expect(await failure(fetcher, url)).toEqual({ kind: 'UrlNotAllowed', message: 'URL not allowed' });
  });
});

describe('URL sources: fetched from allowed local servers', () => {
  const allowed = new SafeUrlFetcher({ allowHosts: ['127.0.0.1'], timeoutMs: 1_000 });

  it('fetches the bytes, naming the file after the decoded last path segment', async () => {
    const fetched = await allowed.fetch(`${base}/photo%20one.png`, 1_000_000);
    expect(Buffer.compare(Buffer.from(fetched.bytes), png)).toBe(0);
    expect(fetched.filename).toBe('photo one.png');
  });

  it('follows 5 redirects and refuses a sixth', async () => {
    expect((await allowed.fetch(`${base}/redirect/5`, 1_000_000)).filename).toBe('photo one.png');
    expect(await failure(allowed, `${base}/redirect/6`)).toEqual({
      kind: 'UrlFetchFailed',
      message: 'Unable to fetch the source URL',
    });
  });

  it('answers 631 for a 404, a refused connection and a server that never answers (within the deadline)', async () => {
    expect((await failure(allowed, `${base}/missing`)).kind).toBe('UrlFetchFailed');
    const closed = createHttpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect((await failure(allowed, `http://127.0.0.1:${closedPort}/a.png`)).kind).toBe('UrlFetchFailed');
    const started = Date.now();
    expect((await failure(allowed, `${base}/slow`)).kind).toBe('UrlFetchFailed');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('gives up a body that trickles slower than 32 KB/s once 2 s have passed, and takes a slow one above it', async () => {
    const patient = new SafeUrlFetcher({ allowHosts: ['127.0.0.1'] });
    const started = Date.now();
    expect((await failure(patient, `${base}/trickle`)).kind).toBe('UrlFetchFailed');
    // at 10 KB/s the 240 KB would have held the fetch until the 10 s deadline
    expect(Date.now() - started).toBeLessThan(4_000);
    expect((await patient.fetch(`${base}/steady`, 1_000_000)).bytes.length).toBe(240 * 1024);
  });

  it('stops reading an endless body at the size limit with 413', async () => {
    expect(await failure(allowed, `${base}/endless`, 100_000)).toEqual({
      kind: 'FileTooBig',
      message: 'File too big - max 100 KB',
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(endlessClosed).toBe(true);
    expect(bytesSentToEndless).toBeLessThan(8 * 1024 * 1024);
    expect(await failure(allowed, `${base}/declared-big`, 100_000)).toEqual({
      kind: 'FileTooBig',
      message: 'File too big - max 100 KB',
    });
  });

  it('refuses a redirect from an allowed host to a loopback address it does not allow', async () => {
    const fetcher = new SafeUrlFetcher({ allowHosts: ['fixture.test'], resolve: resolverFor({ 'fixture.test': ['127.0.0.1'] }) });
    expect((await fetcher.fetch(`http://fixture.test:${port}/img.png`, 1_000_000)).filename).toBe('img.png');
    expect(await failure(fetcher, `http://fixture.test:${port}/to-loopback`)).toEqual({
      kind: 'UrlNotAllowed',
      message: 'URL not allowed',
    });
  });
});

describe('URL sources: the address checked is the address connected to', () => {
  it('resolves once and connects to that answer, even when the next answer would point inside', async () => {
    // In this test 127.0.0.1 plays a public address and 127.0.0.2 an internal one; a server listens on each.
    let internalHits = 0;
    const internal = createHttpServer((_request, response) => {
      internalHits += 1;
      response.end(png);
    });
    await new Promise<void>((resolve) => internal.listen(port, '127.0.0.2', resolve));
    try {
      const calls: string[] = [];
      let answer = 0;
      const rebinding: Resolver = (hostname, callback) => {
        calls.push(hostname);
        const address = answer++ === 0 ? '127.0.0.1' : '127.0.0.2';
        callback(null, [{ address, family: 4 }]);
      };
      const fetcher = new SafeUrlFetcher({ allowHosts: [], resolve: rebinding, isPublic: (address) => address === '127.0.0.1' });
      const fetched = await fetcher.fetch(`http://rebind.example:${port}/img.png`, 1_000_000);
      expect(Buffer.compare(Buffer.from(fetched.bytes), png)).toBe(0);
      expect(calls).toEqual(['rebind.example']);
      expect(internalHits).toBe(0);

      // and the other way round: an inside first answer is refused, and nothing is fetched
      answer = 1;
      expect((await failure(fetcher, `http://rebind.example:${port}/img.png`)).kind).toBe('UrlNotAllowed');
      expect(internalHits).toBe(0);
    } finally {
      await new Promise((resolve) => internal.close(resolve));
    }
  });
});

describe('URL sources over TLS', () => {
  let tlsPort: number;
  let tls: ReturnType<typeof createHttpsServer>;

  beforeAll(async () => {
    tls = createHttpsServer(
      { key: readFileSync(join(TLS, 'server.key')), cert: readFileSync(join(TLS, 'server.crt')) },
      (_request, response) => response.end(png),
    );
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    tlsPort = (tls.address() as AddressInfo).port;
  });

  afterAll(async () => {
    tls.closeAllConnections();
    await new Promise((resolve) => tls.close(resolve));
  });

  const names = resolverFor({ 'fixture.test': ['127.0.0.1'], 'other.test': ['127.0.0.1'] });

  it('verifies the certificate against the host name', async () => {
    const trusting = new SafeUrlFetcher({
      allowHosts: ['fixture.test', 'other.test'],
      resolve: names,
      ca: readFileSync(join(TLS, 'ca.crt')),
    });
    expect((await trusting.fetch(`https://fixture.test:${tlsPort}/a.png`, 1_000_000)).filename).toBe('a.png');
    expect((await failure(trusting, `https://other.test:${tlsPort}/a.png`)).kind).toBe('UrlFetchFailed');
  });

  it('refuses a certificate no trusted authority signed', async () => {
    const strict = new SafeUrlFetcher({ allowHosts: ['fixture.test'], resolve: names });
    expect((await failure(strict, `https://fixture.test:${tlsPort}/a.png`)).kind).toBe('UrlFetchFailed');
  });
});

describe('isPublicAddress', () => {
  it.each(['8.8.8.8', '93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001::200e'])(
    'lets the public address %s through',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  it.each(['127.0.0.1', '::7f00:1', '::8.8.8.8', '::ffff:8.8.8.8', 'not-an-ip'])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});

describe('URL sources through the handler', () => {
  it('stores an image fetched from an allowed host, named after the URL', async () => {
    const service = await createTestService({ URL_FETCH_ALLOW_HOSTS: '127.0.0.1' });
    const response = await service.send(urlencodedUpload({ key: service.apiKey, source: `${base}/photo%20one.png` }));
    expect(response.statusCode).toBe(200);
    const image = jsonBody(response).image;
    expect(image).toMatchObject({
      original_filename: 'photo one.png',
      name: 'photo-one',
      mime: 'image/png',
      width: 30,
      height: 20,
    });
    expect(await service.objectKeys()).toHaveLength(3);
  });

  it('refuses a loopback URL without the setting, storing nothing', async () => {
    const service = await createTestService();
    const response = await service.send(urlencodedUpload({ key: service.apiKey, source: `${base}/img.png` }));
    expect(JSON.parse(response.body)).toEqual({
      status_code: 400,
      error: { message: 'URL not allowed', code: 630 },
      status_txt: 'Bad Request',
    });
    const missing = await createTestService({ URL_FETCH_ALLOW_HOSTS: '127.0.0.1' });
    const notFound = await missing.send(urlencodedUpload({ key: missing.apiKey, image: `${base}/missing.png` }));
    expect(JSON.parse(notFound.body)).toEqual({
      status_code: 400,
      error: { message: 'Unable to fetch the source URL', code: 631 },
      status_txt: 'Bad Request',
    });
    expect(await service.objectKeys()).toEqual([]);
  });

  it('fetches nothing once the flood limit is reached: the slot is taken before the fetch', async () => {
    const service = await createTestService({ URL_FETCH_ALLOW_HOSTS: '127.0.0.1', DUPLICATES: 'allow' });
    await service.setFloodLimits({ hour: 1 });
    expect((await service.send(urlencodedUpload({ key: service.apiKey, source: `${base}/img.png` }))).statusCode).toBe(200);
    const before = requestsSeen;
    const refused = await service.send(urlencodedUpload({ key: service.apiKey, source: `${base}/img.png` }));
    expect(refused.statusCode).toBe(429);
    expect(requestsSeen).toBe(before);
  });

  it('refuses URL uploads of a client whose URLs failed too often this hour, before fetching; successes do not count', async () => {
    const service = await createTestService({ URL_FETCH_ALLOW_HOSTS: '127.0.0.1', URL_FETCH_FAILURES_PER_HOUR: '2' });
    const send = (path: string) => service.send(urlencodedUpload({ key: service.apiKey, source: `${base}${path}` }));
    expect((await send('/img.png')).statusCode).toBe(200);
    expect(JSON.parse((await send('/missing-1.png')).body)).toMatchObject({ error: { code: 631 } });
    expect(JSON.parse((await send('/missing-2.png')).body)).toMatchObject({ error: { code: 631 } });
    const before = requestsSeen;
    const refused = await send('/photo%20one.png');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers?.['Retry-After']).toMatch(/^\d+$/);
    expect(JSON.parse(refused.body)).toEqual({
      status_code: 429,
      error: { message: 'Too many URL sources that could not be fetched - max 2 per hour', code: 130 },
      status_txt: 'Too Many Requests',
    });
    expect(requestsSeen).toBe(before);
    // file uploads of the same client are not touched by it
    const png2 = await makePng(33, 21);
    expect((await service.send(urlencodedUpload({ key: service.apiKey, source: png2.toString('base64') }))).statusCode).toBe(200);
  });
});
