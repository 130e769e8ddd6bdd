import sharp, { type Sharp } from 'sharp';
import { blockedHashesOf } from '../fingerprint/fingerprint';
import { distinctFrames, SKETCH_SIDE } from '../fingerprint/frames';
import type { PdqPixels } from '../fingerprint/planes';
import { FINGERPRINT_SIDE } from '../fingerprint/views';
import type { Budget } from './budget';
import { fromRaw, pixelsOf, type RawImage } from './pixels';
import { DECODE_OPTIONS, type Probe } from './probe';

/**
 * The copies of a picture the fingerprint reads (`functions/fingerprint`): 8-bit, upright, alpha kept (the fingerprint
 * lays it on pages itself), at most `FINGERPRINT_SIDE` a side. Made by libvips from pixels decoded already.
 */

/** The fewest pixels a side of a copy keeps (PDQ's cells across): a picture of 100 by 10,000 keeps its detail across. */
const LEAST_SIDE = 64;

/**
 * `image` at most `FINGERPRINT_SIDE` a side, its shape kept (an upload and the blocked picture it copies must be
 * squeezed alike for their crops to meet), but a short side never squeezed under `LEAST_SIDE`: PDQ samples every
 * picture to 64x64 cells whatever its shape.
 */
function squeezed(image: Sharp, width: number, height: number): Sharp {
  const scale = Math.min(1, FINGERPRINT_SIDE / Math.max(width, height));
  if (scale === 1) return image;
  const side = (length: number) => Math.max(Math.round(length * scale), Math.min(length, LEAST_SIDE));
  return image.resize(side(width), side(height), { fit: 'fill' });
}

/** A still picture's copy: its working pixels as they are, or squeezed by libvips when a side is longer. */
export async function stillCopy(working: RawImage, budget: Budget): Promise<PdqPixels> {
  const { width, height, channels } = working.info;
  if (working.depth === 'uchar' && width <= FINGERPRINT_SIDE && height <= FINGERPRINT_SIDE)
    return { data: working.data, width, height, channels };
  return pixelsOf(squeezed(fromRaw(working), width, height), budget);
}

/**
 * An animation's copies: a frame of each distinct picture it shows longest (`hashedFrames`), each decoded alone as a
 * viewer sees it at that point.
 */
export async function frameCopies(stored: Uint8Array, probe: Probe, budget: Budget): Promise<PdqPixels[]> {
  const pages = await hashedFrames(stored, probe, budget);
  const frame = (page: number): Sharp => sharp(stored, { ...DECODE_OPTIONS, page, pages: 1 });
  return Promise.all(pages.map((page) => pixelsOf(squeezed(frame(page), probe.width, probe.height), budget)));
}

/** The frames of an animation its fingerprint is made from (`distinctFrames`, told apart by small copies on white). */
export async function hashedFrames(stored: Uint8Array, probe: Probe, budget: Budget): Promise<number[]> {
  const all = sharp(stored, { ...DECODE_OPTIONS, pages: -1 })
    .resize(SKETCH_SIDE, SKETCH_SIDE, { fit: 'fill' })
    .flatten({ background: '#ffffff' });
  const sketches = await pixelsOf(all, budget);
  const frames = Math.min(probe.frames, Math.floor(sketches.data.length / (SKETCH_SIDE * SKETCH_SIDE * sketches.channels)));
  const sketched = sketches.data.subarray(0, frames * SKETCH_SIDE * SKETCH_SIDE * sketches.channels);
  return distinctFrames({ data: sketched, channels: sketches.channels }, probe.delays, budget);
}

/** A stored original's copy, upright, as a takedown blocks it (its first frame, for an animation). */
export async function blockedPictureCopy(original: Uint8Array): Promise<PdqPixels> {
  const { width = 1, height = 1, orientation = 1 } = await sharp(original, DECODE_OPTIONS).metadata();
  const [uprightWidth, uprightHeight] = orientation >= 5 ? [height, width] : [width, height];
  const upright = sharp(original, DECODE_OPTIONS).autoOrient().toColourspace('srgb');
  const { data, info } = await squeezed(upright, uprightWidth, uprightHeight).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/**
 * The hashes a takedown with `--block` adds for a stored original besides its record's own (`blockedHashesOf`): its
 * crops, and with `inside` those of the pictures found inside it.
 */
export async function blockedPictureHashes(
  original: Uint8Array,
  { inside = false } = {},
): Promise<{ crops: string[]; inside: string[] }> {
  const { innerPictures = [], ...crops } = blockedHashesOf(await blockedPictureCopy(original), { inside });
  return { crops: [...new Set(Object.values(crops).flat())], inside: innerPictures };
}
