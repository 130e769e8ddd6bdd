import sharp, { type Sharp } from 'sharp';
import { MIN_PDQ_QUALITY, pdqHash, pdqLuminance, type PdqPixels, type PdqResult } from '../core/moderation/pdq';
import { nextTurn } from '../core/turns';
import type { Perceptual } from '../core/ports';
import type { Budget } from './budget';
import { CROPPED_SIDE, UPLOAD_CROP_MARGINS, uploadCropHashes } from './crops';
import { innerPictures } from './inner-pictures';
import { distinctFrames, shownMs } from './distinct-frames';
import type { RawPixels } from './decode-foreign';
import { CLASSIFIER_SIDE, type ClassifierPixels } from './nsfw-classifier';
import { BORDER_TOLERANCE, insidePlainBorder } from './plain-border';
import { checkSides, DECODE_OPTIONS, type Probe } from './probe';

/**
 * The decoded pixels of an upload and the copies made of them: raw pipelines in and out of libvips, the classifier's
 * square, and the bounded copies the perceptual hashes read (`docs/moderation.md`).
 */

/** Under this share of its picture's area, the picture inside a plain border is hashed without the whole one. */
const MOSTLY_BORDER = 0.5;

/**
 * The longest side of the copy the perceptual hashes read: a working copy longer than this (a tall or wide picture) is
 * squeezed by libvips first, so that the hashes' work on this thread stays a few ms whatever the picture's shape.
 * Working copies of photos (500 by at most 1,000) are hashed as they are.
 */
export const MAX_HASHED_SIDE = 1024;

/**
 * The longest side of the copy an animation's frame is hashed from: about a still picture's working copy (500 wide).
 * Each frame makes up to four hashes and its crops' (`docs/imaging.md`, "Bounded work").
 */
export const MAX_FRAME_HASHED_SIDE = 512;

/** How many frames of an animation the classifier scores at most (`scoredFrames`). */
export const SCORED_FRAMES = 6;

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

/** A picture squeezed to the classifier's input by libvips, as sRGB on white. */
export async function squeezedByLibvips(image: Sharp, budget: Budget): Promise<ClassifierPixels> {
  const square = image.resize(CLASSIFIER_SIDE, CLASSIFIER_SIDE, { fit: 'fill' }).flatten({ background: '#ffffff' });
  const data = await budget.bound(square.toColourspace('srgb')).raw().toBuffer();
  return { data, width: CLASSIFIER_SIDE, height: CLASSIFIER_SIDE, channels: 3 };
}

export function fromPixels(pixels: RawPixels): Sharp {
  return sharp(pixels.data, { raw: { width: pixels.width, height: pixels.height, channels: pixels.channels } });
}

/** The picture's hashes, from a bounded copy of the working pixels, and as a viewer sees it when it has transparency. */
export async function workingPerceptual(working: RawImage, budget: Budget): Promise<Perceptual | undefined> {
  return perceptualOf(await hashedCopies(await hashedCopy(working, budget), budget), budget);
}

/**
 * An animation's hashes: those of a frame of each distinct picture it shows longest (`distinctFrames`), each decoded
 * alone as a viewer sees it at that point, at most `MAX_FRAME_HASHED_SIDE` a side, with its crops as a still
 * picture's; each hash once. A blocked picture sent as an animation of it, framed or not, is found by its frames.
 */
export async function framesPerceptual(stored: Uint8Array, probe: Probe, budget: Budget): Promise<Perceptual | undefined> {
  const copies = await Promise.all(
    (await distinctFrames(stored, probe, budget)).map(async (page) => {
      const frame = sharp(stored, { ...DECODE_OPTIONS, page, pages: 1 }).resize(MAX_FRAME_HASHED_SIDE, MAX_FRAME_HASHED_SIDE, {
        fit: 'inside',
        withoutEnlargement: true,
      });
      const { data, info } = await budget.bound(frame).raw().toBuffer({ resolveWithObject: true });
      return hashedCopies({ data, width: info.width, height: info.height, channels: info.channels }, budget);
    }),
  );
  // decoded together by libvips, hashed one frame after another: one hash in each turn of the event loop in all
  const frames: Array<Perceptual | undefined> = [];
  for (const copy of copies) frames.push(await perceptualOf(copy, budget));
  const kept = frames.filter((one) => one !== undefined);
  // the quality of the first frame whose hashes are kept (a washed-out frame's are not)
  const first = kept.find((one) => one.hashes.length > 0) ?? kept[0];
  if (!first) return undefined;
  const hashes = [...new Set(kept.flatMap((one) => one.hashes))];
  const turned = [...new Set(kept.flatMap((one) => one.turned))];
  return { hashes, turned, quality: first.quality };
}

