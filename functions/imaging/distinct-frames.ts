import sharp from 'sharp';
import { pdqDistance, pdqHash } from '../core/moderation/pdq';
import { nextTurn } from '../core/turns';
import type { Budget } from './budget';
import { DECODE_OPTIONS, type Probe } from './probe';

/**
 * Which frames of an animation its perceptual hashes are made from: one of each distinct picture it shows, those shown
 * longest in all (`docs/moderation.md`, "The hash"). Frames picked by when they are shown could be dodged: a blocked
 * picture spread over many short frames, between frames of others at the moments picked, was on screen most of the
 * time and never hashed.
 */

/** The side of the small copies an animation's frames are told apart by. */
const SKETCH_SIDE = 64;
/** Frames whose small copies hash within this many bits show the same picture (brightened, re-encoded, dithered). */
const SAME_PICTURE_BITS = 16;
/** Frames told apart between two turns of the event loop (a small copy's hash takes 0.5 to 2 ms here). */
const FRAMES_A_TURN = 8;
/** How many of an animation's distinct pictures are hashed at most: those shown longest. */
export const HASHED_PICTURES = 6;

/** How long a browser shows each frame: a delay of 10 ms or less is shown as 100 ms. */
export function shownMs(delays: readonly number[], frames: number): number[] {
  return Array.from({ length: frames }, (_, page) => ((delays[page] ?? 0) <= 10 ? 100 : (delays[page] ?? 0)));
}

/**
 * The frames to hash, in order: of each distinct picture among the frames (their small copies, on white as a viewer
 * sees them, within `SAME_PICTURE_BITS`), its longest-shown frame; of those pictures, the `HASHED_PICTURES` shown
 * longest in all. A picture shown more than a seventh of the loop, over however many frames, is always among them.
 */
export async function distinctFrames(stored: Uint8Array, probe: Probe, budget: Budget): Promise<number[]> {
  const small = sharp(stored, { ...DECODE_OPTIONS, pages: -1 })
    .resize(SKETCH_SIDE, SKETCH_SIDE, { fit: 'fill' })
    .flatten({ background: '#ffffff' });
  const { data, info } = await budget.bound(small).raw().toBuffer({ resolveWithObject: true });
  const frameBytes = SKETCH_SIDE * SKETCH_SIDE * info.channels;
  const pages = Math.min(probe.frames, Math.floor(data.length / frameBytes));
  const shown = shownMs(probe.delays, pages);
  const pictures: Array<{ hash: string; shownMs: number; page: number; pageMs: number }> = [];
  for (let page = 0; page < pages; page += 1) {
    if (page > 0 && page % FRAMES_A_TURN === 0) {
      await nextTurn();
      budget.check();
    }
    const pixels = data.subarray(page * frameBytes, (page + 1) * frameBytes);
    const { hash } = pdqHash({ data: pixels, width: SKETCH_SIDE, height: SKETCH_SIDE, channels: info.channels });
    const ms = shown[page] ?? 0;
    const same = pictures.find((picture) => pdqDistance(picture.hash, hash) <= SAME_PICTURE_BITS);
    if (!same) pictures.push({ hash, shownMs: ms, page, pageMs: ms });
    else {
      same.shownMs += ms;
      if (ms > same.pageMs) Object.assign(same, { page, pageMs: ms });
    }
  }
  return pictures
    .sort((a, b) => b.shownMs - a.shownMs || a.page - b.page)
    .slice(0, HASHED_PICTURES)
    .map((picture) => picture.page)
    .sort((a, b) => a - b);
}
