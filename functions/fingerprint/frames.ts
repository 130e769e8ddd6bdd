import { pdqDistance } from '../core/moderation/pdq-hash';
import { nextTurn } from '../core/turns';
import type { Deadline } from './fingerprint';
import { hashOf, pdqOf, wholeArea } from './pdq';
import { lumaPictureOf } from './planes';
import { HASHED_FRAMES } from './views';

/**
 * Which frames of an animation its fingerprint is made from: one of each distinct picture it shows, those shown
 * longest in all (`docs/moderation.md`, "The hash"). Frames picked by when they are shown could be dodged: a blocked
 * picture spread over many short frames, between frames of others at the moments picked, was on screen most of the
 * time and never hashed.
 */

/** The side of the small copies an animation's frames are told apart by (the imaging makes them: `SKETCH_SIDE`). */
export const SKETCH_SIDE = 64;
/** Frames whose small copies hash within this many bits show the same picture (brightened, re-encoded, dithered). */
const SAME_PICTURE_BITS = 16;
/** Frames told apart between two turns of the event loop (a small copy's hash takes 0.5 to 2 ms here). */
const FRAMES_A_TURN = 8;

/** How long a browser shows each frame: a delay of 10 ms or less is shown as 100 ms. */
export function shownMs(delays: readonly number[], frames: number): number[] {
  return Array.from({ length: frames }, (_, page) => ((delays[page] ?? 0) <= 10 ? 100 : (delays[page] ?? 0)));
}

/**
 * The frames to hash, in order, from the small copies of every frame (`SKETCH_SIDE` a side, one after another, on
 * white as a viewer sees them): of each distinct picture among them (within `SAME_PICTURE_BITS`), its longest-shown
 * frame; of those pictures, the `HASHED_FRAMES` shown longest in all. A picture shown more than a seventh of the loop,
 * over however many frames, is always among them.
 */
export async function distinctFrames(
  sketches: { data: Uint8Array; channels: number },
  delays: readonly number[],
  deadline: Deadline,
): Promise<number[]> {
  const frameBytes = SKETCH_SIDE * SKETCH_SIDE * sketches.channels;
  const pages = Math.floor(sketches.data.length / frameBytes);
  const shown = shownMs(delays, pages);
  const pictures: Array<{ hash: string; shownMs: number; page: number; pageMs: number }> = [];
  for (let page = 0; page < pages; page += 1) {
    if (page > 0 && page % FRAMES_A_TURN === 0) {
      await nextTurn();
      deadline.check();
    }
    const data = sketches.data.subarray(page * frameBytes, (page + 1) * frameBytes);
    const { luma } = lumaPictureOf({ data, width: SKETCH_SIDE, height: SKETCH_SIDE, channels: sketches.channels });
    const [outcome] = pdqOf(luma, [wholeArea(luma)]);
    const hash = outcome ? hashOf(outcome) : '';
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
    .slice(0, HASHED_FRAMES)
    .map((picture) => picture.page)
    .sort((a, b) => a - b);
}
