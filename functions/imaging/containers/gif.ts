/** GIF: its blocks; comments and unknown application extensions dropped. */
import { fail, Ranges, type StripOptions } from './common';

/** Application extensions that change how the image plays or looks: looping and the ICC profile. */
const GIF_KEPT_APPLICATIONS = ['NETSCAPE2.0', 'ANIMEXTS1.0', 'ICCRGBG1012'];

export function stripGif(buffer: Buffer, { keepMetadata }: StripOptions): Buffer {
  const header = buffer.toString('latin1', 0, 6);
  if (header !== 'GIF87a' && header !== 'GIF89a') fail('no GIF header');
  if (buffer.length < 13) fail('GIF ends inside its screen descriptor');
  const packed = buffer[10] ?? 0;
  let pos = 13 + (packed & 0x80 ? 3 * 2 ** ((packed & 0x07) + 1) : 0);
  const ranges = new Ranges(buffer);
  ranges.keep(0, pos);
  let images = 0;
  for (;;) {
    const introducer = buffer[pos];
    if (introducer === undefined) {
      // Many encoders forget the trailer; a file whose last block is whole is complete without it.
      if (pos === buffer.length && images > 0) return ranges.join([Buffer.from([0x3b])]);
      fail('GIF ends before its trailer');
    }
    if (introducer === 0x3b) {
      ranges.keep(pos, pos + 1);
      return ranges.join();
    }
    if (introducer === 0x2c) {
      if (pos + 10 > buffer.length) fail('GIF ends inside an image descriptor');
      const imagePacked = buffer[pos + 9] ?? 0;
      const dataStart = pos + 10 + (imagePacked & 0x80 ? 3 * 2 ** ((imagePacked & 0x07) + 1) : 0) + 1; // + LZW code size
      const end = skipSubBlocks(buffer, dataStart);
      ranges.keep(pos, end);
      images += 1;
      pos = end;
      continue;
    }
    if (introducer === 0x21) {
      const label = buffer[pos + 1];
      const end = skipSubBlocks(buffer, pos + 2);
      const application = label === 0xff && buffer[pos + 2] === 11 ? buffer.toString('latin1', pos + 3, pos + 14) : '';
      const kept = keepMetadata || label === 0xf9 || GIF_KEPT_APPLICATIONS.includes(application);
      if (kept) ranges.keep(pos, end);
      pos = end;
      continue;
    }
    fail(`unknown GIF block 0x${introducer.toString(16)}`);
  }
}

function skipSubBlocks(buffer: Buffer, from: number): number {
  let pos = from;
  for (;;) {
    const size = buffer[pos];
    if (size === undefined) fail('GIF ends inside a data block');
    pos += 1 + size;
    if (size === 0) return pos;
  }
}
