import sharp from 'sharp';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { makeJpeg, makePng } from '../support/images';
import { createTestService, jsonBody, multipartUpload, PUBLIC_URL, type TestService } from '../support/test-service';

/** Every field of the Image object (contract, section 3) and the JSON type it must have. */
const IMAGE_FIELD_TYPES: Record<string, string> = {
  name: 'string',
  extension: 'string',
  size: 'integer',
  width: 'integer',
  height: 'integer',
  date: 'string',
  date_gmt: 'string',
  storage_id: 'null',
  description: 'string|null',
  nsfw: 'string',
  md5: 'string',
  storage: 'string',
  original_filename: 'string',
  original_exifdata: 'object|null',
  views: 'string',
  id_encoded: 'string',
  filename: 'string',
  ratio: 'number',
  size_formatted: 'string',
  mime: 'string',
  bits: 'integer',
  channels: 'integer|null',
  url: 'string',
  url_viewer: 'string',
  thumb: 'object',
  medium: 'object',
  views_label: 'string',
  display_url: 'string',
  how_long_ago: 'string',
  title: 'string',
  url_short: 'string',
  delete_url: 'string',
  expiration_date_gmt: 'string|null',
  is_animated: 'string',
};
const RENDITION_FIELD_TYPES: Record<string, string> = {
  filename: 'string',
  name: 'string',
  width: 'integer',
  height: 'integer',
  ratio: 'number',
  size: 'integer',
  size_formatted: 'string',
  mime: 'string',
  extension: 'string',
  bits: 'integer',
  channels: 'integer|null',
  url: 'string',
};

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Number.isInteger(value)) return 'integer';
  return typeof value;
}

function expectFieldTypes(object: Record<string, unknown>, types: Record<string, string>): void {
  for (const [field, type] of Object.entries(types)) {
    expect({ field, present: field in object }).toEqual({ field, present: true });
    const actual = typeOf(object[field]);
    const allowed = type.split('|');
    expect({ field, type: allowed.includes(actual) || (actual === 'integer' && allowed.includes('number')) }).toEqual({
      field,
      type: true,
    });
  }
}

describe('upload options', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await createTestService({ TIME_ZONE: 'Pacific/Kiritimati', DUPLICATES: 'allow' });
  });

  it('answers every field of the Image object with its type', async () => {
    const image = jsonBody(
      await service.send(
        multipartUpload({ key: service.apiKey, source: { bytes: await makePng(30, 20), filename: 'types.png' } }),
      ),
    ).image;
    expectFieldTypes(image, IMAGE_FIELD_TYPES);
    expectFieldTypes(image['thumb'] as Record<string, unknown>, RENDITION_FIELD_TYPES);
    expectFieldTypes(image['medium'] as Record<string, unknown>, RENDITION_FIELD_TYPES);
  });

  it('takes title, description, nsfw and expiration as given, and cuts a long title to 100 characters', async () => {
    const image = jsonBody(
      await service.send(
        multipartUpload({
          key: service.apiKey,
          title: 'T'.repeat(120),
          description: 'A <b>bold</b> claim',
          nsfw: '1',
          expiration: 'PT1H',
          source: { bytes: await makePng(30, 20), filename: 'opts.png' },
        }),
      ),
    ).image;
    expect(image).toMatchObject({ title: 'T'.repeat(100), description: 'A <b>bold</b> claim', nsfw: '1' });
    const expires = Date.parse(`${String(image['expiration_date_gmt']).replace(' ', 'T')}Z`);
    const created = Date.parse(`${String(image['date_gmt']).replace(' ', 'T')}Z`);
    expect(expires - created).toBe(3600_000);
  });

  it('writes date in the operator time zone, date_gmt in UTC, and files in the folder of date', async () => {
    const image = jsonBody(
      await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await makePng(10, 10), filename: 'tz.png' } })),
    ).image;
    const local = new Date(Date.parse(`${String(image['date_gmt']).replace(' ', 'T')}Z`) + 14 * 3600_000);
    expect(image['date']).toBe(local.toISOString().slice(0, 19).replace('T', ' '));
    expect(image['url']).toBe(`${PUBLIC_URL}/images/${String(image['date']).slice(0, 10).replace(/-/g, '/')}/tz.png`);
  });

  it('downscales the stored original to the requested width', async () => {
    const image = jsonBody(
      await service.send(
        multipartUpload({
          key: service.apiKey,
          width: '300',
          source: { bytes: await makeJpeg(1200, 800), filename: 'wide.jpg' },
        }),
      ),
    ).image;
    expect(image).toMatchObject({ width: 300, height: 200 });
    const key = String(image['url']).slice(PUBLIC_URL.length + 1);
    const object = await service.clients.s3.send(new GetObjectCommand({ Bucket: service.bucket, Key: key }));
    const meta = await sharp(Buffer.from(await object.Body!.transformToByteArray())).metadata();
    expect([meta.width, meta.height]).toEqual([300, 200]);
  });

  it('names files by id or at random when the operator chooses so', async () => {
    const byId = await createTestService({ NAMING: 'id' });
    const image = jsonBody(
      await byId.send(multipartUpload({ key: byId.apiKey, source: { bytes: await makePng(10, 10), filename: 'ignored.png' } })),
    ).image;
    expect(image['name']).toBe(image['id_encoded']);
    const random = await createTestService({ NAMING: 'random' });
    const other = jsonBody(
      await random.send(
        multipartUpload({ key: random.apiKey, source: { bytes: await makePng(10, 10), filename: 'ignored.png' } }),
      ),
    ).image;
    expect(other['name']).toMatch(/^[0-9a-f]{32}$/);
    expect(other['original_filename']).toBe('ignored.png');
  });
});

describe('CORS', () => {
  it('answers a preflight from an allowed origin and marks the upload response, only when origins are configured', async () => {
    const service = await createTestService({ CORS_ORIGINS: 'https://app.example.test' });
    const preflight = await service.send(
      new Request(`${PUBLIC_URL}/api/1/upload`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://app.example.test', 'Access-Control-Request-Method': 'POST' },
      }),
    );
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers).toMatchObject({
      'Access-Control-Allow-Origin': 'https://app.example.test',
      'Access-Control-Allow-Headers': 'Content-Type, X-API-Key',
    });
    const stranger = await service.send(
      new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example.test' } }),
    );
    expect(stranger.statusCode).toBe(405);
    expect(stranger.headers?.['Access-Control-Allow-Origin']).toBeUndefined();
    // a method an allowed origin's browser may not use: the methods, OPTIONS among them, with the CORS headers
    const deleting = await service.send(
      new Request(`${PUBLIC_URL}/api/1/upload-url`, { method: 'DELETE', headers: { Origin: 'https://app.example.test' } }),
    );
    expect([deleting.statusCode, deleting.headers?.['Allow']]).toEqual([405, 'POST, OPTIONS']);
    expect(deleting.headers?.['Access-Control-Allow-Origin']).toBe('https://app.example.test');
    const upload = multipartUpload({ key: service.apiKey, source: { bytes: await makePng(10, 10), filename: 'c.png' } });
    upload.headers.set('Origin', 'https://app.example.test');
    expect((await service.send(upload)).headers?.['Access-Control-Allow-Origin']).toBe('https://app.example.test');

    const closed = await createTestService();
    const refused = await closed.send(
      new Request(`${PUBLIC_URL}/api/1/upload`, { method: 'OPTIONS', headers: { Origin: 'https://app.example.test' } }),
    );
    expect(refused.statusCode).toBe(405);
    expect(refused.headers?.['Allow']).toBe('GET, POST');
  });
});
