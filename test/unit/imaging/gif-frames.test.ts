import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { gifBlocks } from '../../../functions/imaging/containers/gif';
import { gifFramesWhole } from '../../../functions/imaging/containers/gif-frames';

/** The count of an image's LZW pixels: every whole GIF has its descriptors' pixels, one cut at a sub-block has not. */
const PHOTOS = join(__dirname, '..', '..', 'fixtures', 'photos');
const photo = (name: string): Buffer => readFileSync(join(PHOTOS, name));

/** The GIF with image `index`'s data cut after `share` of its sub-blocks, the terminator and the trailer put back. */
function cut(gif: Buffer, index: number, share: number): Buffer {
  const image = [...gifBlocks(gif)].filter((block) => block.kind === 'image')[index];
  if (!image || image.kind !== 'image') throw new Error('no such image');
  const starts: number[] = [];
  for (let pos = image.codeSizeAt + 1; (gif[pos] ?? 0) !== 0; pos += (gif[pos] ?? 0) + 1) starts.push(pos);
  return Buffer.concat([gif.subarray(0, starts[Math.floor(starts.length * share)]), Buffer.from([0x00, 0x3b])]);
}

describe('gifFramesWhole', () => {
  it.each([
    ['256 colours', {}],
    ['2 colours', { colours: 2 }],
    ['16 colours, no dither', { colours: 16, dither: 0 }],
    ['4 colours, fastest', { colours: 4, effort: 1 }],
  ])('finds every frame whole in GIFs of %s, of every size', async (_name, options) => {
    for (const [name, width] of [
      ['astronaut.jpg', 320],
      ['camera.jpg', 7],
      ['coffee.jpg', 200],
    ] as const) {
      const gif = await sharp(photo(name)).resize(width).gif(options).toBuffer();
      expect([name, width, gifFramesWhole(gif)]).toEqual([name, width, true]);
    }
  });

  it('finds an image cut at any sub-block short, a still or one frame of several', async () => {
    const still = await sharp(photo('chelsea.jpg')).gif().toBuffer();
    for (const share of [0, 0.3, 0.9]) expect(gifFramesWhole(cut(still, 0, share))).toBe(false);
    const frames = await Promise.all(
      ['rocket.jpg', 'coffee.jpg'].map((name) => sharp(photo(name)).resize(96, 64).raw().toBuffer()),
    );
    const animation = await sharp(Buffer.concat(frames), { raw: { width: 96, height: 128, channels: 3, pageHeight: 64 } })
      .gif({ loop: 0 })
      .toBuffer();
    expect(gifFramesWhole(animation)).toBe(true);
    expect(gifFramesWhole(cut(animation, 1, 0.5))).toBe(false);
  });

  it('counts the pixels of hand-made codes: whole, ended early, or stopped at a code the dictionary cannot have yet', () => {
    // a 2x2 GIF of minimum code size 2: clear is 4, end of information 5; codes of 3 bits, then 4 once 8 entries are
    // made; packed least significant bit first
    const header = Buffer.from('GIF89a\x02\x00\x02\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff', 'latin1');
    const descriptor = Buffer.from([0x2c, 0, 0, 0, 0, 2, 0, 2, 0, 0, 2]);
    const gif = (data: number[]) => Buffer.concat([header, descriptor, Buffer.from([data.length, ...data, 0x00, 0x3b])]);
    // clear, 0, 0, 0, 0 (4 bits), end of information (4 bits): four pixels
    expect(gifFramesWhole(gif([0x04, 0x00, 0x05]))).toBe(true);
    // clear, 0, 0, end of information: two
    expect(gifFramesWhole(gif([0x04, 0x0a]))).toBe(false);
    // clear, 0, and the data ends inside the next code: one
    expect(gifFramesWhole(gif([0x04]))).toBe(false);
    // clear, 0, then 7 where the next entry would be 6: a decoder stops there, at one pixel
    expect(gifFramesWhole(gif([0xc4, 0x01, 0x00]))).toBe(false);
  });
});
