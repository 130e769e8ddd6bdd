import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { ServiceError } from '../../../functions/core/errors';
import { SharpImageProcessor } from '../../../functions/imaging/sharp-image-processor';
import { readExif } from '../../../functions/imaging/read-exif';
import {
  makeAnimated,
  makeAvif,
  makeBmp,
  makeCmykJpeg,
  makeGreyPng,
  makeJpeg,
  makeJpegWithMetadata,
  makePhoto,
  makePng,
  makeTiff,
  makeWebp,
  NOT_IMAGES,
  SERVICE_IMAGING,
  SMALL_IMAGING,
} from '../../support/images';
import { pdqDistance } from '../../../functions/core/moderation/pdq-hash';

const SETTINGS = SMALL_IMAGING;
const processor = new SharpImageProcessor(SETTINGS);

async function expectRefused(input: Buffer, kind: string, message: string): Promise<void> {
  const error: unknown = await processor.process(input, { targetWidth: undefined }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ServiceError);
  expect((error as ServiceError).kind).toBe(kind);
  expect((error as ServiceError).message).toBe(message);
}

describe('SharpImageProcessor', () => {
  it.each([
    ['a JPEG kept as sent', () => makeJpeg(120, 80)],
    ['a BMP (converted)', () => Promise.resolve(makeBmp(40, 30, 24))],
    ['an animated GIF', () => makeAnimated('gif', 60, 40, 3)],
  ])('runs the decode of %s with the decode under way first, then the original, then the rest', async (_name, make) => {
    const calls: string[] = [];
    const run = processor.start(await make(), { targetWidth: undefined });
    await Promise.all([
      run.decoding.then(() => calls.push('decoding')),
      run.original.then(() => calls.push('original')),
      run.processed.then(() => calls.push('processed')),
    ]);
    expect(calls).toEqual(['decoding', 'original', 'processed']);
    expect((await run.original).image).toBe((await run.processed).original);
  });

  it('fails every promise of a run its probe refuses, none left unhandled', async () => {
    const run = processor.start(Buffer.from('no image at all'), { targetWidth: undefined });
    for (const step of [run.decoding, run.original, run.processed])
      await expect(step).rejects.toMatchObject({ kind: 'UnsupportedFormat' });
  });

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

  it('stores a JPEG with orientation 6 as sent, its only EXIF the orientation, shown upright; renditions upright', async () => {
    const input = await makeJpeg(120, 80, { orientation: 6, exif: { IFD0: { Make: 'TestCam', Model: 'T-1' } } });
    const result = await processor.process(input, { targetWidth: undefined });
    const meta = await sharp(result.original.bytes).metadata();
    // the pixels as sent (no second generation of the user's JPEG), with nothing of the EXIF but the orientation
    expect([meta.width, meta.height, meta.orientation]).toEqual([120, 80, 6]);
    expect(readExif(meta.exif)).toEqual({ Orientation: 6 });
    const [sent, stored] = await Promise.all([input, result.original.bytes].map((bytes) => sharp(bytes).raw().toBuffer()));
    expect(stored?.equals(sent ?? Buffer.alloc(0))).toBe(true);
    // as displayed (what the answer says, and what browsers show): upright, the red top-left marker at the top-right
    expect(result.original).toMatchObject({ width: 80, height: 120 });
    expect(result.exif).toMatchObject({ Make: 'TestCam', Model: 'T-1', Orientation: 6 });
    const { data, info } = await sharp(result.original.bytes).autoOrient().raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number): number => data[(y * info.width + x) * info.channels] ?? -1;
    expect([info.width, info.height]).toEqual([80, 120]);
    expect(at(info.width - 3, 3)).toBeGreaterThan(200);
    expect(at(3, 3)).toBeLessThan(100);
    expect(result.medium).toMatchObject({ width: 50, height: 75 });
    expect((await sharp(result.medium.bytes).metadata()).orientation).toBeUndefined();
  });

  it.each(['png', 'webp'] as const)(
    'turns a %s with an EXIF orientation upright by a re-encode: browsers may not apply theirs',
    async (format) => {
      const input = await sharp(await makeJpeg(120, 80))
        [format]()
        .withMetadata({ orientation: 6 })
        .toBuffer();
      expect((await sharp(input).metadata()).orientation).toBe(6);
      const result = await processor.process(input, { targetWidth: undefined });
      const meta = await sharp(result.original.bytes).metadata();
      expect([meta.width, meta.height, meta.orientation]).toEqual([80, 120, undefined]);
    },
  );

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
    const small = await makePng(20, 10, { alpha: true });
    const result = await processor.process(small, { targetWidth: undefined });
    expect(result.medium).toMatchObject({ width: 20, height: 10 });
    // a medium of the original's own size is the original itself
    expect(Buffer.compare(Buffer.from(result.medium.bytes), small)).toBe(0);
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

  /** A processor with a pixel limit small enough for tiny test images to cross. */
  const small = new SharpImageProcessor({ ...SETTINGS, maxPixels: 100_000 });

  it('refuses more pixels than the limit before decoding', async () => {
    await expect(small.process(await makePng(317, 316), { targetWidth: undefined })).rejects.toMatchObject({
      kind: 'ImageTooLarge',
      message: 'Image too large - max 0.1 megapixels',
    });
    await expect(small.process(await makePng(316, 316), { targetWidth: undefined })).resolves.toBeDefined();
  });

  it('refuses all frames together beyond the pixel limit', async () => {
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

describe('SharpImageProcessor: formats browsers cannot show and metadata', () => {
  const heic = readFileSync(join(__dirname, '..', '..', 'fixtures', 'gradient.heic'));

  it.each([8, 24, 32] as const)('stores a %i-bit BMP as PNG with its pixels', async (bits) => {
    const result = await processor.process(makeBmp(40, 30, bits), { targetWidth: undefined });
    expect(result.original).toMatchObject({
      mime: 'image/png',
      extension: 'png',
      width: 40,
      height: 30,
      channels: bits === 32 ? 4 : 3,
    });
    const { data, info } = await sharp(result.original.bytes).raw().toBuffer({ resolveWithObject: true });
    // the red marker stays in the top-left corner: rows were read in the right order
    expect(data[(2 * info.width + 2) * info.channels]).toBeGreaterThan(200);
    expect(data[((info.height - 3) * info.width + 2) * info.channels]).toBeLessThan(100);
  });

  it('reads a top-down BMP the right way up', async () => {
    const result = await processor.process(makeBmp(40, 30, 24, { topDown: true }), { targetWidth: undefined });
    const { data, info } = await sharp(result.original.bytes).raw().toBuffer({ resolveWithObject: true });
    expect(data[(2 * info.width + 2) * info.channels]).toBeGreaterThan(200);
  });

  it('refuses a BMP cut short and one whose header claims more pixels than the limit', async () => {
    await expectRefused(makeBmp(40, 30, 24).subarray(0, 500), 'UnsupportedFormat', 'Unavailable image format');
    const bomb = makeBmp(4, 4, 24);
    bomb.writeInt32LE(100_000, 18);
    bomb.writeInt32LE(100_000, 22);
    await expectRefused(bomb, 'ImageTooLarge', 'Image too large - max 4 megapixels');
  });

  it('stores a HEIC as JPEG, decoded with libheif, and reports its EXIF', async () => {
    const result = await processor.process(heic, { targetWidth: undefined });
    expect(result.original).toMatchObject({ mime: 'image/jpeg', extension: 'jpg', width: 96, height: 64, channels: 3 });
    expect(result.exif).toMatchObject({ Make: 'HeicCam' });
    const meta = await sharp(result.original.bytes).metadata();
    expect([meta.format, meta.width, meta.height, meta.exif]).toEqual(['jpeg', 96, 64, undefined]);
    expect(result.thumb).toMatchObject({ width: 32, height: 32, mime: 'image/jpeg' });
  });

  it('refuses a HEIC cut short', async () => {
    await expectRefused(heic.subarray(0, heic.length - 200), 'UnsupportedFormat', 'Unavailable image format');
  });

  it('stores a JPEG without its EXIF, XMP, IPTC and comment, byte for byte otherwise, and still reports the EXIF', async () => {
    const input = await makeJpegWithMetadata(64, 48);
    const result = await processor.process(input, { targetWidth: undefined });
    const meta = await sharp(result.original.bytes).metadata();
    expect([meta.exif, meta.xmp, meta.iptc, meta.comments, meta.hasProfile]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      true,
    ]);
    expect(Buffer.from(result.original.bytes).includes('Secret')).toBe(false);
    expect(result.exif).toMatchObject({ Make: 'TestCam', GPSLatitudeRef: 'N' });
    expect(Buffer.compare(Buffer.from(result.original.bytes), input)).not.toBe(0);
  });

  it('says the stored original is the bytes as sent only when it is, so that their md5 is hashed once', async () => {
    const asSent = async (input: Uint8Array, targetWidth?: number) => {
      const original = await processor.start(input, { targetWidth }).original;
      // the flag is true exactly when the bytes are the same
      expect(Buffer.compare(Buffer.from(original.image.bytes), Buffer.from(input)) === 0).toBe(original.asSent);
      return original.asSent;
    };
    const clean = await makeJpeg(120, 80);
    expect(await asSent(clean)).toBe(true);
    expect(await asSent(await makeAnimated('gif', 40, 30, 3))).toBe(true);
    // metadata removed, downscaled, converted: other bytes
    expect(await asSent(await makeJpegWithMetadata(64, 48))).toBe(false);
    expect(await asSent(clean, 60)).toBe(false);
    expect(await asSent(makeBmp(40, 30, 24))).toBe(false);
  });

  it('keeps metadata in stored originals when the operator says so', async () => {
    const keeping = new SharpImageProcessor({ ...SETTINGS, keepMetadata: true });
    const result = await keeping.process(await makeJpegWithMetadata(64, 48), { targetWidth: undefined });
    expect((await sharp(result.original.bytes).metadata()).exif).toBeDefined();
    const turned = await keeping.process(await makeJpeg(60, 40, { orientation: 6, exif: { IFD0: { Make: 'TestCam' } } }), {
      targetWidth: undefined,
    });
    // the EXIF kept whole, orientation and all: the pixels as sent, shown upright by the browser
    const meta = await sharp(turned.original.bytes).metadata();
    expect([meta.width, meta.height, meta.orientation]).toEqual([60, 40, 6]);
    expect(readExif(meta.exif)).toMatchObject({ Make: 'TestCam', Orientation: 6 });
    expect(turned.original).toMatchObject({ width: 40, height: 60 });
  });

  it('makes sRGB renditions of a CMYK JPEG and greyscale ones of a greyscale PNG', async () => {
    const cmyk = await processor.process(await makeCmykJpeg(60, 40), { targetWidth: undefined });
    expect((await sharp(cmyk.thumb.bytes).metadata()).space).toBe('srgb');
    const grey = await processor.process(await makeGreyPng(60, 40), { targetWidth: undefined });
    expect(grey.original.channels).toBe(1);
    expect(grey.medium.channels).toBe(1);
  });

  it('makes the thumb of a panorama from the original, not from its short medium', async () => {
    const result = await processor.process(await makeJpeg(400, 40), { targetWidth: undefined });
    expect(result.medium).toMatchObject({ width: 50, height: 5 });
    expect(result.thumb).toMatchObject({ width: 32, height: 32 });
  });

  it('keeps 16 bits when a 16-bit PNG is downscaled', async () => {
    const result = await processor.process(await makePng(80, 40, { sixteenBit: true }), { targetWidth: 40 });
    expect(result.original).toMatchObject({ width: 40, height: 20, bits: 16 });
    expect((await sharp(result.original.bytes).metadata()).depth).toBe('ushort');
    // the pixels are the image's, not 16-bit samples read as 8-bit ones: the red marker is still top-left only
    const { data, info } = await sharp(result.original.bytes)
      .toColourspace('rgb16')
      .raw({ depth: 'ushort' })
      .toBuffer({ resolveWithObject: true });
    const samples = new Uint16Array(data.buffer, data.byteOffset, data.byteLength / 2);
    expect(samples[(1 * info.width + 1) * info.channels]).toBeGreaterThan(60000);
    expect(samples[(1 * info.width + 1) * info.channels + 1]).toBeLessThan(5000);
    expect(samples[(15 * info.width + 35) * info.channels]).toBeLessThan(60000);
    // and the renditions were made from those pixels: the gradient's blue channel is a steady 128
    const thumbStats = await sharp(result.thumb.bytes).stats();
    expect(thumbStats.channels[2]?.mean).toBeGreaterThan(110);
    expect(thumbStats.channels[2]?.mean).toBeLessThan(146);
  });
});

describe('SharpImageProcessor: the hashes of a picture inside a plain border', () => {
  const processor = new SharpImageProcessor(SERVICE_IMAGING);
  /** A photo `share` of a white page's width, laid at its top left. */
  async function onPage(seed: number, share: number): Promise<Buffer> {
    const photo = await sharp(await makePhoto(seed, Math.round(1600 * share), Math.round(1200 * share)))
      .jpeg()
      .toBuffer();
    return sharp({ create: { width: 1600, height: 1200, channels: 3, background: '#ffffff' } })
      .composite([{ input: photo, left: 40, top: 40 }])
      .jpeg()
      .toBuffer();
  }
  const hashesOf = async (bytes: Buffer): Promise<string[]> =>
    (await processor.process(bytes, { targetWidth: undefined })).perceptual?.hashes ?? [];

  it("keeps the photo's hash without the page's when the photo is under half of it: the page's tells its layout", async () => {
    const [alone] = await hashesOf(await makePhoto(21, 500, 375));
    const hashes = await hashesOf(await onPage(21, 0.33));
    expect(hashes).toHaveLength(1);
    // the photo's, within a block's reach of the photo alone
    expect(pdqDistance(hashes[0] ?? '', alone ?? '')).toBeLessThanOrEqual(31);
  });

  it('keeps both when the photo is most of the page', async () => {
    expect(await hashesOf(await onPage(22, 0.9))).toHaveLength(2);
  });
});

describe('SharpImageProcessor: an upload when no picture is blocked', () => {
  const processor = new SharpImageProcessor(SERVICE_IMAGING);

  it('keeps the same hashes and makes no queries when told nothing is compared', async () => {
    const photo = await makePhoto(23, 800, 600);
    const compared = await processor.process(photo, { targetWidth: undefined, compared: Promise.resolve(true) });
    const alone = await processor.process(photo, { targetWidth: undefined, compared: Promise.resolve(false) });
    expect(compared.perceptual?.queries[0]?.length).toBeGreaterThan(8);
    expect(alone.perceptual).toEqual({ ...compared.perceptual, queries: [] });
    // compared unless told otherwise
    expect((await processor.process(photo, { targetWidth: undefined })).perceptual).toEqual(compared.perceptual);
  });

  it('never waits for the blocked list: a read not done, or failed, means comparing, not a slower or refused upload', async () => {
    const photo = await makePhoto(23, 800, 600);
    const compared = await processor.process(photo, { targetWidth: undefined, compared: Promise.resolve(true) });
    // a store that never answers: the imaging ends all the same, within its time limit, and compares
    const pending = await processor.process(photo, { targetWidth: undefined, compared: new Promise<boolean>(() => undefined) });
    expect(pending.perceptual).toEqual(compared.perceptual);
    const failed = await processor.process(photo, { targetWidth: undefined, compared: Promise.reject(new Error('store down')) });
    expect(failed.perceptual).toEqual(compared.perceptual);
  });
});
