import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { makeAnimated, makeAvif, makeBmp, makeJpegWithMetadata, makeTiff, makeWebp } from '../support/images';
import { createTestService, jsonBody, multipartUpload, PUBLIC_URL, type TestService } from '../support/test-service';

let service: TestService;

beforeAll(async () => {
  service = await createTestService();
});

async function stored(url: string): Promise<{ bytes: Buffer; contentType: string | undefined }> {
  const object = await service.clients.s3.send(
    new GetObjectCommand({ Bucket: service.bucket, Key: url.slice(PUBLIC_URL.length + 1) }),
  );
  return { bytes: Buffer.from(await object.Body!.transformToByteArray()), contentType: object.ContentType };
}

describe('every accepted format, end to end through the handler', () => {
  it.each([
    ['photo.bmp', 'png', () => Promise.resolve(makeBmp(60, 40, 24)), 'image/png', '0'],
    ['scan.tiff', 'png', () => makeTiff(60, 40), 'image/png', '0'],
    [
      'iphone.heic',
      'jpg',
      () => Promise.resolve(readFileSync(join(__dirname, '..', 'fixtures', 'gradient.heic'))),
      'image/jpeg',
      '0',
    ],
    ['pic.webp', 'webp', () => makeWebp(60, 40), 'image/webp', '0'],
    ['pic.avif', 'avif', () => makeAvif(60, 40), 'image/avif', '0'],
    ['loop.webp', 'webp', () => makeAnimated('webp', 60, 40, 3), 'image/webp', '1'],
  ] as Array<[string, string, () => Promise<Buffer>, string, string]>)(
    'stores %s as .%s',
    async (filename, extension, make, mime, animated) => {
      const response = await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await make(), filename } }));
      expect(response.statusCode).toBe(200);
      const image = jsonBody(response).image;
      expect(image).toMatchObject({ extension, mime, is_animated: animated, original_filename: filename });
      expect(image['filename']).toBe(`${filename.slice(0, filename.lastIndexOf('.'))}.${extension}`);
      for (const url of [image['url'], (image['thumb'] as { url: string }).url, (image['medium'] as { url: string }).url]) {
        const object = await stored(String(url));
        expect(object.contentType).toBe(mime);
        expect((await sharp(object.bytes).metadata()).format).toBe(
          extension === 'jpg' ? 'jpeg' : extension === 'avif' ? 'heif' : extension,
        );
      }
    },
  );

  it('stores a camera JPEG without GPS or any other metadata, and answers its EXIF in original_exifdata', async () => {
    const response = await service.send(
      multipartUpload({ key: service.apiKey, source: { bytes: await makeJpegWithMetadata(), filename: 'gps.jpg' } }),
    );
    const image = jsonBody(response).image;
    expect(image['original_exifdata']).toMatchObject({ Make: 'TestCam', GPSLatitudeRef: 'N' });
    const original = await stored(String(image['url']));
    const meta = await sharp(original.bytes).metadata();
    expect([meta.exif, meta.xmp, meta.iptc]).toEqual([undefined, undefined, undefined]);
    expect(original.bytes.includes('Secret')).toBe(false);
    expect(original.bytes.length).toBe(image['size']);
  });
});
