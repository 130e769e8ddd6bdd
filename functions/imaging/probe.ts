import sharp, { type Metadata, type SharpOptions } from 'sharp';
import { ServiceError } from '../core/errors';
import { STORED_FORMATS, type StoredFormat } from '../core/image/stored-formats';
import { jpegScanCount } from './containers/jpeg';
import { gifFramesWhole } from './containers/gif-frames';
import { readBmpHeader } from './decode-foreign';
import { sniffFormat, type SniffedFormat } from './detect-format';

/**
 * What an upload is before its pixels are decoded: its format, size, frames and orientation, from its header, and the
 * limits that refuse a decompression bomb from the header alone.
 */

export type OutputFormat = StoredFormat;
export type WebFormat = StoredFormat;

export const OUTPUTS: Record<OutputFormat, { mime: string; extension: string }> = STORED_FORMATS;

/** What sharp's metadata says each web format is, and what browsers cannot show is stored as. */
const DECODER_OF: Record<WebFormat | 'tiff', string> = {
  jpeg: 'jpeg',
  png: 'png',
  gif: 'gif',
  webp: 'webp',
  avif: 'heif',
  tiff: 'tiff',
};
export const CONVERTED_TO: Record<'bmp' | 'tiff' | 'heic', OutputFormat> = { bmp: 'png', tiff: 'png', heic: 'jpeg' };

/** Everything known about an upload before its pixels are decoded. */
export interface Probe {
  format: SniffedFormat;
  output: OutputFormat;
  /** Size as displayed, after EXIF orientation. */
  width: number;
  height: number;
  frames: number;
  /** How long each frame of an animation is shown, in ms, as its header says (empty for a still image). */
  delays: number[];
  orientation: number;
  sixteenBit: boolean;
  channels: number;
  chromaSubsampling: string | undefined;
  exif: Buffer | undefined;
}

/** The limits a header is checked against (`ImagingSettings`). */
export interface ProbeLimits {
  maxPixels: number;
  maxHeicPixels: number;
  maxFrames: number;
  thumbSize: number;
}

export const DECODE_OPTIONS: SharpOptions = { limitInputPixels: false, failOn: 'error' };

/**
 * Scans a JPEG may have. Encoders write 1 (baseline) to about 10 (progressive: libjpeg and mozjpeg 10 for colour, 6 for
 * grey; Photoshop 3 to 5); each scan costs a pass over every block, and libjpeg reads all of a progressive JPEG's
 * scans before it gives libvips a line, so no time limit can stop it: 883 scans of a 64 MP image took 10 s. 100 scans
 * keep a 100 MP JPEG under 2 s.
 */
export const MAX_JPEG_SCANS = 100;

/**
 * How much longer one side may be than the other. A thinner picture has no rendition worth showing (the thumb would
 * be a sliver of it, the medium a line), and its working copy cannot shrink along its long side: 1 x 1,000,000 pixels
 * is a megapixel that no step may read whole. Long screenshots (1:20 to 1:50) and panoramas (up to about 10:1) pass.
 */
export const MAX_SIDE_RATIO = 100;

/** The extension the stored original gets: its own, or that of the format it is converted to. */
export function storedExtensionOf(input: Uint8Array): string {
  const format = sniffFormat(input);
  if (format === undefined) throw unsupported();
  return OUTPUTS[format === 'bmp' || format === 'tiff' || format === 'heic' ? CONVERTED_TO[format] : format].extension;
}

