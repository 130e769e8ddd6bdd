import type { Sharp } from 'sharp';
import type { EncodedImage } from '../core/ports';
import type { Budget } from './budget';
import { OUTPUTS, type Probe } from './probe';

/**
 * One file of an upload, encoded by libvips in the stored format: the original (higher quality, its ICC profile, its
 * metadata when kept, 16 bits kept for PNG) or a rendition.
 */
export async function encode(
  image: Sharp,
  probe: Probe,
  role: 'original' | 'rendition',
  budget: Budget,
  keepMetadata: boolean,
): Promise<EncodedImage> {
  const original = role === 'original';
  const sixteenBit = original && probe.sixteenBit && probe.output === 'png';
  // sharp writes sRGB unless told otherwise: greyscale stays greyscale, 16 bits stay 16 bits.
  if (probe.channels <= 2) image.toColourspace(sixteenBit ? 'grey16' : 'b-w');
  else if (sixteenBit) image.toColourspace('rgb16');
  switch (probe.output) {
    case 'jpeg':
      image.jpeg({
        quality: original ? 92 : 82,
        mozjpeg: false,
        chromaSubsampling: original && probe.chromaSubsampling === '4:4:4' ? '4:4:4' : '4:2:0',
      });
      break;
    case 'png':
      image.png();
      break;
    case 'gif':
      // libimagequant's effort dominates animated GIF time; 1 is twice as fast as the default at the same size.
      image.gif({ effort: original ? 4 : 1 });
      break;
    case 'webp':
      image.webp({ quality: original ? 90 : 80 });
      break;
    case 'avif':
      image.avif({ quality: original ? 70 : 55, effort: 2 });
      break;
  }
  if (original) image.keepIccProfile();
  if (original && keepMetadata) image.keepMetadata();
  const { data, info } = await budget.bound(image).toBuffer({ resolveWithObject: true });
  return {
    bytes: data,
    width: info.width,
    height: info.pageHeight ?? info.height,
    ...OUTPUTS[probe.output],
    bits: sixteenBit ? 16 : 8,
    channels: info.channels,
  };
}
