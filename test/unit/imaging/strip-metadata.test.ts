import sharp from 'sharp';
import { MalformedImageError, stripMetadata, type StrippableFormat } from '../../../functions/imaging/strip-metadata';
import {
  makeAvifWithMetadata,
  makeGifWithMetadata,
  makeJpeg,
  makeJpegWithMetadata,
  makePng,
  makePngWithMetadata,
  makeWebpWithMetadata,
  TRAILING_JUNK,
} from '../../support/images';

async function pixels(bytes: Uint8Array): Promise<Buffer> {
  return sharp(bytes, { animated: true }).raw().toBuffer();
}

const cases: Array<[StrippableFormat, () => Promise<Buffer>, { icc: boolean }]> = [
  ['jpeg', () => makeJpegWithMetadata(), { icc: true }],
  ['png', () => makePngWithMetadata(), { icc: true }],
  ['gif', () => makeGifWithMetadata(), { icc: false }],
  ['webp', () => makeWebpWithMetadata(), { icc: true }],
  ['avif', () => makeAvifWithMetadata(), { icc: false }],
];

describe('stripMetadata', () => {
  it.each(cases)(
    'removes EXIF, XMP, IPTC, comments and trailing bytes from a %s, keeping its pixels and ICC profile',
    async (format, make, { icc }) => {
      const input = await make();
      const before = await sharp(input).metadata();
      expect(input.includes('Secret')).toBe(true);

      const stripped = stripMetadata(format, input, { keepMetadata: false });
      const after = await sharp(stripped).metadata();
      expect(after.format).toBe(before.format);
      expect({ exif: after.exif, xmp: after.xmp, iptc: after.iptc, comments: after.comments }).toEqual({
        exif: undefined,
        xmp: undefined,
        iptc: undefined,
        comments: undefined,
      });
      expect(Buffer.from(stripped).includes('Secret')).toBe(false);
      expect(Buffer.from(stripped).includes(TRAILING_JUNK)).toBe(false);
      expect(after.hasProfile).toBe(icc);
      expect([after.width, after.height, after.pages]).toEqual([before.width, before.height, before.pages]);
      expect((await pixels(stripped)).equals(await pixels(input))).toBe(true);
    },
  );

  it.each(cases)('keeps the metadata of a %s when asked, still dropping trailing bytes', async (format, make) => {
    const input = await make();
    const kept = stripMetadata(format, input, { keepMetadata: true });
    expect(Buffer.from(kept).includes('Secret')).toBe(true);
    expect((await pixels(kept)).equals(await pixels(input))).toBe(true);
    expect(Buffer.from(kept).includes(TRAILING_JUNK)).toBe(false);
  });

  it('returns the very input when there is nothing to remove', async () => {
    const clean = await makeJpeg(32, 32);
    expect(stripMetadata('jpeg', clean, { keepMetadata: false })).toBe(clean);
    const png = await makePng(8, 8);
    expect(stripMetadata('png', png, { keepMetadata: false })).toBe(png);
  });

  it('drops the animation of an APNG, keeping the default image as a still PNG', async () => {
    const still = await makePng(8, 8);
    const actl = Buffer.from([0, 0, 0, 8, 0x61, 0x63, 0x54, 0x4c, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    const apng = Buffer.concat([still.subarray(0, 33), actl, still.subarray(33)]);
    const stripped = Buffer.from(stripMetadata('png', apng, { keepMetadata: false }));
    expect(stripped.includes('acTL')).toBe(false);
    expect((await sharp(stripped).metadata()).format).toBe('png');
  });

  it.each([
    ['jpeg', async () => (await makeJpeg(64, 64)).subarray(0, 300)],
    ['png', async () => (await makePng(64, 64)).subarray(0, 60)],
    ['gif', async () => (await makeGifWithMetadata()).subarray(0, 40)],
    ['webp', async () => (await makeWebpWithMetadata()).subarray(0, 40)],
    ['avif', async () => (await makeAvifWithMetadata()).subarray(0, 100)],
  ] as Array<[StrippableFormat, () => Promise<Buffer>]>)('refuses a truncated %s', async (format, make) => {
    expect(() => stripMetadata(format, Buffer.alloc(0), { keepMetadata: false })).toThrow(MalformedImageError);
    const truncated = await make();
    expect(() => stripMetadata(format, truncated, { keepMetadata: false })).toThrow(MalformedImageError);
  });
});
