import sharp from 'sharp';
import { jpegSegments } from '../../functions/imaging/containers/jpeg';

/**
 * Small images that are expensive to decode, as an attacker would send them. Made by code, so the tests need no
 * fixtures; each is a valid file that browsers and decoders accept.
 */

/**
 * A progressive JPEG of one flat colour whose last scan (an AC refinement) is repeated until it has `scans` scans.
 * Every scan is cheap to store (a flat image's AC scans are end-of-band runs) and costs a pass over every block of
 * the image to decode: at 10000x10000 and thousands of scans, tens of seconds.
 */
export async function manyScanJpeg(width: number, height: number, scans: number): Promise<Buffer> {
  const base = await sharp({ create: { width, height, channels: 3, background: '#4a6d8c' } })
    .jpeg({ progressive: true, quality: 90 })
    .toBuffer();
  const segments = [...jpegSegments(base)];
  const sos = segments.filter((segment) => segment.dataEnd !== undefined);
  const last = sos[sos.length - 1];
  const eoi = segments[segments.length - 1];
  if (!last?.dataEnd || !eoi || sos.length > scans) throw new Error('unexpected base JPEG');
  const repeated = base.subarray(last.start, last.dataEnd);
  return Buffer.concat([
    base.subarray(0, last.dataEnd),
    ...Array.from({ length: scans - sos.length }, () => repeated),
    base.subarray(eoi.start, eoi.end),
  ]);
}

/** A GIF whose logical screen is far larger than its one frame (what a browser sizes it by). */
export function gifWithHugeScreen(screenWidth: number, screenHeight: number): Buffer {
  const u16 = (value: number): number[] => [value & 0xff, value >> 8];
  return Buffer.from([
    ...Buffer.from('GIF89a'),
    ...u16(screenWidth),
    ...u16(screenHeight),
    0x80, // a global colour table of 2 colours
    0,
    0,
    ...[0, 0, 0, 255, 255, 255],
    0x2c, // one 1x1 image at 0,0
    ...u16(0),
    ...u16(0),
    ...u16(1),
    ...u16(1),
    0,
    2, // LZW minimum code size, then one data sub-block
    2,
    0x4c,
    0x01,
    0,
    0x3b,
  ]);
}

/** Bits written most significant first, with JPEG's byte stuffing (0x00 after every 0xFF). */
class BitWriter {
  private readonly bytes: number[] = [];
  private current = 0;
  private filled = 0;

  write(value: number, length: number): void {
    for (let bit = length - 1; bit >= 0; bit -= 1) {
      this.current = (this.current << 1) | ((value >> bit) & 1);
      this.filled += 1;
      if (this.filled === 8) this.flushByte();
    }
  }

  /** Pads the last byte with 1 bits, as the standard asks, and answers the bytes. */
  end(): number[] {
    while (this.filled !== 0) this.write(1, 1);
    return this.bytes;
  }

  private flushByte(): void {
    this.bytes.push(this.current);
    if (this.current === 0xff) this.bytes.push(0);
    this.current = 0;
    this.filled = 0;
  }
}

const segment = (marker: number, payload: number[]): number[] => [
  0xff,
  marker,
  (payload.length + 2) >> 8,
  (payload.length + 2) & 0xff,
  ...payload,
];

/**
 * A valid progressive greyscale JPEG of one flat grey whose first `coefficients` AC coefficients (all 63 by default)
 * each have a spectral band of their own, refined down from bit 13 to bit 0: 1 DC scan and 14 AC scans per
 * coefficient (883 in all), as the attack in the issue. Every AC scan is a few end-of-band runs (the image is flat), so
 * the file is small; a decoder still visits every block in every scan.
 */