/** The working pixels the hashes read: as they are, or squeezed to at most `MAX_HASHED_SIDE` a side. */
async function hashedCopy(working: RawImage, budget: Budget): Promise<PdqPixels> {
  const { width, height, channels } = working.info;
  if (width <= MAX_HASHED_SIDE && height <= MAX_HASHED_SIDE) return { data: working.data, width, height, channels };
  const squeezed = fromRaw(working).resize(Math.min(width, MAX_HASHED_SIDE), Math.min(height, MAX_HASHED_SIDE), {
    fit: 'fill',
  });
  const { data, info } = await budget.bound(squeezed).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** The copies of a picture (or frame) its hashes read (`perceptualOf`). */
interface HashedCopies {
  pixels: PdqPixels;
  /** The picture inside its plain border, when it has one. */
  inside: PdqPixels | undefined;
  /** As a viewer sees it on a white page and on a black one, when it has transparency (`seenOnPages`). */
  seen: PdqPixels[];
  /** What its crops are made of, at most `CROPPED_SIDE` a side. */
  cropped: PdqPixels;
}

/**
 * A picture's copies for its hashes. The crops are made of what a viewer sees (on a white page, as a blocked
 * picture's crops are made, when it has transparency), inside its plain border when it has one: a frame hides the
 * picture as well inside a border, and around a picture drawn by its transparency, as around any other.
 */
async function hashedCopies(pixels: PdqPixels, budget: Budget): Promise<HashedCopies> {
  const inside = insidePlainBorder(pixels, BORDER_TOLERANCE);
  await nextTurn();
  const seen = await seenOnPages(pixels, budget);
  const page = seen[0];
  const viewed = page ? (insidePlainBorder(page, BORDER_TOLERANCE) ?? page) : (inside ?? pixels);
  return { pixels, inside, seen, cropped: await croppedCopy(viewed, budget) };
}

/** The pixels the crops' hashes read: at most `CROPPED_SIDE` a side (`crops.ts`). */
async function croppedCopy(pixels: PdqPixels, budget: Budget): Promise<PdqPixels> {
  const { data, width, height, channels } = pixels;
  if (width <= CROPPED_SIDE && height <= CROPPED_SIDE) return pixels;
  const raw = { width, height, channels: channels === 1 || channels === 2 || channels === 3 ? channels : 4 } as const;
  const small = sharp(data, { raw }).resize(CROPPED_SIDE, CROPPED_SIDE, { fit: 'inside' });
  const made = await budget.bound(small).raw().toBuffer({ resolveWithObject: true });
  return { data: made.data, width: made.info.width, height: made.info.height, channels: made.info.channels };
}

/**
 * A picture with transparency as a viewer sees it: laid on a white page and on a black one, by libvips. The hash reads
 * colour and not alpha, so a blocked photo hidden in the alpha channel of a black picture (it shows on a white page)
 * would otherwise pass. None for an opaque picture.
 */
async function seenOnPages(pixels: PdqPixels, budget: Budget): Promise<PdqPixels[]> {
  const { data, width, height, channels } = pixels;
  if (channels !== 2 && channels !== 4) return [];
  let opaque = true;
  for (let at = channels - 1; at < data.length && opaque; at += channels) opaque = data[at] === 255;
  if (opaque) return [];
  return Promise.all(
    ['#ffffff', '#000000'].map(async (background) => {
      const page = sharp(data, { raw: { width, height, channels } }).flatten({ background });
      const flat = await budget.bound(page).raw().toBuffer({ resolveWithObject: true });
      return { data: flat.data, width: flat.info.width, height: flat.info.height, channels: flat.info.channels };
    }),
  );
}

/**
 * The least spread of a picture's luminance (its 1st to 99th percentile, of 255) that a stretched copy is made of: a
 * picture of fewer shades shows a viewer next to nothing.
 */
const LEAST_SPREAD = 6;

/**
 * A copy of a picture with its contrast stretched to the whole range (the 1st and 99th percentiles of its luminance to
 * 0 and 255; alpha as it is), when it has some to stretch; none for a picture flat to begin with.
 */
function stretched(pixels: PdqPixels): PdqPixels | undefined {
  const { data, width, height, channels } = pixels;
  const alpha = channels === 2 || channels === 4;
  const counts = new Uint32Array(256);
  for (let base = 0; base < data.length; base += channels) {
    const luma = channels >= 3 ? 0.299 * data[base]! + 0.587 * data[base + 1]! + 0.114 * data[base + 2]! : data[base]!;
    counts[Math.round(luma)]! += 1;
  }
  const percentile = (share: number): number => {
    let seen = 0;
    for (let value = 0; value < 256; value += 1) if ((seen += counts[value]!) > share * width * height) return value;
    return 255;
  };
  const [low, high] = [percentile(0.01), percentile(0.99)];
  if (high - low < LEAST_SPREAD) return undefined;
  // clamped and rounded as it is written
  const out = new Uint8ClampedArray(data.length);
  const scale = 255 / (high - low);
  for (let at = 0; at < data.length; at += 1)
    out[at] = alpha && at % channels === channels - 1 ? data[at]! : (data[at]! - low) * scale;
  return { data: new Uint8Array(out.buffer), width, height, channels };
}

/**
 * For a picture whose own hash says too little of it: the hash of its copy with the contrast stretched, turned and
 * mirrored, when that one says enough. A photo washed out until its hash falls under quality 50 then hashes as the
 * photo again. Compared, never kept: a record keeps only hashes of quality 50 or more (`docs/moderation.md`,
 * "Pictures that hash poorly").
 */
async function washedOut(pixels: PdqPixels, budget: Budget): Promise<string[]> {
  const copy = stretched(pixels);
  if (!copy) return [];
  await nextTurn();
  const hash = pdqHash(copy);
  await nextTurn();
  budget.check();
  return hash.quality >= MIN_PDQ_QUALITY ? hash.turned : [];
}

/**
 * The picture's PDQ hashes from the working pixels (no decode of its own), those of the picture inside its plain
 * border, when it has one (a border added to, or cut from, a blocked picture would otherwise hide it), and those of
 * the picture as a viewer sees it on a page (`seenOnPages`). Only hashes of `MIN_PDQ_QUALITY` or more are kept, each
 * once; none when no hash has it (a flat or empty picture). The hashes of the crops of `cropped`, centred and from
 * each side (`hashedCopies`, `crops.ts`), are compared too, but not kept: a record keeps the picture's own. One hash
 * a turn of the event loop, and none once the imaging's time is spent.
 */
async function perceptualOf({ pixels, inside, seen, cropped }: HashedCopies, budget: Budget): Promise<Perceptual | undefined> {
  // a picture in a small part of a plain page: the whole one's hash tells more of the page's layout than of it, and
  // came within reach of other pictures laid out alike (`docs/moderation.md`, "Pictures that hash poorly")
  const layout = inside !== undefined && inside.width * inside.height < MOSTLY_BORDER * pixels.width * pixels.height;
  // a hash at a time, the event loop turning between: a few ms each on this thread, never all of them at once
  const own = pdqHash(pixels);
  await nextTurn();
  budget.check();
  const hashes: PdqResult[] = own.quality >= MIN_PDQ_QUALITY && !layout ? [own] : [];
  for (const picture of [...(inside ? [inside] : []), ...seen]) {
    const hash = pdqHash(picture);
    if (hash.quality >= MIN_PDQ_QUALITY && !hashes.some((other) => other.hash === hash.hash)) hashes.push(hash);
    await nextTurn();
    budget.check();
  }
  // a whole picture whose hash says too little of it (flat, or washed out on purpose): its stretched copy is compared
  const washed = own.quality < MIN_PDQ_QUALITY ? await washedOut(pixels, budget) : [];
  if (hashes.length === 0) return washed.length > 0 ? { hashes: [], turned: washed, quality: 0 } : undefined;
  // the crops as they are, not turned: 15 queries of the block list rather than 120 (the blocked crops are kept
  // turned instead: `crops.ts`); centred, then from each side
  const luminance = pdqLuminance(cropped);
  const crops = await uploadCropHashes(luminance, UPLOAD_CROP_MARGINS, budget);
  // the pictures laid inside it (a picture in a picture, a screenshot of one, a frame of any widths, a tile), as they
  // are: each meets a blocked picture's own hash, or its crops' or pictures' inside turned and mirrored
  // (`inner-pictures.ts`); the lines are looked for in a turn of their own
  const laidInside = innerPictures(luminance);
  await nextTurn();
  budget.check();
  const inner = await uploadCropHashes(luminance, laidInside, budget);
  const turned = [...new Set([...hashes.flatMap((one) => one.turned), ...washed, ...crops, ...inner])];
  return { hashes: hashes.map((one) => one.hash), turned, quality: hashes[0]?.quality ?? 0 };
}

/**
 * The frames of an animation the classifier scores: those shown at 4 moments spread over its loop (a quarter of the
 * time apart, each in the middle of its quarter), and the 2 shown longest; at most `SCORED_FRAMES`. Times are as
 * browsers show them: a delay of 10 ms or less is shown as 100 ms. A frame shown less than a quarter of the loop may go
 * unscored only while 2 others are shown longer.
 */
export function scoredFrames(delays: readonly number[], frames: number): number[] {
  const shown = shownMs(delays, frames);
  const total = shown.reduce((sum, ms) => sum + ms, 0);
  const pages = new Set<number>();
  for (let quarter = 0; quarter < 4; quarter += 1) {
    let at = ((quarter + 0.5) / 4) * total;
    let page = 0;
    while (page < frames - 1 && at >= (shown[page] ?? 0)) at -= shown[page++] ?? 0;
    pages.add(page);
  }
  const longest = [...shown.keys()].sort((a, b) => (shown[b] ?? 0) - (shown[a] ?? 0) || a - b);
  for (const page of longest.slice(0, 2)) pages.add(page);
  return [...pages].sort((a, b) => a - b);
}
