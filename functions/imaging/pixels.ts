import sharp, { type Sharp } from 'sharp';
import type { Budget } from './budget';
import type { RawPixels } from './decode-foreign';
import { checkSides, type Probe } from './probe';

/** Raw pipelines in and out of libvips: decoded pixels as the imaging's stages pass them on. */

export interface RawImage {
  data: Buffer;
  info: sharp.OutputInfo;
  depth: 'uchar' | 'ushort';
}

/** Raw pixels; sharp's raw output is 8-bit sRGB unless asked for greyscale or 16 bits by colour space. */
export function toRaw(image: Sharp, probe: Probe, depth: 'uchar' | 'ushort', budget: Budget): Promise<RawImage> {
  const grey = probe.channels <= 2;
  if (depth === 'ushort') image.toColourspace(grey ? 'grey16' : 'rgb16');
  else if (grey) image.toColourspace('b-w');
  return budget
    .bound(image)
    .raw({ depth })
    .toBuffer({ resolveWithObject: true })
    .then(({ data, info }) => {
      budget.decodedBytes += data.length;
      // the pixels as decoded, which a container may describe otherwise than its header did
      checkSides(info.width, info.height);
      return { data, info, depth };
    });
}

/** A pipeline over raw pixels; 16-bit samples must reach sharp as a Uint16Array to be read as such. */
export function fromRaw({ data, info, depth }: RawImage): Sharp {
  const pixels = depth === 'ushort' ? new Uint16Array(data.buffer, data.byteOffset, data.byteLength / 2) : data;
  return sharp(pixels, {
    raw: {
      width: info.width,
      height: info.height,
      channels: info.channels,
      ...(info.premultiplied ? { premultiplied: true } : {}),
    },
  });
}

export function fromPixels(pixels: RawPixels): Sharp {
  return sharp(pixels.data, { raw: { width: pixels.width, height: pixels.height, channels: pixels.channels } });
}

/** A pipeline's 8-bit pixels, as raw samples and their shape. */
export async function pixelsOf(
  image: Sharp,
  budget: Budget,
): Promise<{ data: Buffer; width: number; height: number; channels: number }> {
  const { data, info } = await budget.bound(image).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}
