import type { Margins } from './margins';
import { BORDER_TOLERANCE, type Plane } from './planes';

/**
 * Pictures laid inside a larger one: a picture in a picture, a screenshot of a picture in a viewer, a picture in a
 * frame of any content and of any widths, a tile. Each is found by its edges: straight lines, across the whole picture
 * inside or along one of its sides, where the pixels on either side stop following on from each other
 * (`docs/moderation.md`, "Pictures inside pictures"). What a crop of a few percent cannot take off (a frame wider than
 * about 10%, or of different widths, the picture off centre) comes off with its lines.
 *
 * A line's measure, between two neighbouring columns (or rows) over a span: the squared differences across it, over
 * the spread of each column along the span. Neighbouring columns of one picture differ far less than they vary (a
 * photo's run smoothly, a flat colour's not at all); two columns of different pictures differ by about as much as
 * they vary, or more. A line is where the measure stands out from the lesser of its two neighbours': a frame of noise
 * has the measure of different pictures between each of its columns, and only its edge stands out, from the
 * picture's side.
 */

/** How far a line's measure must stand out from the lesser of its two neighbours' to be a line. */
export const LINE_LEAST = 0.3;
/**
 * How far a line across the whole picture must stand out to be looked at: a picture inside stands out less across the
 * whole than along its own side (the frame beyond its ends dilutes it), where it must stand out by `LINE_LEAST`.
 */
const CANDIDATE_LEAST = 0.15;
/** A line across a rectangle crosses it when it stands out by this share of its faintest side (and `LINE_LEAST`). */
const CROSSING_SHARE = 0.5;
/** The least share of the whole's width and of its height a picture inside takes. */
export const INNER_LEAST_SHARE = 0.25;
/** The most lines looked at along each axis, strongest first: bounds the rectangles tried. */
const MOST_LINES = 6;
/** The most rectangles of lines taken (each, and each with its plain sides cut off: `innerPictures`). */
const MOST_LINED_PICTURES = 6;
/** The most pictures inside one picture (each hashed as it is: a query of the block list each). */
export const MOST_INNER_PICTURES = 8;
/** Grey levels of spread every column is taken to have: a flat column beside another flat one of its colour is no line. */
const SPREAD_FLOOR = 3;
/** Lines closer than this (pixels) are one line, the stronger kept: a line smeared over two by a resize. */
const SAME_LINE = 3;

/** A rectangle of the picture, in pixels: columns [left, right) and rows [top, bottom). */
type Box = Record<'left' | 'top' | 'right' | 'bottom', number>;

/**
 * The luminance seen along one axis: its lines are the columns (`vertical`) or the rows, each of `across` pixels. The
 * measures across the whole picture are made in one pass over it (`wholeMeasures`); a span's, of a few lines, here.
 */
class Lines {
  readonly length: number;
  private readonly across: number;
  private readonly known = new Map<number, number>();

  constructor(
    private readonly luma: Float32Array,
    private readonly width: number,
    height: number,
    private readonly vertical: boolean,
    /** The measure between each line and the one before it, across the whole picture. */
    readonly whole: Float64Array,
  ) {
    this.length = vertical ? width : height;
    this.across = vertical ? height : width;
  }

  /** The measure between lines `i - 1` and `i` over places [from, to) of the other axis. */
  private measure(i: number, from: number, to: number): number {
    const { luma, width } = this;
    // one step along the line, and one from line to line
    const [along, next] = this.vertical ? [width, 1] : [1, width];
    let [sumA, squareA, sumB, squareB, across] = [0, 0, 0, 0, 0];
    for (let o = from, at = from * along + i * next; o < to; o += 1, at += along) {
      const a = luma[at - next]!;
      const b = luma[at]!;
      sumA += a;
      squareA += a * a;
      sumB += b;
      squareB += b * b;
      across += (b - a) * (b - a);
    }
    const count = to - from;
    return across / (squareA - (sumA * sumA) / count + squareB - (sumB * sumB) / count + count * SPREAD_FLOOR ** 2);
  }

  /**
   * How far the measure between lines `i - 1` and `i` stands out from the lesser of its neighbours', over [from, to);
   * each asked once (the rectangles share their lines' spans).
   */
  standing(i: number, from: number, to: number): number {
    if (i < 2 || i > this.length - 2) return 0;
    const key = (i * (this.across + 1) + from) * (this.across + 1) + to;
    let known = this.known.get(key);
    if (known === undefined) {
      known = this.measure(i, from, to) - Math.min(this.measure(i - 1, from, to), this.measure(i + 1, from, to));
      this.known.set(key, known);
    }
    return known;
  }

  /** The strongest lines across the whole picture, at most `MOST_LINES`, none within `SAME_LINE` of a stronger. */
  strongest(): number[] {
    const { whole } = this;
    const found: Array<{ at: number; standing: number }> = [];
    for (let i = 2; i <= this.length - 2; i += 1) {
      const standing = whole[i]! - Math.min(whole[i - 1]!, whole[i + 1]!);
      if (standing >= CANDIDATE_LEAST) found.push({ at: i, standing });
    }
    found.sort((a, b) => b.standing - a.standing);
    const kept: number[] = [];
    for (const { at } of found) {
      if (kept.length === MOST_LINES) break;
      if (kept.every((other) => Math.abs(other - at) > SAME_LINE)) kept.push(at);
    }
    return kept.sort((a, b) => a - b);
  }
}

/**
 * The measures between each column and the one before it, and each row and the one before it, across the whole
 * picture: one pass over its luminance, row by row.
 */
function wholeMeasures(luma: Float32Array, width: number, height: number): { columns: Float64Array; rows: Float64Array } {
  const columnSums = new Float64Array(width);
  const columnSquares = new Float64Array(width);
  const columnsAcross = new Float64Array(width);
  const rowSums = new Float64Array(height);
  const rowSquares = new Float64Array(height);
  const rowsAcross = new Float64Array(height);
  for (let y = 0, at = 0; y < height; y += 1) {
    let [sum, square, across] = [0, 0, 0];
    for (let x = 0; x < width; x += 1, at += 1) {
      const value = luma[at]!;
      sum += value;
      square += value * value;
      columnSums[x]! += value;
      columnSquares[x]! += value * value;
      if (x > 0) columnsAcross[x]! += (value - luma[at - 1]!) ** 2;
      if (y > 0) across += (value - luma[at - width]!) ** 2;
    }
    rowSums[y] = sum;
    rowSquares[y] = square;
    rowsAcross[y] = across;
  }
  const measures = (sums: Float64Array, squares: Float64Array, acrossOf: Float64Array, count: number): Float64Array => {
    const spread = (i: number): number => squares[i]! - (sums[i]! * sums[i]!) / count;
    const out = new Float64Array(sums.length);
    for (let i = 1; i < sums.length; i += 1) out[i] = acrossOf[i]! / (spread(i) + spread(i - 1) + count * SPREAD_FLOOR ** 2);
    return out;
  };
  return {
    columns: measures(columnSums, columnSquares, columnsAcross, height),
    rows: measures(rowSums, rowSquares, rowsAcross, width),
  };
}

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
