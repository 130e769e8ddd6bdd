import { spawnSync } from 'node:child_process';
import sharp from 'sharp';
import { MalformedImageError } from '../../../functions/imaging/malformed';
import { stripMetadata, type StrippableFormat } from '../../../functions/imaging/strip-metadata';
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
import { avifWithExifItems } from '../../support/isobmff';

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

describe('AVIF metadata items that name the same bytes many times over', () => {
  it('clears each byte once: 2,000 entries of one item with 10,000 extents, and 5,000 items (a child with a deadline)', () => {
    // cleared as named, these would be 20 billion and 5 billion bytes written: a hang, which jest cannot time out
    const script = `
      const { stripMetadata } = require('./functions/imaging/strip-metadata');
      const { avifWithExifItems } = require('./test/support/isobmff');
      const ids = Array.from({ length: 5000 }, (_, index) => index + 1);
      const files = [
        avifWithExifItems(Array(2000).fill(1), [{ id: 1, extents: 10000 }], 1_000_000),
        avifWithExifItems(ids, ids.map((id) => ({ id, extents: 1 })), 1_000_000),
      ];
      const out = files.map((file) => {
        const stripped = stripMetadata('avif', file, { keepMetadata: false });
        return [stripped.length === file.length, stripped.subarray(0, 24).equals(file.subarray(0, 24)), stripped.subarray(-1_000_000).every((byte) => byte === 0)];
      });
      process.stdout.write(JSON.stringify(out));`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: `${__dirname}/../../..`,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect({ signal: child.signal, stderr: child.stderr, stdout: child.stdout }).toEqual({
      signal: null,
      stderr: '',
      stdout: JSON.stringify([
        [true, true, true],
        [true, true, true],
      ]),
    });
  }, 30_000);

  it('refuses a file with more than 10,000 item extents (its extents may take no bytes at all)', () => {
    expect(() =>
      stripMetadata('avif', avifWithExifItems([1], [{ id: 1, extents: 10_001 }], 1000), { keepMetadata: false }),
    ).toThrow(new MalformedImageError('more than 10000 item extents'));
    const cleared = stripMetadata('avif', avifWithExifItems([1], [{ id: 1, extents: 10_000 }], 1000), { keepMetadata: false });
    expect(
      Buffer.from(cleared)
        .subarray(-1000)
        .every((byte) => byte === 0),
    ).toBe(true);
  });
});
