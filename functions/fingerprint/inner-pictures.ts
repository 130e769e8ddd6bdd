import type { Margins } from './margins';
import { BORDER_TOLERANCE, type Plane } from './planes';
import { Lines, SAME_LINE, wholeMeasures, type Box } from './picture-lines';

/**
 * Pictures laid inside a larger one: a picture in a picture, a screenshot of a picture in a viewer, a picture in a
 * frame of any content and of any widths, a tile. Each is found by its edges: straight lines, across the whole picture
 * inside or along one of its sides, where the pixels on either side stop following on from each other
 * (`docs/moderation.md`, "Pictures inside pictures"). What a crop of a few percent cannot take off (a frame wider than
 * about 10%, or of different widths, the picture off centre) comes off with its lines (what a line is:
 * `picture-lines.ts`).
 */

/** How far a line's measure must stand out from the lesser of its two neighbours' to be a line. */
export const LINE_LEAST = 0.3;
/** A line across a rectangle crosses it when it stands out by this share of its faintest side (and `LINE_LEAST`). */
const CROSSING_SHARE = 0.5;
/** The least share of the whole's width and of its height a picture inside takes. */
export const INNER_LEAST_SHARE = 0.25;
/** The most rectangles of lines taken (each, and each with its plain sides cut off: `innerPictures`). */
const MOST_LINED_PICTURES = 6;
/** The most pictures inside one picture (each hashed as it is: a query of the block list each). */
export const MOST_INNER_PICTURES = 8;

/**
 * The pictures inside this one, as the margins that cut each out (`crop`): at most `MOST_INNER_PICTURES`, each at
 * least `INNER_LEAST_SHARE` of each side, none the whole picture.
 *
 * A rectangle is a picture inside when each of its sides is the whole picture's edge or a line along that side's own
 * length, and at least one is a line. Those no line crosses from side to side come first (a rectangle so crossed is
 * two pictures, or a picture and its frame, or a picture with a straight line of its own: a wall of bricks, a page of
 * text), the clearest first; and they are taken in turns by how many of their sides are lines (a picture in a picture
 * has four, in a frame on three sides three, a tile's cell two, under a caption bar one), so that the lines of one kind
 * of picture inside, or a picture's own, do not crowd out the others. Each is also taken with its plain sides cut off:
 * the edge of a dark picture on a viewer's dark page is too faint for a line, and the rectangle under a viewer's
 * toolbar, cut so, is the picture. So is the whole picture first: a plain page of a different shade on each side.
 * The picture is given by its luminance as PDQ reads it, as a viewer sees it (on a page, when it has transparency).
 */
export function innerPictures(plane: Plane): Margins[] {
  const { width, height, values: luma } = plane;
  if (width < 16 || height < 16) return [];
  const whole = wholeMeasures(luma, width, height);
  const columns = new Lines(luma, width, height, true, whole.columns);
  const rows = new Lines(luma, width, height, false, whole.rows);
  const xs = columns.strongest();
  const ys = rows.strongest();
  const spans = (lines: number[], length: number): Array<[number, number]> => {
    const ends = [0, ...lines, length];
    return ends.flatMap((start, k) =>
      ends
        .slice(k + 1)
        .flatMap((end): Array<[number, number]> => (end - start >= INNER_LEAST_SHARE * length ? [[start, end]] : [])),
    );
  };
  const found: Array<{ box: Box; lines: number; crossed: boolean; standing: number }> = [];
  for (const [left, right] of spans(xs, width)) {
    for (const [top, bottom] of spans(ys, height)) {
      if (left === 0 && right === width && top === 0 && bottom === height) continue;
      const sides = [
        left > 0 ? columns.standing(left, top, bottom) : Infinity,
        right < width ? columns.standing(right, top, bottom) : Infinity,
        top > 0 ? rows.standing(top, left, right) : Infinity,
        bottom < height ? rows.standing(bottom, left, right) : Infinity,
      ];
      const standing = Math.min(...sides);
      if (standing < LINE_LEAST) continue;
      const lines = sides.filter((side) => side !== Infinity).length;
      // a line across it about as clear as its sides: a line of its own, far fainter, is the picture's (a horizon)
      const across = Math.max(LINE_LEAST, CROSSING_SHARE * standing);
      const crossed =
        xs.some((x) => x > left && x < right && columns.standing(x, top, bottom) >= across) ||
        ys.some((y) => y > top && y < bottom && rows.standing(y, left, right) >= across);
      found.push({ box: { left, top, right, bottom }, lines, crossed, standing });
    }
  }
  found.sort((a, b) => Number(a.crossed) - Number(b.crossed) || b.standing - a.standing || area(a.box) - area(b.box));
  const least = { width: INNER_LEAST_SHARE * width, height: INNER_LEAST_SHARE * height };
  const boxes: Box[] = [];
  const keep = (box: Box | undefined): void => {
    if (!box || box.right - box.left < least.width || box.bottom - box.top < least.height) return;
    const whole = box.left === 0 && box.top === 0 && box.right === width && box.bottom === height;
    if (!whole && boxes.length < MOST_INNER_PICTURES && !boxes.some((other) => sameBox(other, box))) boxes.push(box);
  };
  // the whole picture's plain sides first (one box at most), then each rectangle of lines, and it with its plain sides
  keep(plainCut(luma, width, { left: 0, top: 0, right: width, bottom: height }, least));
  for (const { box } of takenInTurns(found)) {
    const inset = insetBox(box, width, height);
    keep(inset);
    keep(plainCut(luma, width, inset, least));
  }
  return boxes.map((box) => ({
    left: box.left / width,
    right: (width - box.right) / width,
    top: box.top / height,
    bottom: (height - box.bottom) / height,
  }));
}