export function everyCoefficientRefinedJpeg(width: number, height: number, coefficients = 63): Buffer {
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  // DC table: one symbol, category 0 (no difference), code '0'. AC table: EOB0..EOB14 (0x00, 0x10, ... 0xE0), 4 bits each.
  const dcTable = [0x00, ...[1, ...Array<number>(15).fill(0)], 0x00];
  const acSymbols = Array.from({ length: 15 }, (_, n) => n << 4);
  const acTable = [0x10, ...[0, 0, 0, 15, ...Array<number>(12).fill(0)], ...acSymbols];
  const out: number[] = [0xff, 0xd8];
  out.push(...segment(0xdb, [0x00, ...Array<number>(64).fill(1)]));
  out.push(...segment(0xc2, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]));
  out.push(...segment(0xc4, [...dcTable, ...acTable]));
  const scan = (ss: number, se: number, ah: number, al: number, body: (bits: BitWriter) => void): void => {
    out.push(...segment(0xda, [1, 1, 0x00, ss, se, (ah << 4) | al]));
    const bits = new BitWriter();
    body(bits);
    for (const byte of bits.end()) out.push(byte);
  };
  // DC: every block's difference is 0 (a flat image whose DC is 0 after the level shift: grey 128)
  scan(0, 0, 0, 0, (bits) => {
    for (let block = 0; block < blocks; block += 1) bits.write(0, 1);
  });
  const endOfBands = (bits: BitWriter): void => {
    for (let left = blocks; left > 0;) {
      const run = Math.min(left, 32767);
      const n = Math.floor(Math.log2(run));
      bits.write(n, 4); // EOBn: the code of symbol n << 4 is n itself, 4 bits
      if (n > 0) bits.write(run - 2 ** n, n);
      left -= run;
    }
  };
  for (let k = 1; k <= coefficients; k += 1) {
    scan(k, k, 0, 13, endOfBands);
    for (let bit = 13; bit >= 1; bit -= 1) scan(k, k, bit, bit - 1, endOfBands);
  }
  out.push(0xff, 0xd9);
  return Buffer.from(out);
}

/**
 * An animated GIF written directly (LZW codes kept at 9 bits by a clear code every 253 pixels, so no compression and
 * no search), cheap to make however many frames it has: every frame a different pattern over a 256-colour palette.
 * Its cost falls on the service: decoding every frame and quantising every frame of both renditions.
 */
export function uncompressedAnimatedGif(width: number, height: number, frames: number): Buffer {
  const head: number[] = [];
  const u16 = (value: number): number[] => [value & 0xff, value >> 8];
  head.push(...Buffer.from('GIF89a'), ...u16(width), ...u16(height), 0xf7, 0, 0); // a global table of 256 colours
  for (let index = 0; index < 256; index += 1) head.push(index, (index * 7) & 0xff, 255 - index);
  head.push(0x21, 0xff, 11, ...Buffer.from('NETSCAPE2.0'), 3, 1, 0, 0, 0); // loop forever
  const parts: Buffer[] = [Buffer.from(head)];
  const pixels = width * height;
  // 9 bits per pixel and per clear code, then a length byte per 255 bytes of data
  const dataBytes = Math.ceil(((pixels + Math.ceil(pixels / 253) + 1) * 9) / 8);
  for (let frame = 0; frame < frames; frame += 1) {
    // 80 ms; an image descriptor at 0,0 of the whole screen, no local table; LZW minimum code size 8
    parts.push(Buffer.from([0x21, 0xf9, 4, 0, 8, 0, 0, 0, 0x2c, 0, 0, 0, 0, ...u16(width), ...u16(height), 0, 8]));
    const data = Buffer.alloc(dataBytes);
    let length = 0;
    let accumulator = 0;
    let bits = 0;
    const code = (value: number): void => {
      accumulator |= value << bits;
      bits += 9;
      while (bits >= 8) {
        data[length++] = accumulator & 0xff;
        accumulator >>= 8;
        bits -= 8;
      }
    };
    for (let pixel = 0; pixel < pixels; pixel += 1) {
      if (pixel % 253 === 0) code(256); // clear: the dictionary never grows past 9-bit codes
      code((pixel * (frame + 3) + frame * 31) & 0xff);
    }
    code(257); // end of information
    if (bits > 0) data[length++] = accumulator & 0xff;
    const blocks = Buffer.alloc(length + Math.ceil(length / 255) + 1);
    let at = 0;
    for (let start = 0; start < length; start += 255) {
      const size = Math.min(255, length - start);
      blocks[at++] = size;
      data.copy(blocks, at, start, start + size);
      at += size;
    }
    blocks[at] = 0;
    parts.push(blocks);
  }
  parts.push(Buffer.from([0x3b]));
  return Buffer.concat(parts);
}
