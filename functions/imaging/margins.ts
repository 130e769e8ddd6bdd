import type { PdqPixels } from '../core/moderation/pdq';

/** What a crop cuts off: shares of the width (left, right) and of the height (top, bottom). */
export interface Margins {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** The pixels inside these margins (shares that leave part of each side). */
export function crop(pixels: PdqPixels, margins: Margins): PdqPixels {
  if (margins.left + margins.right >= 1 || margins.top + margins.bottom >= 1) throw new RangeError('a crop leaves nothing');
  const { data, width, height, channels } = pixels;
  const left = Math.round(width * margins.left);
  const top = Math.round(height * margins.top);
  const cropWidth = Math.max(1, width - left - Math.round(width * margins.right));
  const cropHeight = Math.max(1, height - top - Math.round(height * margins.bottom));
  const out = new Uint8Array(cropWidth * cropHeight * channels);
  for (let row = 0; row < cropHeight; row += 1) {
    const start = ((row + top) * width + left) * channels;
    out.set(data.subarray(start, start + cropWidth * channels), row * cropWidth * channels);
  }
  return { data: out, width: cropWidth, height: cropHeight, channels };
}
