import { gifBlocks } from './gif';

/**
 * Whether every image of a GIF has the pixels its descriptor promises. An image whose LZW data was cut at a
 * sub-block, with the block terminator and the trailer put back, is a whole container that libvips' GIF loader
 * decodes without a word, the missing rows left blank; its codes, counted here without making any pixel, come short.
 */
export function gifFramesWhole(buffer: Buffer): boolean {
  for (const block of gifBlocks(buffer)) {
    if (block.kind === 'image' && lzwPixels(buffer, block.codeSizeAt, block.end) < block.width * block.height) return false;
  }
  return true;
}

/** The largest LZW code of a GIF: 12 bits. */
const MAX_CODES = 4096;

/**
 * How many pixels an image's LZW data decodes to, up to its end-of-information code or the end of its data: only the
 * length of each dictionary entry is kept (GIF's variable-width codes, least significant bit first, across its
 * sub-blocks). A code the dictionary cannot have yet ends the count, as it ends a decoder.
 */
function lzwPixels(buffer: Buffer, codeSizeAt: number, end: number): number {
  const minimum = buffer[codeSizeAt] ?? 0;
  if (minimum < 2 || minimum > 11) return 0;
  const data = subBlockData(buffer, codeSizeAt + 1, end);
  const clear = 1 << minimum;
  const endOfInformation = clear + 1;
  const lengths = new Uint16Array(MAX_CODES);
  lengths.fill(1, 0, clear);
  let codeSize = minimum + 1;
  let mask = (1 << codeSize) - 1;
  let next = endOfInformation + 1;
  let previous = -1;
  let pixels = 0;
  let bits = 0;
  let bitCount = 0;
  let pos = 0;
  const length = data.length;
  for (;;) {
    while (bitCount < codeSize) {
      if (pos === length) return pixels;
      bits |= data[pos]! << bitCount;
      bitCount += 8;
      pos += 1;
    }
    const code = bits & mask;
    bits >>>= codeSize;
    bitCount -= codeSize;
    if (code === clear) {
      codeSize = minimum + 1;
      mask = (1 << codeSize) - 1;
      next = endOfInformation + 1;
      previous = -1;
    } else if (code === endOfInformation) {
      return pixels;
    } else if (previous === -1) {
      if (code > clear) return pixels;
      pixels += 1;
      previous = code;
    } else {
      if (code > next) return pixels;
      const added = lengths[previous]! + 1;
      pixels += code === next ? added : lengths[code]!;
      if (next < MAX_CODES) {
        lengths[next] = added;
        next += 1;
        if (next === mask + 1 && codeSize < 12) {
          codeSize += 1;
          mask = (1 << codeSize) - 1;
        }
      }
      previous = code;
    }
  }
}

/** The bytes of an image's data sub-blocks, from `from` to its terminator (within `end`), in one piece. */
function subBlockData(buffer: Buffer, from: number, end: number): Uint8Array {
  const parts: Buffer[] = [];
  for (let pos = from; pos < end;) {
    const size = buffer[pos]!;
    if (size === 0) break;
    parts.push(buffer.subarray(pos + 1, Math.min(pos + 1 + size, end)));
    pos += 1 + size;
  }
  return Buffer.concat(parts);
}