export async function probeOf(input: Uint8Array, limits: ProbeLimits): Promise<Probe> {
  const format = sniffFormat(input);
  if (format === undefined) throw unsupported();
  if (format === 'bmp') {
    const header = readBmpHeader(input);
    return checked(limits, {
      format,
      output: CONVERTED_TO.bmp,
      width: header.width,
      height: header.height,
      frames: 1,
      delays: [],
      orientation: 1,
      sixteenBit: false,
      channels: header.hasAlpha ? 4 : 3,
      chromaSubsampling: undefined,
      exif: undefined,
    });
  }
  if (format === 'jpeg' && jpegScanCount(input) > MAX_JPEG_SCANS) {
    throw new ServiceError('ImageTooLarge', `Image too complex - max ${MAX_JPEG_SCANS} JPEG scans`);
  }
  // a GIF whose image data was cut short, its terminator and trailer put back, is decoded without a word: missing rows
  if (format === 'gif' && !gifFramesWhole(Buffer.from(input.buffer, input.byteOffset, input.byteLength))) throw unsupported();
  const meta: Metadata = await sharp(input, { limitInputPixels: false }).metadata();
  if (format === 'heic') {
    if (meta.format !== 'heif' || meta.compression !== 'hevc') throw unsupported();
  } else if (meta.format !== DECODER_OF[format] || (format === 'avif' && meta.compression !== 'av1')) {
    throw unsupported();
  }
  if (!(meta.width > 0 && meta.height > 0)) throw unsupported();
  const animatable = format === 'gif' || format === 'webp';
  // HEIF applies its own rotation (irot/imir) when decoding; its EXIF orientation is informative only.
  const orientation = format === 'heic' || format === 'avif' ? 1 : (meta.orientation ?? 1);
  return checked(limits, {
    format,
    output: format === 'tiff' || format === 'heic' ? CONVERTED_TO[format] : format,
    width: orientation >= 5 ? meta.height : meta.width,
    height: orientation >= 5 ? meta.width : meta.height,
    frames: animatable ? Math.max(1, meta.pages ?? 1) : 1,
    delays: animatable ? (meta.delay ?? []) : [],
    orientation,
    sixteenBit: meta.depth === 'ushort',
    channels: meta.channels,
    chromaSubsampling: meta.chromaSubsampling,
    exif: meta.exif,
  });
}

/** Refuses a decompression bomb from its header alone. */
function checked(limits: ProbeLimits, probe: Probe): Probe {
  const { maxPixels, maxFrames, maxHeicPixels } = limits;
  const framePixels = probe.width * probe.height;
  // an animation's thumb is made of every frame, each scaled to cover it: frames narrower than the thumb are enlarged
  // first (99 frames of 100x10000 came to a gigapixel, 21 s past a 10 s limit that libvips did not hold)
  const enlarged = Math.max(1, limits.thumbSize / Math.min(probe.width, probe.height)) ** 2;
  if (framePixels > maxPixels || framePixels * probe.frames * (probe.frames > 1 ? enlarged : 1) > maxPixels) {
    throw new ServiceError('ImageTooLarge', `Image too large - max ${megapixels(maxPixels)} megapixels`);
  }
  if (probe.format === 'heic' && framePixels > maxHeicPixels) {
    throw new ServiceError('ImageTooLarge', `HEIC image too large - max ${megapixels(maxHeicPixels)} megapixels`);
  }
  if (probe.frames > maxFrames) throw new ServiceError('ImageTooLarge', `Image too large - max ${maxFrames} frames`);
  checkSides(probe.width, probe.height);
  return probe;
}

/** The size the original is stored at: as uploaded, or the `width` asked for (never wider). */
export function targetSizeOf(probe: Probe, targetWidth: number | undefined): { width: number; height: number } {
  if (targetWidth === undefined) return { width: probe.width, height: probe.height };
  if (targetWidth > probe.width) throw new ServiceError('WidthTooLarge', 'Target width is greater than the original image width');
  const size = { width: targetWidth, height: Math.max(1, Math.round((probe.height * targetWidth) / probe.width)) };
  checkSides(size.width, size.height);
  return size;
}

/**
 * Whether the stored original can be the upload's own pixels: upright already, or a JPEG, whose EXIF orientation is
 * kept for browsers to apply (`docs/imaging.md`); other formats are turned upright by a re-encode.
 */
export function keepsOrientation(probe: Probe): boolean {
  return probe.orientation === 1 || probe.format === 'jpeg';
}

/** Refuses sides further apart than `MAX_SIDE_RATIO` (400, code 614). */
export function checkSides(width: number, height: number): void {
  if (Math.max(width, height) > MAX_SIDE_RATIO * Math.min(width, height))
    throw new ServiceError('ImageTooThin', `Image too thin - sides at most ${MAX_SIDE_RATIO}:1`);
}

/** Megapixels to three significant digits: 100, 24, 0.5. */
function megapixels(pixels: number): string {
  return String(Number((pixels / 1_000_000).toPrecision(3)));
}

export function unsupported(cause?: unknown): ServiceError {
  return new ServiceError('UnsupportedFormat', 'Unavailable image format', { cause });
}
