import sharp from 'sharp';
import { MIN_PDQ_QUALITY, pdqHash, type PdqPixels, type PdqResult } from '../core/moderation/pdq';
import { BORDER_TOLERANCE, insidePlainBorder } from './plain-border';

/**
 * Hashes of a picture's centred crops, for the edits PDQ does not survive by itself: a crop of a few percent a side
 * moves about half its bits, and so does a frame of any content around the picture (`docs/moderation.md`, "Crops and
 * frames"). PDQ still matches a crop within about 1.5% a side of the one it was made from, so:
 *
 * - a blocked picture is also blocked by the hashes of its crops in steps of 1.5% a side, up to 10.5%, each turned
 *   and mirrored the eight ways: an upload cut from it by up to about 10% a side comes within reach of one, and so
 *   does a framed copy turned or mirrored (its crops are compared as they are);
 * - an upload is also checked by the hashes of its crops in steps of 3%, up to 9%: a frame of up to about 10% around
 *   a blocked picture comes off with one of them, within 3% of the picture's edge, where a crop of the blocked one
 *   meets it.
 */
export const BLOCKED_CROPS = [0.015, 0.03, 0.045, 0.06, 0.075, 0.09, 0.105] as const;
export const UPLOAD_CROPS = [0.03, 0.06, 0.09] as const;
/**
 * The crops are hashed from a copy of at most this many pixels a side, on both sides alike: they match as well as
 * from 1,024, in a seventh of the time; from 256 they lose a few (`docs/moderation.md`, "Crops and frames").
 */
export const CROPPED_SIDE = 384;

/** The pixels inside a margin of `side` (a share of the width and of the height) on each side. */
export function centredCrop(pixels: PdqPixels, side: number): PdqPixels {
  const { data, width, height, channels } = pixels;
  const left = Math.round(width * side);
  const top = Math.round(height * side);
  const cropWidth = Math.max(1, width - 2 * left);
  const cropHeight = Math.max(1, height - 2 * top);
  const out = new Uint8Array(cropWidth * cropHeight * channels);
  for (let row = 0; row < cropHeight; row += 1) {
    const start = ((row + top) * width + left) * channels;
    out.set(data.subarray(start, start + cropWidth * channels), row * cropWidth * channels);
  }
  return { data: out, width: cropWidth, height: cropHeight, channels };
}

/** The hashes of a picture's centred crops that say enough of it (`MIN_PDQ_QUALITY`). */
export function cropHashes(pixels: PdqPixels, sides: readonly number[]): PdqResult[] {
  return sides.map((side) => pdqHash(centredCrop(pixels, side))).filter((one) => one.quality >= MIN_PDQ_QUALITY);
}

/**
 * The hashes that block a stored picture (its original's bytes): those of its crops (`BLOCKED_CROPS`) in their eight
 * turned and mirrored forms, from a copy of at most `CROPPED_SIDE` a side, upright and on white as a viewer sees it,
 * inside its plain border when it has one. The picture's own hashes are its record's.
 */
export async function blockedCropHashes(original: Uint8Array): Promise<string[]> {
  const { data, info } = await sharp(original)
    .rotate()
    .resize(CROPPED_SIDE, CROPPED_SIDE, { fit: 'inside', withoutEnlargement: true })
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  const page = { data, width: info.width, height: info.height, channels: info.channels };
  // inside its plain border, as an upload's crops are made (`pixel-copies.ts`)
  const pixels = insidePlainBorder(page, BORDER_TOLERANCE) ?? page;
  return [...new Set(cropHashes(pixels, BLOCKED_CROPS).flatMap((one) => one.turned))];
}
