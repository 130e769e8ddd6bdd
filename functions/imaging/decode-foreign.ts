import { decode as decodeBmpPixels } from 'bmp-ts';
import { MalformedImageError } from './strip-metadata';

/** Pixels decoded outside libvips, ready for `sharp(data, { raw })`. */
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

/** Decodes a BMP (1/4/8/16/24/32 bits, RLE4/RLE8, bit fields) to RGB, or RGBA when it has an alpha channel. */
export function decodeBmp(bytes: Uint8Array): RawPixels {
  const header = readBmpHeader(bytes);
  if (!header.complete) throw new MalformedImageError('BMP pixel data is cut short');
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // bmp-ts's toRGBA option is ignored by its paletted paths; its default byte order, ABGR, is the same in all of them.
  const decoded = decodeBmpPixels(buffer);
  if (decoded.width !== header.width || Math.abs(decoded.height) !== header.height)
    throw new MalformedImageError('BMP decoded to another size');
  const abgr = decoded.data;
  const channels = header.hasAlpha ? 4 : 3;
  const out = Buffer.allocUnsafe(header.width * header.height * channels);
  for (let source = 0, target = 0; source < abgr.length; source += 4, target += channels) {
    out[target] = abgr[source + 3] ?? 0;
    out[target + 1] = abgr[source + 2] ?? 0;
    out[target + 2] = abgr[source + 1] ?? 0;
    // Paletted and 24-bit BMPs come out with alpha 0: they are opaque and keep three channels.
    if (channels === 4) out[target + 3] = abgr[source] ?? 0;
  }
  return { data: out, width: header.width, height: header.height, channels };
}

export interface HeicImage {
  width: number;
  height: number;
  decode(): Promise<RawPixels>;
  dispose(): void;
}

/**
 * Opens a HEIC/HEIF (HEVC) file with libheif compiled to WebAssembly: sharp's prebuilt libvips has no HEVC decoder.
 * The module (about 2 MB) is loaded on the first HEIC only. Sizes are known before any pixel is decoded.
 */
export async function openHeic(bytes: Uint8Array): Promise<HeicImage> {
  const { default: heicDecode } = await import('heic-decode');
  let images: Awaited<ReturnType<typeof heicDecode.all>>;
  try {
    images = await heicDecode.all({ buffer: bytes });
  } catch (error) {
    throw new MalformedImageError(`HEIC does not open: ${error instanceof Error ? error.message : String(error)}`);
  }
  const dispose = (): void => (images as unknown as { dispose?: () => void }).dispose?.();
  const [primary] = images as unknown as Array<{
    width: number;
    height: number;
    decode(): Promise<{ data: Uint8ClampedArray; width: number; height: number }>;
  }>;
  if (!primary) {
    dispose();
    throw new MalformedImageError('HEIC holds no image');
  }
  return {
    width: primary.width,
    height: primary.height,
    async decode() {
      const decoded = await primary.decode();
      return {
        data: Buffer.from(decoded.data.buffer, decoded.data.byteOffset, decoded.data.byteLength),
        width: decoded.width,
        height: decoded.height,
        channels: 4,
      };
    },
    dispose,
  };
}
