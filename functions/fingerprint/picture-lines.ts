/**
 * The lines of a picture's luminance, by which pictures inside it are found (`inner-pictures.ts`).
 *
 * A line's measure, between two neighbouring columns (or rows) over a span: the squared differences across it, over
 * the spread of each column along the span. Neighbouring columns of one picture differ far less than they vary (a
 * photo's run smoothly, a flat colour's not at all); two columns of different pictures differ by about as much as
 * they vary, or more. A line is where the measure stands out from the lesser of its two neighbours': a frame of noise
 * has the measure of different pictures between each of its columns, and only its edge stands out, from the
 * picture's side.
 */

/**
 * How far a line across the whole picture must stand out to be looked at: a picture inside stands out less across the
 * whole than along its own side (the frame beyond its ends dilutes it), where it must stand out by `LINE_LEAST`.
 */
const CANDIDATE_LEAST = 0.15;
/** The most lines looked at along each axis, strongest first: bounds the rectangles tried. */
const MOST_LINES = 6;
/** Grey levels of spread every column is taken to have: a flat column beside another flat one of its colour is no line. */
const SPREAD_FLOOR = 3;
/** Lines closer than this (pixels) are one line, the stronger kept: a line smeared over two by a resize. */
export const SAME_LINE = 3;

/** A rectangle of the picture, in pixels: columns [left, right) and rows [top, bottom). */
export type Box = Record<'left' | 'top' | 'right' | 'bottom', number>;

/**
 * The luminance seen along one axis: its lines are the columns (`vertical`) or the rows, each of `across` pixels. The
 * measures across the whole picture are made in one pass over it (`wholeMeasures`); a span's, of a few lines, here.
 */
export class Lines {
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
export function wholeMeasures(luma: Float32Array, width: number, height: number): { columns: Float64Array; rows: Float64Array } {
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
