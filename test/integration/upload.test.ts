import { createHash } from 'node:crypto';
import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { makeAnimated, makeJpeg, makePng } from '../support/images';
import {
  createTestService,
  jsonBody,
  multipartUpload,
  PUBLIC_URL,
  urlencodedUpload,
  type TestService,
} from '../support/test-service';

let service: TestService;
let jpeg: Buffer;

beforeAll(async () => {
  // the same fixture is uploaded several times here; duplicate handling has its own suite
  service = await createTestService({ DUPLICATES: 'allow' });
  jpeg = await makeJpeg(800, 600, { exif: { IFD0: { Make: 'TestCam' } } });
});

async function objectBytes(
  url: string,
): Promise<{ bytes: Buffer; contentType: string | undefined; cacheControl: string | undefined }> {
  const key = url.slice(PUBLIC_URL.length + 1);
  const object = await service.clients.s3.send(new GetObjectCommand({ Bucket: service.bucket, Key: key }));
  return {
    bytes: Buffer.from(await object.Body!.transformToByteArray()),
    contentType: object.ContentType,
    cacheControl: object.CacheControl,
  };
}

const md5 = (bytes: Uint8Array): string => createHash('md5').update(bytes).digest('hex');

describe('upload through a real API Gateway event', () => {
  it('stores a multipart JPEG, its thumb and medium, and a record, and answers the full Image object', async () => {
    const response = await service.send(
      multipartUpload({
        source: { bytes: jpeg, filename: 'My Summer_photo-2.jpg', type: 'image/png' },
        key: service.apiKey,
        format: 'json',
      }),
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
    const body = jsonBody(response);
    expect(body).toMatchObject({ status_code: 200, success: { message: 'image uploaded', code: 200 }, status_txt: 'OK' });
    const image = body.image;
    const today = new Date().toISOString().slice(0, 10).replace(/-/g, '/');
    expect(image).toMatchObject({
      name: 'My-Summer_photo-2',
      extension: 'jpg',
      filename: 'My-Summer_photo-2.jpg',
      width: 800,
      height: 600,
      ratio: 800 / 600,
      title: 'My Summer photo 2',
      description: null,
      nsfw: '0',
      storage_id: null,
      storage: 'datefolder',
      original_filename: 'My Summer_photo-2.jpg',
      original_exifdata: { Make: 'TestCam' },
      views: '0',
      views_label: 'views',
      mime: 'image/jpeg',
      bits: 8,
      channels: 3,
      url: `${PUBLIC_URL}/images/${today}/My-Summer_photo-2.jpg`,
      how_long_ago: 'moments ago',
      expiration_date_gmt: null,
      is_animated: '0',
    });
    expect(image['date']).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(image['date_gmt']).toBe(image['date']);
    expect(image['url_viewer']).toBe(`${PUBLIC_URL}/image/${String(image['id_encoded'])}`);
    expect(image['url_short']).toBe(image['url_viewer']);
    expect(image['delete_url']).toMatch(new RegExp(`^${PUBLIC_URL}/image/${String(image['id_encoded'])}/delete/[0-9a-f]{48}$`));
    expect(image['display_url']).toBe((image['medium'] as { url: string }).url);
    expect(image['thumb']).toMatchObject({
      name: 'My-Summer_photo-2.th',
      filename: 'My-Summer_photo-2.th.jpg',
      width: 320,
      height: 320,
      ratio: 1,
      mime: 'image/jpeg',
      extension: 'jpg',
      bits: 8,
      channels: 3,
    });
    expect(image['medium']).toMatchObject({
      name: 'My-Summer_photo-2.md',
      filename: 'My-Summer_photo-2.md.jpg',
      width: 500,
      height: 375,
    });

    const original = await objectBytes(String(image['url']));
    expect(original.bytes.length).toBe(image['size']);
    expect(md5(original.bytes)).toBe(image['md5']);
    expect(original.contentType).toBe('image/jpeg');
    expect(original.cacheControl).toBe('public, max-age=31536000, immutable');
    expect((await sharp(original.bytes).metadata()).exif).toBeUndefined();
    for (const rendition of ['thumb', 'medium'] as const) {
      const info = image[rendition] as { url: string; size: number; width: number; height: number };
      const stored = await objectBytes(info.url);
      expect(stored.bytes.length).toBe(info.size);
      const meta = await sharp(stored.bytes).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', info.width, info.height]);
    }

    const id = (await service.idCodec()).decode(String(image['id_encoded']));
    expect(id).toBeGreaterThan(0);
    const item = await service.item(`IMG#${id}`);
    expect(item).toMatchObject({ status: 'active', name: 'My-Summer_photo-2', clientIp: '203.0.113.7', sourceMd5: md5(jpeg) });
    expect(String(item?.['deleteTokens'] ? [...(item['deleteTokens'] as Set<string>)][0] : '')).toBe(
      createHash('sha256')
        .update(String(image['delete_url']).split('/').pop() ?? '')
        .digest('hex'),
    );
  });

  it('never overwrites: the same name on the same day gets 16 hex characters more', async () => {
    const first = jsonBody(
      await service.send(multipartUpload({ source: { bytes: jpeg, filename: 'twin.jpg' }, key: service.apiKey })),
    ).image;
    const second = jsonBody(
      await service.send(
        multipartUpload({ source: { bytes: await makeJpeg(64, 64), filename: 'twin.jpg' }, key: service.apiKey }),
      ),
    ).image;
    expect(first['name']).toBe('twin');
    expect(second['name']).toMatch(/^twin[0-9a-f]{16}$/);
    expect((await objectBytes(String(first['url']))).bytes.length).toBe(first['size']);
    expect((await objectBytes(String(second['url']))).bytes.length).toBe(second['size']);
  });

  it('gives concurrent uploads of one name distinct names and keeps every object', async () => {
    const bodies = await Promise.all(
      Array.from({ length: 8 }, async (_, index) => {
        const bytes = await makePng(20 + index, 20);
        const response = await service.send(multipartUpload({ source: { bytes, filename: 'race.png' }, key: service.apiKey }));
        return { bytes, image: jsonBody(response).image };
      }),
    );
    const names = new Set(bodies.map((entry) => entry.image['name']));
    expect(names.size).toBe(8);
    for (const entry of bodies) {
      const stored = await objectBytes(String(entry.image['url']));
      expect(md5(stored.bytes)).toBe(md5(entry.bytes));
    }
  });

  it('accepts a urlencoded base64 source as imgbb-uploader sends it, with a generated original_filename', async () => {
    const png = await makePng(40, 30);
    const response = await service.send(
      urlencodedUpload({ source: png.toString('base64'), key: service.apiKey, title: 'From imgbb' }),
    );
    expect(response.statusCode).toBe(200);
    const image = jsonBody(response).image;
    expect(image).toMatchObject({ extension: 'png', mime: 'image/png', width: 40, height: 30, title: 'From imgbb' });
    expect(image['original_filename']).toMatch(/^[0-9a-f]{16}\.png$/);
    expect(md5((await objectBytes(String(image['url']))).bytes)).toBe(md5(png));
  });

  it('accepts a GET with the source in the query, as a curl line would', async () => {
    const png = await makePng(8, 8);
    const query = new URLSearchParams({ key: service.apiKey, source: png.toString('base64'), format: 'txt' });
    const response = await service.send(new Request(`${PUBLIC_URL}/api/1/upload/?${query.toString()}`));
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toMatch(new RegExp(`^${PUBLIC_URL}/images/\\d{4}/\\d\\d/\\d\\d/[0-9a-f]{16}\\.png$`));
  });

  it('answers in imgBB shape when the request uses the image parameter', async () => {
    const response = await service.send(
      urlencodedUpload({ image: (await makePng(10, 10)).toString('base64'), key: service.apiKey }),
    );
    const body = JSON.parse(response.body) as Record<string, unknown> & { data: Record<string, unknown> };
    expect(body).toMatchObject({
      status_code: 200,
      status: 200,
      success: { message: 'image uploaded', code: 200 },
      status_txt: 'OK',
    });
    expect(body).not.toHaveProperty('image');
    expect(body.data['id']).toBe(body.data['id_encoded']);
    expect(body.data['url']).toMatch(/\.png$/);
  });

  it('redirects to the viewer with format=redirect and the viewer shows the image and counts views', async () => {
    const response = await service.send(
      multipartUpload({ source: { bytes: jpeg, filename: 'view.jpg' }, key: service.apiKey, format: 'REDIRECT' }),
    );
    expect(response.statusCode).toBe(302);
    expect(response.body).toBe('');
    const viewerUrl = String(response.headers?.['Location']);
    expect(viewerUrl).toMatch(new RegExp(`^${PUBLIC_URL}/image/[A-Za-z0-9]+$`));
    const page = await service.send(new Request(viewerUrl));
    expect(page.statusCode).toBe(200);
    expect(page.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('/view.md.jpg');
    expect(page.body).toContain('1 view<');
    const again = await service.send(new Request(viewerUrl.replace('/image/', '/image/some-title.')));
    expect(again.body).toContain('2 views');
  });

  it('keeps the animation of an animated GIF', async () => {
    const gif = await makeAnimated('gif', 60, 40, 3);
    const image = jsonBody(
      await service.send(multipartUpload({ source: { bytes: gif, filename: 'anim.gif' }, key: service.apiKey })),
    ).image;
    expect(image).toMatchObject({ extension: 'gif', mime: 'image/gif', is_animated: '1' });
    const thumb = await objectBytes((image['thumb'] as { url: string }).url);
    expect((await sharp(thumb.bytes).metadata()).pages).toBe(3);
  });

  it('shows a page of the API and apps that names the API and never the key, and offers the apps as files', async () => {
    const apps = await service.send(new Request(`${PUBLIC_URL}/apps`));
    expect(apps.statusCode).toBe(200);
    expect(apps.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expect(apps.body).toContain(`${PUBLIC_URL}/api/1/upload`);
    expect(apps.body).not.toContain(service.apiKey);
    const sharex = await service.send(new Request(`${PUBLIC_URL}/apps/sharex.sxcu`));
    expect(sharex.headers?.['Content-Disposition']).toBe('attachment; filename="sharex.sxcu"');
    expect(JSON.parse(sharex.body)).toMatchObject({
      RequestURL: `${PUBLIC_URL}/api/1/upload`,
      Headers: { 'X-API-Key': 'YOUR_KEY' },
    });
    expect(sharex.body).not.toContain(service.apiKey);
    for (const file of ['picgo.json', 'flameshot.sh']) {
      const answer = await service.send(new Request(`${PUBLIC_URL}/apps/${file}`));
      expect([file, answer.statusCode, answer.body]).toEqual([file, 200, expect.stringContaining(`${PUBLIC_URL}/api/1/upload`)]);
    }
    expect((await service.send(new Request(`${PUBLIC_URL}/apps/other.txt`))).statusCode).toBe(404);
  });

  it('answers 404 with a page for an unknown or malformed id', async () => {
    for (const path of ['/image/zzzzzz', '/image/..%2F..', '/image/']) {
      const page = await service.send(new Request(`${PUBLIC_URL}${path}`));
      expect(page.statusCode).toBe(404);
      expect(page.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    }
  });

  it('stores nothing for a refused upload', async () => {
    const before = await service.item('COUNTER#image-id');
    const response = await service.send(
      multipartUpload({
        source: { bytes: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), filename: 'x.svg' },
        key: service.apiKey,
      }),
    );
    expect(response.statusCode).toBe(415);
    const after = await service.item('COUNTER#image-id');
    expect(after).toEqual(before);
    await expect(
      service.clients.s3.send(
        new HeadObjectCommand({
          Bucket: service.bucket,
          Key: `images/${new Date().toISOString().slice(0, 10).replace(/-/g, '/')}/x.svg`,
        }),
      ),
    ).rejects.toThrow();
  });
});
