import { makePng } from '../support/images';
import { createTestService, multipartUpload, PUBLIC_URL, urlencodedUpload, type TestService } from '../support/test-service';

const SECRET = 'log-test-key-7f3a9c2e41';

describe('logs', () => {
  let service: TestService;
  let lines: string[];
  let writes: jest.SpyInstance[];

  beforeAll(async () => {
    const previous = process.env['POWERTOOLS_LOG_LEVEL'];
    process.env['POWERTOOLS_LOG_LEVEL'] = 'INFO';
    try {
      service = await createTestService({ DUPLICATES: 'allow' });
    } finally {
      process.env['POWERTOOLS_LOG_LEVEL'] = previous;
    }
    await service.setApiKey(SECRET);
  });

  beforeEach(() => {
    lines = [];
    const capture = (chunk: unknown): boolean => {
      lines.push(String(chunk));
      return true;
    };
    writes = [
      jest.spyOn(process.stdout, 'write').mockImplementation(capture),
      jest.spyOn(process.stderr, 'write').mockImplementation(capture),
    ];
  });

  afterEach(() => writes.forEach((spy) => spy.mockRestore()));

  it('writes one JSON line per request with its request id, and never the key or the image bytes', async () => {
    const png = await makePng(40, 30);
    const base64 = png.toString('base64');
    await service.send(new Request(`${PUBLIC_URL}/api/1/upload?key=${SECRET}&source=${encodeURIComponent(base64)}&format=txt`));
    await service.send(urlencodedUpload({ key: SECRET, source: base64 }));
    const withHeader = multipartUpload({ source: { bytes: png, filename: 'h.png' } });
    withHeader.headers.set('X-API-Key', SECRET);
    await service.send(withHeader);
    await service.send(new Request(`${PUBLIC_URL}/api/1/upload?key=${SECRET}-wrong&source=xx`));
    await service.send(new Request(`${PUBLIC_URL}/api/1/upload?KEY=${SECRET}`));

    const records = lines.flatMap((chunk) => chunk.split('\n')).filter((line) => line.trim() !== '');
    expect(records.length).toBeGreaterThanOrEqual(5);
    for (const line of records) {
      const record = JSON.parse(line) as Record<string, unknown>;
      expect(typeof record['function_request_id']).toBe('string');
      expect(line).not.toContain(SECRET);
      expect(line).not.toContain(base64.slice(0, 64));
    }
    const requestLines = records
      .map((line) => JSON.parse(line) as { message: string; query?: Record<string, string> })
      .filter((record) => record.message === 'request');
    expect(requestLines[0]?.query?.['key']).toBe('[redacted]');
  });

  it('keeps every secret of a whole session out of every line: the key in each place it may come, and delete tokens', async () => {
    const secrets = [SECRET];
    const deleteLinks: string[] = [];
    const upload = async (request: Request): Promise<void> => {
      const response = await service.send(request);
      const link = (JSON.parse(response.body) as { image?: { delete_url?: string } }).image?.delete_url;
      if (link) {
        deleteLinks.push(link);
        secrets.push(link.split('/').pop() ?? '');
      }
    };
    const png = (n: number) => makePng(50 + n, 30);
    // the key as `key` in the query, the form and the multipart body, as the header, and near-misses clients send
    await upload(multipartUpload({ key: SECRET, source: { bytes: await png(1), filename: 'a.png' } }));
    await upload(urlencodedUpload({ key: SECRET, source: (await png(2)).toString('base64') }));
    const header = multipartUpload({ source: { bytes: await png(3), filename: 'c.png' } });
    header.headers.set('X-API-Key', SECRET);
    await upload(header);
    for (const name of [' key', 'api_key', 'apikey', 'ApiKey', 'API-KEY', 'Key ']) {
      await service.send(new Request(`${PUBLIC_URL}/api/1/upload?${encodeURIComponent(name)}=${SECRET}&source=xx`));
    }
    await service.send(new Request(`${PUBLIC_URL}/api/1/upload?%20key=${SECRET}&key=${SECRET}`));
    // a duplicate: a delete link of its own
    await upload(multipartUpload({ key: SECRET, source: { bytes: await png(1), filename: 'a.png' } }));
    // views, the delete pages, deletes, and errors on them
    for (const link of deleteLinks) {
      const viewer = link.replace(/\/delete\/[0-9a-f]{48}$/, '');
      await service.send(new Request(viewer));
      await service.send(new Request(link));
      await service.send(new Request(`${link}x`, { method: 'POST' }));
    }
    // non-canonical spellings of a delete link: routed nowhere (404), and their tokens kept out of the log too
    const [first] = deleteLinks;
    const path = new URL(first ?? '').pathname;
    for (const odd of [`/${path}`, path.replace('/image/', '/image//'), path.replace('/delete/', '/delete//'), `${path}/x`]) {
      const answer = await service.send(new Request(`${PUBLIC_URL}${odd}`, { method: 'POST' }));
      expect([odd, answer.statusCode]).toEqual([odd, 404]);
    }
    for (const link of deleteLinks) await service.send(new Request(link, { method: 'POST' }));

    const text = lines.join('');
    expect(deleteLinks.length).toBeGreaterThanOrEqual(4);
    expect(text).toContain('"path":"/image/');
    expect(text).toContain('/delete/[redacted]');
    for (const secret of secrets) expect(secret.length).toBeGreaterThan(20);
    for (const secret of secrets) expect(text).not.toContain(secret);
  });
});