/**
 * The rectangles found, at most `MOST_LINED_PICTURES`: those no line crosses, then the others, each taken in turns
 * from those of four sides of lines, three, two and one, each in its order.
 */
function takenInTurns<T extends { lines: number; crossed: boolean }>(found: readonly T[]): T[] {
  const taken: T[] = [];
  for (const crossed of [false, true]) {
    const kinds = [4, 3, 2, 1].map((lines) => found.filter((one) => one.lines === lines && one.crossed === crossed));
    for (let turn = 0; taken.length < MOST_LINED_PICTURES && kinds.some((kind) => kind.length > turn); turn += 1) {
      for (const kind of kinds) {
        const one = kind[turn];
        if (one && taken.length < MOST_LINED_PICTURES) taken.push(one);
      }
    }
  }
  return taken;
}

const area = (box: Box): number => (box.right - box.left) * (box.bottom - box.top);

/**
 * A box a pixel further in on each side that is a line: the column of a line may hold both pictures' pixels, blended
 * by a resize.
 */
function insetBox({ left, top, right, bottom }: Box, width: number, height: number): Box {
  return {
    left: left === 0 ? 0 : left + 1,
    top: top === 0 ? 0 : top + 1,
    right: right === width ? width : right - 1,
    bottom: bottom === height ? height : bottom - 1,
  };
}

/** Whether two boxes are one: each side within `SAME_LINE`. */
const sameBox = (a: Box, b: Box): boolean =>
  Math.abs(a.left - b.left) <= SAME_LINE &&
  Math.abs(a.top - b.top) <= SAME_LINE &&
  Math.abs(a.right - b.right) <= SAME_LINE &&
  Math.abs(a.bottom - b.bottom) <= SAME_LINE;

/**
 * The box with its plain sides cut off: from each side in turn, rows or columns whose every pixel's luminance (what PDQ
 * reads) is within `BORDER_TOLERANCE` of that side's own first pixel's. None when what is left would be under the
 * least size and still plain: a flat picture, or a few lines on a plain page, holds no picture.
 */
function plainCut(luma: Float32Array, width: number, box: Box, least: { width: number; height: number }): Box | undefined {
  const plain = (first: number, step: number, count: number): boolean => {
    const value = luma[first]!;
    for (let at = first, k = 0; k < count; k += 1, at += step) if (Math.abs(luma[at]! - value) > BORDER_TOLERANCE) return false;
    return true;
  };
  let { left, top, right, bottom } = box;
  const row = (y: number): boolean => plain(y * width + left, 1, right - left);
  const column = (x: number): boolean => plain(top * width + x, width, bottom - top);
  const tooSmall = (): boolean => bottom - top < least.height || right - left < least.width;
  for (; row(top); top += 1) if (tooSmall()) return undefined;
  for (; row(bottom - 1); bottom -= 1) if (tooSmall()) return undefined;
  for (; column(left); left += 1) if (tooSmall()) return undefined;
  for (; column(right - 1); right -= 1) if (tooSmall()) return undefined;
  return tooSmall() ? undefined : { left, top, right, bottom };
}
