import sharp, { type Metadata, type Sharp } from 'sharp';
import { UploadError } from '../core/errors';
import type { EncodedImage, ImageProcessor, ProcessedImage, ProcessOptions } from '../core/ports';
import { sniffFormat, type SniffedFormat } from './detect-format';
import { readExif } from './read-exif';

export interface ImagingLimits {
  /** Pixels of one frame, and of all frames together. */
  maxPixels: number;
  maxFrames: number;
  thumbSize: number;
  mediumWidth: number;
}

type OutputFormat = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif';

interface InputFormat {
  /** What sharp's metadata must say for the bytes to be what their magic says. */
  decoder: string;
  output: OutputFormat;
}

/** Accepted inputs; what browsers cannot show is stored in a format they can. */
const INPUT_FORMATS: Partial<Record<SniffedFormat, InputFormat>> = {
  jpeg: { decoder: 'jpeg', output: 'jpeg' },
  png: { decoder: 'png', output: 'png' },
  gif: { decoder: 'gif', output: 'gif' },
  webp: { decoder: 'webp', output: 'webp' },
  avif: { decoder: 'heif', output: 'avif' },
  tiff: { decoder: 'tiff', output: 'png' },
};

const OUTPUTS: Record<OutputFormat, { mime: string; extension: string }> = {
  jpeg: { mime: 'image/jpeg', extension: 'jpg' },
  png: { mime: 'image/png', extension: 'png' },
  gif: { mime: 'image/gif', extension: 'gif' },
  webp: { mime: 'image/webp', extension: 'webp' },
  avif: { mime: 'image/avif', extension: 'avif' },
};

interface Plan {
  input: Uint8Array;
  meta: Metadata;
  output: OutputFormat;
  /** The stored original keeps the input's format (web formats) rather than being converted. */
  keepsFormat: boolean;
  animated: boolean;
  /** Size after orientation and the requested downscale. */
  width: number;
  height: number;
}

/** The only place that turns bytes into pixels: checks, orientation, renditions. */
export class SharpImageProcessor implements ImageProcessor {
  constructor(private readonly limits: ImagingLimits) {}

  async process(input: Uint8Array, options: ProcessOptions): Promise<ProcessedImage> {
    const plan = await this.plan(input, options);
    try {
      const [original, thumb, medium] = await Promise.all([
        this.storedOriginal(plan),
        this.encode(
          plan,
          (image) => image.resize(this.limits.thumbSize, this.limits.thumbSize, { fit: 'cover', position: 'centre' }),
          'rendition',
        ),
        this.encode(plan, (image) => image.resize({ width: Math.min(this.limits.mediumWidth, plan.width) }), 'rendition'),
      ]);
      return { original, thumb, medium, exif: readExif(plan.meta.exif), animated: plan.animated };
    } catch (error) {
      if (error instanceof UploadError) throw error;
      throw unsupported(error);
    }
  }

  private async plan(input: Uint8Array, options: ProcessOptions): Promise<Plan> {
    const sniffed = sniffFormat(input);
    const format = sniffed === undefined ? undefined : INPUT_FORMATS[sniffed];
    if (!format) throw unsupported();
    let meta: Metadata;
    try {
      meta = await sharp(input, { limitInputPixels: false }).metadata();
    } catch (error) {
      throw unsupported(error);
    }
    if (meta.format !== format.decoder || !(meta.width > 0 && meta.height > 0)) throw unsupported();
    if (format.decoder === 'heif' && meta.compression !== 'av1') throw unsupported();

    const frames = format.output === 'gif' || format.output === 'webp' ? Math.max(1, meta.pages ?? 1) : 1;
    const framePixels = meta.width * meta.height;
    if (framePixels > this.limits.maxPixels || framePixels * frames > this.limits.maxPixels) {
      throw new UploadError('ImageTooLarge', `Image too large - max ${megapixels(this.limits.maxPixels)} megapixels`);
    }
    if (frames > this.limits.maxFrames) {
      throw new UploadError('ImageTooLarge', `Image too large - max ${this.limits.maxFrames} frames`);
    }

    const orientedWidth = meta.autoOrient.width;
    const orientedHeight = meta.autoOrient.height;
    const { targetWidth } = options;
    if (targetWidth !== undefined && targetWidth > orientedWidth) {
      throw new UploadError('WidthTooLarge', 'Target width is greater than the original image width');
    }
    const width = targetWidth ?? orientedWidth;
    const height =
      targetWidth === undefined ? orientedHeight : Math.max(1, Math.round((orientedHeight * targetWidth) / orientedWidth));
    const keepsFormat = sniffed === format.output;
    return { input, meta, output: format.output, keepsFormat, animated: frames > 1, width, height };
  }

  private pipeline(plan: Plan): Sharp {
    return sharp(plan.input, { animated: plan.animated, limitInputPixels: false, failOn: 'error' }).autoOrient();
  }

  private async storedOriginal(plan: Plan): Promise<EncodedImage> {
    const { meta } = plan;
    const upright = (meta.orientation ?? 1) === 1;
    const resized = plan.width !== meta.autoOrient.width;
    const hasMetadata = Boolean(meta.exif ?? meta.xmp ?? meta.iptc ?? meta.comments?.length);
    if (plan.keepsFormat && upright && !resized && !hasMetadata) {
      return {
        bytes: plan.input,
        width: meta.width,
        height: meta.height,
        ...OUTPUTS[plan.output],
        bits: meta.depth === 'ushort' ? 16 : 8,
        channels: meta.channels,
      };
    }
    return this.encode(plan, (image) => (resized ? image.resize({ width: plan.width }) : image).keepIccProfile(), 'original');
  }

  private async encode(plan: Plan, shape: (image: Sharp) => Sharp, role: 'original' | 'rendition'): Promise<EncodedImage> {
    const image = shape(this.pipeline(plan));
    const quality = role === 'original' ? 92 : 82;
    switch (plan.output) {
      case 'jpeg':
        image.jpeg({ quality, mozjpeg: false });
        break;
      case 'png':
        image.png();
        break;
      case 'gif':
        image.gif();
        break;
      case 'webp':
        image.webp({ quality });
        break;
      case 'avif':
        image.avif({ quality: role === 'original' ? 70 : 55, effort: 2 });
        break;
    }
    const { data, info } = await image.toBuffer({ resolveWithObject: true });
    const outMeta = await sharp(data).metadata();
    return {
      bytes: data,
      width: info.width,
      height: info.pageHeight ?? info.height,
      ...OUTPUTS[plan.output],
      bits: outMeta.depth === 'ushort' ? 16 : 8,
      channels: outMeta.channels,
    };
  }
}

function megapixels(pixels: number): string {
  return String(Math.round((pixels / 1_000_000) * 10) / 10);
}

function unsupported(cause?: unknown): UploadError {
  return new UploadError('UnsupportedFormat', 'Unavailable image format', { cause });
}
