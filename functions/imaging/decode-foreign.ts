import { MalformedImageError } from './malformed';

/** Pixels decoded outside libvips (`foreign-decoder.ts`), ready for `sharp(data, { raw })`. */
export interface RawPixels {
  data: Buffer;
  width: number;
  height: number;
  channels: 3 | 4;
}

export interface BmpHeader {
  width: number;
  height: number;
  bitsPerPixel: number;
  hasAlpha: boolean;
  /** The file holds all the pixel rows its header promises. */
  complete: boolean;
}

const BMP_BITS = new Set([1, 4, 8, 16, 24, 32]);
const BMP_RGB = 0;
const BMP_RLE8 = 1;
const BMP_RLE4 = 2;
const BMP_BITFIELDS = 3;
const BMP_ALPHA_BITFIELDS = 6;
const BMP_INFO_HEADER_SIZES = new Set([40, 52, 56, 108, 124]);

/** Reads and checks a BMP's header before any pixel is decoded: sizes, depth and compression. */
export function readBmpHeader(bytes: Uint8Array): BmpHeader {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length < 54 || buffer.toString('latin1', 0, 2) !== 'BM') throw new MalformedImageError('no BMP header');
  const dataOffset = buffer.readUInt32LE(10);
  const headerSize = buffer.readUInt32LE(14);
  if (!BMP_INFO_HEADER_SIZES.has(headerSize) || 14 + headerSize > buffer.length)
    throw new MalformedImageError('unsupported BMP header');
  const width = buffer.readInt32LE(18);
  const height = Math.abs(buffer.readInt32LE(22));
  const bitsPerPixel = buffer.readUInt16LE(28);
  const compression = buffer.readUInt32LE(30);
  if (width <= 0 || height <= 0 || !BMP_BITS.has(bitsPerPixel)) throw new MalformedImageError('unsupported BMP size or depth');
  const rle = (compression === BMP_RLE8 && bitsPerPixel === 8) || (compression === BMP_RLE4 && bitsPerPixel === 4);
  const bitfields =
    (compression === BMP_BITFIELDS || compression === BMP_ALPHA_BITFIELDS) && (bitsPerPixel === 16 || bitsPerPixel === 32);
  if (compression !== BMP_RGB && !rle && !bitfields) throw new MalformedImageError('unsupported BMP compression');
  const alphaMask = headerSize >= 56 || compression === BMP_ALPHA_BITFIELDS ? buffer.readUInt32LE(14 + 52) : 0;
  const rowBytes = Math.floor((bitsPerPixel * width + 31) / 32) * 4;
  return {
    width,
    height,
    bitsPerPixel,
    hasAlpha: bitsPerPixel === 32 && alphaMask !== 0,
    // RLE data has no fixed size; bmp-ts fails on RLE data that ends early
    complete: rle || dataOffset + rowBytes * height <= buffer.length,
  };
}

/** The header of a BMP that holds all the pixel rows it promises, ready to be decoded. */
export function completeBmpHeader(bytes: Uint8Array): BmpHeader {
  const header = readBmpHeader(bytes);
  if (!header.complete) throw new MalformedImageError('BMP pixel data is cut short');
  return header;
}
