import sharp from 'sharp';
import { UploadError } from '../../functions/core/errors';
import { SharpImageProcessor } from '../../functions/imaging/sharp-image-processor';
import { makeAnimated, makeAvif, makeJpeg, makePng, makeTiff, makeWebp, NOT_IMAGES } from '../support/images';

const processor = new SharpImageProcessor({ maxPixels: 4_000_000, maxFrames: 10, thumbSize: 32, mediumWidth: 50 });

async function expectRefused(input: Buffer, kind: string, message: string): Promise<void> {
  const error: unknown = await processor.process(input, { targetWidth: undefined }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UploadError);
  expect((error as UploadError).kind).toBe(kind);
  expect((error as UploadError).message).toBe(message);
}

describe('SharpImageProcessor', () => {
  it('keeps a clean JPEG byte for byte and makes a square thumb and a 50 px medium', async () => {
    const input = await makeJpeg(120, 80);
    const result = await processor.process(input, { targetWidth: undefined });
    expect(Buffer.compare(Buffer.from(result.original.bytes), input)).toBe(0);
    expect(result.original).toMatchObject({ width: 120, height: 80, mime: 'image/jpeg', extension: 'jpg', bits: 8, channels: 3 });
    expect(result.thumb).toMatchObject({ width: 32, height: 32, mime: 'image/jpeg', extension: 'jpg' });
    expect(result.medium).toMatchObject({ width: 50, height: 33, mime: 'image/jpeg' });
    const thumbMeta = await sharp(result.thumb.bytes).metadata();
    expect([thumbMeta.format, thumbMeta.width, thumbMeta.height]).toEqual(['jpeg', 32, 32]);
    expect(result.exif).toBeNull();
    expect(result.animated).toBe(false);
  });

  it('stores a JPEG with orientation 6 upright, without its EXIF, and reports its EXIF', async () => {
    const input = await makeJpeg(120, 80, { orientation: 6, exif: { IFD0: { Make: 'TestCam', Model: 'T-1' } } });
    const result = await processor.process(input, { targetWidth: undefined });
    const meta = await sharp(result.original.bytes).metadata();
    expect([meta.width, meta.height, meta.orientation, meta.exif]).toEqual([80, 120, undefined, undefined]);
    expect(result.original).toMatchObject({ width: 80, height: 120 });
    expect(result.exif).toMatchObject({ Make: 'TestCam', Model: 'T-1', Orientation: 6 });
    // the red marker of the top-left corner is now at the top-right
    const { data, info } = await sharp(result.original.bytes).raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number): number => data[(y * info.width + x) * info.channels] ?? -1;
    expect(at(info.width - 3, 3)).toBeGreaterThan(200);
    expect(at(3, 3)).toBeLessThan(100);
    expect(result.medium).toMatchObject({ width: 50, height: 75 });
  });

  it('downscales the original to the requested width and refuses a larger width', async () => {
    const input = await makePng(200, 100);
    const result = await processor.process(input, { targetWidth: 100 });
    expect(result.original).toMatchObject({ width: 100, height: 50, mime: 'image/png' });
    const meta = await sharp(result.original.bytes).metadata();
    expect([meta.width, meta.height]).toEqual([100, 50]);
    await expect(processor.process(input, { targetWidth: 201 })).rejects.toMatchObject({
      kind: 'WidthTooLarge',
      message: 'Target width is greater than the original image width',
    });
  });

  it('never upscales the medium and scales a small image up for the thumb', async () => {
    const result = await processor.process(await makePng(20, 10, { alpha: true }), { targetWidth: undefined });
    expect(result.medium).toMatchObject({ width: 20, height: 10 });
    expect(result.thumb).toMatchObject({ width: 32, height: 32 });
    expect(result.original.channels).toBe(4);
  });

  it('reports 16 bits for a 16-bit PNG', async () => {
    const result = await processor.process(await makePng(40, 30, { sixteenBit: true }), { targetWidth: undefined });
    expect(result.original.bits).toBe(16);
  });

  it.each([
    ['gif', 'image/gif'],
    ['webp', 'image/webp'],
  ] as const)('keeps the animation of an animated %s in both renditions', async (format, mime) => {
    const result = await processor.process(await makeAnimated(format, 80, 60, 3), { targetWidth: undefined });
    expect(result.animated).toBe(true);
    expect(result.original).toMatchObject({ mime, width: 80, height: 60 });
    for (const rendition of [result.thumb, result.medium]) {
      const meta = await sharp(rendition.bytes).metadata();
      expect(meta.pages).toBe(3);
      expect(rendition.mime).toBe(mime);
    }
    expect(result.thumb).toMatchObject({ width: 32, height: 32 });
  });

  it('keeps WebP and AVIF as they are and stores TIFF as PNG', async () => {
    const webp = await processor.process(await makeWebp(60, 40), { targetWidth: undefined });
    expect(webp.original).toMatchObject({ mime: 'image/webp', extension: 'webp' });
    const avif = await processor.process(await makeAvif(60, 40), { targetWidth: undefined });
    expect(avif.original).toMatchObject({ mime: 'image/avif', extension: 'avif', width: 60, height: 40 });
    expect((await sharp(avif.thumb.bytes).metadata()).compression).toBe('av1');
    const tiff = await processor.process(await makeTiff(60, 40), { targetWidth: undefined });
    expect(tiff.original).toMatchObject({ mime: 'image/png', extension: 'png' });
    expect((await sharp(tiff.original.bytes).metadata()).format).toBe('png');
  });

  it.each(Object.entries(NOT_IMAGES))('refuses %s with 415 Unavailable image format', async (_name, bytes) => {
    await expectRefused(bytes, 'UnsupportedFormat', 'Unavailable image format');
  });

  it('refuses a truncated JPEG', async () => {
    const input = await makeJpeg(300, 200);
    await expectRefused(input.subarray(0, Math.floor(input.length / 2)), 'UnsupportedFormat', 'Unavailable image format');
  });

  it('refuses more pixels than the limit before decoding', async () => {
    const small = new SharpImageProcessor({ maxPixels: 100_000, maxFrames: 10, thumbSize: 32, mediumWidth: 50 });
    await expect(small.process(await makePng(317, 316), { targetWidth: undefined })).rejects.toMatchObject({
      kind: 'ImageTooLarge',
      message: 'Image too large - max 0.1 megapixels',
    });
    await expect(small.process(await makePng(316, 316), { targetWidth: undefined })).resolves.toBeDefined();
  });

  it('refuses all frames together beyond the pixel limit', async () => {
    const small = new SharpImageProcessor({ maxPixels: 100_000, maxFrames: 10, thumbSize: 32, mediumWidth: 50 });
    await expect(small.process(await makeAnimated('gif', 200, 100, 6), { targetWidth: undefined })).rejects.toMatchObject({
      kind: 'ImageTooLarge',
    });
  });

  it('refuses more frames than the limit', async () => {
    const elevenFrames = await makeAnimated('gif', 22, 10, 11);
    expect((await sharp(elevenFrames).metadata()).pages).toBe(11);
    await expectRefused(elevenFrames, 'ImageTooLarge', 'Image too large - max 10 frames');
  });
});
