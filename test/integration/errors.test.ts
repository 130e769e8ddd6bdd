import type { APIGatewayProxyResult } from 'aws-lambda';
import { makeJpeg, makePng } from '../support/images';
import { createTestService, multipartUpload, PUBLIC_URL, urlencodedUpload, type TestService } from '../support/test-service';

let service: TestService;
let png: Buffer;

beforeAll(async () => {
  service = await createTestService({ MAX_UPLOAD_BYTES: '20000' });
  png = await makePng(30, 20);
});

function envelope(response: APIGatewayProxyResult): {
  status_code: number;
  error: { message: string; code: number };
  status_txt: string;
} {
  expect(response.headers?.['Content-Type']).toBe('application/json; charset=utf-8');
  return JSON.parse(response.body) as { status_code: number; error: { message: string; code: number }; status_txt: string };
}

function expectError(response: APIGatewayProxyResult, status: number, code: number, message: string, statusTxt: string): void {
  expect({ statusCode: response.statusCode, body: envelope(response) }).toEqual({
    statusCode: status,
    body: { status_code: status, error: { message, code }, status_txt: statusTxt },
  });
}

describe('errors of the contract, section 6', () => {
  const key = (): string => service.apiKey;
  const cases: Array<[string, () => Request, number, number, string, string]> = [
    ['no key', () => multipartUpload({ source: { bytes: png, filename: 'a.png' } }), 401, 100, 'No key provided', 'Unauthorized'],
    [
      'a wrong key',
      () => multipartUpload({ source: { bytes: png, filename: 'a.png' }, key: 'nope' }),
      401,
      100,
      'Invalid API key.',
      'Unauthorized',
    ],
    [
      'a version other than 1',
      () => new Request(`${PUBLIC_URL}/api/2/upload?key=${key()}`),
      404,
      110,
      'Invalid API version.',
      'Not Found',
    ],
    [
      'an action other than upload',
      () => new Request(`${PUBLIC_URL}/api/1/delete?key=${key()}`),
      404,
      120,
      'Invalid API action',
      'Not Found',
    ],
    [
      'a method other than GET and POST',
      () => new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'PUT', body: 'x' }),
      405,
      405,
      'Method not allowed',
      'Method Not Allowed',
    ],
    ['no source at all', () => urlencodedUpload({ key: key() }), 400, 130, 'Empty upload source', 'Bad Request'],
    ['an empty source', () => urlencodedUpload({ key: key(), source: '' }), 400, 130, 'Empty source', 'Bad Request'],
    [
      'base64 that does not decode',
      () => urlencodedUpload({ key: key(), source: 'not*base64!' }),
      400,
      120,
      'Invalid base64 string',
      'Bad Request',
    ],
    [
      'bytes that are not an image',
      () => urlencodedUpload({ key: key(), source: Buffer.from('hello world, I am text').toString('base64') }),
      415,
      613,
      'Unavailable image format',
      'Unsupported Media Type',
    ],
    [
      'a file larger than the limit',
      () => multipartUpload({ key: key(), source: { bytes: Buffer.alloc(20001, 1), filename: 'big.jpg' } }),
      413,
      400,
      'File too big - max 20 KB',
      'Payload Too Large',
    ],
    [
      'a base64 source larger than the limit',
      () => urlencodedUpload({ key: key(), source: Buffer.alloc(20001, 1).toString('base64') }),
      413,
      400,
      'File too big - max 20 KB',
      'Payload Too Large',
    ],
    [
      'a width larger than the image',
      () => multipartUpload({ key: key(), width: '31', source: { bytes: png, filename: 'a.png' } }),
      400,
      610,
      'Target width is greater than the original image width',
      'Bad Request',
    ],
    [
      'a bad expiration',
      () => multipartUpload({ key: key(), expiration: 'soon', source: { bytes: png, filename: 'a.png' } }),
      400,
      620,
      'Invalid expiration',
      'Bad Request',
    ],
    [
      'a JSON body',
      () =>
        new Request(`${PUBLIC_URL}/api/1/upload`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ key: key(), source: png.toString('base64') }),
        }),
      400,
      130,
      'Unsupported request body: send multipart/form-data or application/x-www-form-urlencoded',
      'Bad Request',
    ],
    [
      'a URL source on a non-public address',
      () => urlencodedUpload({ key: key(), source: 'http://169.254.169.254/latest/meta-data/' }),
      400,
      630,
      'URL not allowed',
      'Bad Request',
    ],
  ];

  it.each(cases)('answers %s with the envelope', async (_name, request, status, code, message, statusTxt) => {
    expectError(await service.send(request()), status, code, message, statusTxt);
  });

  it('checks the key before anything about the source', async () => {
    const response = await service.send(urlencodedUpload({ key: 'wrong', source: 'not*base64!' }));
    expectError(response, 401, 100, 'Invalid API key.', 'Unauthorized');
  });

  it('takes the X-API-Key header over the key parameter', async () => {
    const request = multipartUpload({ key: 'wrong', source: { bytes: png, filename: 'a.png' } });
    request.headers.set('X-API-Key', service.apiKey);
    expect((await service.send(request)).statusCode).toBe(200);
    const wrongHeader = multipartUpload({ key: service.apiKey, source: { bytes: png, filename: 'a.png' } });
    wrongHeader.headers.set('x-api-key', 'wrong');
    expect((await service.send(wrongHeader)).statusCode).toBe(401);
  });

  it('answers txt and redirect errors as text/plain with the same status', async () => {
    for (const format of ['txt', 'redirect']) {
      const response = await service.send(urlencodedUpload({ key: 'wrong', source: png.toString('base64'), format }));
      expect(response.statusCode).toBe(401);
      expect(response.headers?.['Content-Type']).toBe('text/plain; charset=utf-8');
      expect(response.body).toBe('Invalid API key.');
    }
    const early = await service.send(new Request(`${PUBLIC_URL}/api/3/upload?format=txt`));
    expect([early.statusCode, early.body]).toEqual([404, 'Invalid API version.']);
  });

  it('answers 503 code 0 while the operator has not configured a key', async () => {
    const unconfigured = await createTestService();
    await unconfigured.setApiKey(undefined);
    const response = await unconfigured.send(multipartUpload({ key: 'anything', source: { bytes: png, filename: 'a.png' } }));
    expectError(response, 503, 0, 'API key is not configured', 'Service Unavailable');
  });

  it('refuses two source files in one body', async () => {
    const form = new FormData();
    form.append('key', service.apiKey);
    form.append('source', new Blob([png]), 'a.png');
    form.append('source', new Blob([await makeJpeg(10, 10)]), 'b.jpg');
    const response = await service.send(new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'POST', body: form }));
    expectError(response, 400, 130, 'Only one upload source is allowed', 'Bad Request');
  });

  it('refuses a multipart body without a boundary', async () => {
    const response = await service.send(
      new Request(`${PUBLIC_URL}/api/1/upload`, {
        method: 'POST',
        headers: { 'Content-Type': 'multipart/form-data' },
        body: 'garbage',
      }),
    );
    expectError(response, 400, 130, 'Malformed multipart/form-data body', 'Bad Request');
  });

  it('answers an unclosed multipart part with 400', async () => {
    const body = `--b\r\nContent-Disposition: form-data; name="key"\r\n\r\n${service.apiKey}\r\n--b\r\nContent-Disposition: form-data; name="source"; filename="a.png"\r\n\r\n${png.toString('latin1').slice(0, 20)}`;
    const response = await service.send(
      new Request(`${PUBLIC_URL}/api/1/upload`, {
        method: 'POST',
        headers: { 'Content-Type': 'multipart/form-data; boundary=b' },
        body: Buffer.from(body, 'latin1'),
      }),
    );
    expectError(response, 400, 130, 'Malformed multipart/form-data body', 'Bad Request');
  });
});

describe('a method a path does not take', () => {
  it('answers 405 in the envelope with the methods the path takes, on every path', async () => {
    const cases: Array<[string, string, string]> = [
      ['PUT', '/api/1/upload', 'GET, POST'],
      ['GET', '/api/1/upload-url', 'POST'],
      ['POST', '/api/1/openapi.json', 'GET, HEAD'],
      ['POST', '/image/abc', 'GET, HEAD'],
      ['GET', '/image/abc/report', 'POST'],
      ['PUT', '/image/abc/delete/token', 'GET, HEAD, POST'],
      ['POST', '/upload', 'GET, HEAD'],
      ['POST', '/', 'GET, HEAD'],
      ['DELETE', '/upload-worker.js', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const response = await service.send(
        new Request(`${PUBLIC_URL}${path}`, { method, ...(method === 'GET' ? {} : { body: 'x' }) }),
      );
      expect([method, path, response.statusCode, response.headers?.['Allow']]).toEqual([method, path, 405, allow]);
    }
  });
});
