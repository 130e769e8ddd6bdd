/** GIF: its blocks; comments and unknown application extensions dropped. */
import { fail, Ranges, type StripOptions } from './common';

/** Application extensions that change how the image plays or looks: looping and the ICC profile. */
const GIF_KEPT_APPLICATIONS = ['NETSCAPE2.0', 'ANIMEXTS1.0', 'ICCRGBG1012'];

/** One block of a GIF, from its header to its trailer, as `gifBlocks` walks them. */
export type GifBlock =
  | { kind: 'screen'; start: number; end: number }
  /** An image: its descriptor's size, and where its LZW minimum code size byte is (its data's sub-blocks follow). */
  | { kind: 'image'; start: number; end: number; width: number; height: number; codeSizeAt: number }
  | { kind: 'extension'; start: number; end: number; label: number | undefined; application: string }
  | { kind: 'trailer'; start: number; end: number }
  /** The bytes ended where a block would start: no trailer. */
  | { kind: 'end'; start: number; end: number };

/** The blocks of a GIF in their order; throws MalformedImageError on anything it cannot walk. */
export function* gifBlocks(buffer: Buffer): Generator<GifBlock> {
  const header = buffer.toString('latin1', 0, 6);
  if (header !== 'GIF87a' && header !== 'GIF89a') fail('no GIF header');
  if (buffer.length < 13) fail('GIF ends inside its screen descriptor');
  const packed = buffer[10] ?? 0;
  let pos = 13 + (packed & 0x80 ? 3 * 2 ** ((packed & 0x07) + 1) : 0);
  yield { kind: 'screen', start: 0, end: pos };
  for (;;) {
    const introducer = buffer[pos];
    if (introducer === undefined) {
      yield { kind: 'end', start: pos, end: pos };
      return;
    }
    if (introducer === 0x3b) {
      yield { kind: 'trailer', start: pos, end: pos + 1 };
      return;
    }
    if (introducer === 0x2c) {
      if (pos + 10 > buffer.length) fail('GIF ends inside an image descriptor');
      const imagePacked = buffer[pos + 9] ?? 0;
      const codeSizeAt = pos + 10 + (imagePacked & 0x80 ? 3 * 2 ** ((imagePacked & 0x07) + 1) : 0);
      const end = skipSubBlocks(buffer, codeSizeAt + 1);
      yield {
        kind: 'image',
        start: pos,
        end,
        width: buffer.readUInt16LE(pos + 5),
        height: buffer.readUInt16LE(pos + 7),
        codeSizeAt,
      };
      pos = end;
      continue;
    }
    if (introducer === 0x21) {
      const label = buffer[pos + 1];
      const end = skipSubBlocks(buffer, pos + 2);
      const application = label === 0xff && buffer[pos + 2] === 11 ? buffer.toString('latin1', pos + 3, pos + 14) : '';
      yield { kind: 'extension', start: pos, end, label, application };
      pos = end;
      continue;
    }
    fail(`unknown GIF block 0x${introducer.toString(16)}`);
  }
}

export function stripGif(buffer: Buffer, { keepMetadata }: StripOptions): Buffer {
  const ranges = new Ranges(buffer);
  let images = 0;
  for (const block of gifBlocks(buffer)) {
    switch (block.kind) {
      case 'screen':
        ranges.keep(block.start, block.end);
        break;
      case 'image':
        ranges.keep(block.start, block.end);
        images += 1;
        break;
      case 'extension':
        if (keepMetadata || block.label === 0xf9 || GIF_KEPT_APPLICATIONS.includes(block.application))
          ranges.keep(block.start, block.end);
        break;
      case 'trailer':
        ranges.keep(block.start, block.end);
        return ranges.join();
      case 'end':
        // Many encoders forget the trailer; a file whose last block is whole is complete without it.
        if (images > 0) return ranges.join([Buffer.from([0x3b])]);
        fail('GIF ends before its trailer');
    }
  }
  fail('GIF ends before its trailer');
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
