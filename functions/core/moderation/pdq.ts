import { bitCount } from './hash-index';

/**
 * PDQ, the 256-bit perceptual hash Meta published for matching pictures (its hashes are what industry hash-sharing
 * lists hold): the picture's luminance blurred and sampled down to 64x64, its 16x16 lowest DCT frequencies but the
 * constant one, and a bit per frequency: above their median or not. Re-encodes, resizes and small edits move few bits;
 * different pictures differ in about half (`docs/moderation.md` has the measurements and the threshold).
 *
 * Written from the published algorithm (Meta's "The TMK+PDQF and PDQ hashing algorithms", and its reference
 * implementations' conventions: luminance weights, the tent filter of two box passes, sampling at cell centres, the
 * hex form): a hash made here compares with one made by Meta's tools. Measured on Meta's reference vectors
 * (`test/unit/imaging/pdq-reference.test.ts`): 2 to 8 bits from the reference's hashes from the whole decode, 4 to 10
 * from the service's working copy.
 */

/**
 * The quality under which a hash says little of its picture (the reference's cut-off): a flat, black, white or fully
 * transparent picture, or black on transparent, hashes to nearly the same bits whatever it shows, so such a hash is
 * neither blocked nor matched (`docs/moderation.md`).
 */
export const MIN_PDQ_QUALITY = 50;

/** A PDQ hash, as 64 hex digits (the reference's form: 16-bit words, the last first). */
export type PdqHash = string;

/** The eight ways a picture can be turned or mirrored (the dihedral group), in the reference's order. */
export const DIHEDRAL = ['original', 'rotate90', 'rotate180', 'rotate270', 'flipX', 'flipY', 'flipPlus1', 'flipMinus1'] as const;

export interface PdqResult {
  hash: PdqHash;
  /** 0 to 100: how much detail the hash rests on (a flat picture hashes poorly); the reference's measure. */
  quality: number;
  /** The hashes of the picture turned and mirrored each of the eight ways (`DIHEDRAL`'s order: the first is `hash`). */
  turned: PdqHash[];
}

/** Pixels as sharp hands them out raw: rows of `channels` 8-bit samples (grey, grey+alpha, RGB or RGBA). */
export interface PdqPixels {
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
}

const CELLS = 64;
const FREQUENCIES = 16;
/** The box filter's window per pass: a cell's side halved (two passes make the tent), at least one pixel. */
const WINDOW_DIVISOR = 2 * CELLS;

/** DCT-II basis rows 1..16 over 64 samples (the scale is left out: the median comparison does not see it). */
const DCT = (() => {
  const matrix = new Float64Array(FREQUENCIES * CELLS);
  for (let u = 0; u < FREQUENCIES; u += 1) {
    for (let x = 0; x < CELLS; x += 1) matrix[u * CELLS + x] = Math.cos((Math.PI / (2 * CELLS)) * (u + 1) * (2 * x + 1));
  }
  return matrix;
})();

/**
 * A picture's luminance as PDQ reads it (`luminanceOfRow`'s values, row after row), made once for the many crops of
 * it hashed (`pdqHash`'s `area`), each reading it rather than converting pixels again; a `PdqPicture` is either.
 */
export interface PdqLuminance {
  luma: Float64Array;
  width: number;
  height: number;
}
export type PdqPicture = PdqPixels | PdqLuminance;

/** A rectangle of a picture, in pixels: columns [left, left + width) and rows [top, top + height). */
export type PdqArea = Record<'left' | 'top' | 'width' | 'height', number>;

/** The luminance of a picture (`PdqLuminance`), or the one given. */
export function pdqLuminance(source: PdqPicture): PdqLuminance {
  if ('luma' in source) return source;
  const { width, height } = source;
  const luma = new Float64Array(width * height);
  for (let row = 0; row < height; row += 1) luminanceOfRow(source, row, luma.subarray(row * width, (row + 1) * width));
  return { luma, width, height };
}

/** The PDQ hash of a picture (or an `area` of it), its quality, and its turned and mirrored copies' (one transform). */
export function pdqHash(pixels: PdqPicture, area?: PdqArea): PdqResult {
  const { coefficients, quality } = transform(pixels, area);
  const hashes = DIHEDRAL.map((way) => toHex(way === 'original' ? coefficients : turned(coefficients, way)));
  return { hash: hashes[0] ?? '', quality, turned: hashes };
}

/** The PDQ hash of a picture (or of an `area` of it) as it is, and its quality: `pdqHash` without the turned forms. */
export function pdqHashAsIs(pixels: PdqPicture, area?: PdqArea): Omit<PdqResult, 'turned'> {
  const { coefficients, quality } = transform(pixels, area);
  return { hash: toHex(coefficients), quality };
}

/**
 * A stored hash's eight turned and mirrored forms, from its bits alone (`DIHEDRAL`'s order): each bit moved and
 * flipped as its coefficient would be, taking the median for zero. Within 18 bits of the forms made from the
 * coefficients on the measured photos (`docs/moderation.md`): for finding stored pictures, never for an upload's check.
 */
export function turnedOfHash(hash: PdqHash): PdqHash[] {
  const bit = (i: number, j: number) => (Number.parseInt(hash.slice((15 - i) * 4, (16 - i) * 4), 16) >> j) & 1;
  const signs = new Float64Array(FREQUENCIES * FREQUENCIES);
  for (let i = 0; i < FREQUENCIES; i += 1)
    for (let j = 0; j < FREQUENCIES; j += 1) signs[i * FREQUENCIES + j] = bit(i, j) ? 1 : -1;
  return DIHEDRAL.map((way) => toHex(way === 'original' ? signs : turned(signs, way), 0));
}

/** How many of the 256 bits two hashes differ in. */
export function pdqDistance(a: PdqHash, b: PdqHash): number {
  let bits = 0;
  for (let at = 0; at < 64; at += 8)
    bits += bitCount(Number.parseInt(a.slice(at, at + 8), 16) ^ Number.parseInt(b.slice(at, at + 8), 16));
  return bits;
}

/** Whether a text is a PDQ hash (64 hex digits, either case). */
export function isPdqHash(text: string): boolean {
  return /^[0-9a-f]{64}$/i.test(text);
}

/**
 * The 64x64 samples the hash is made from: the luminance of the picture (or of an `area` of it, as if cut out),
 * blurred by the reference's filter (two passes of a box along the rows and along the columns, cut at the edges),
 * read at the cells' centres.
 *
 * The filter is linear and separable, so each sample is a weighted sum of the luminance around it: the weights along
 * a row (`tentTaps`) times those along a column. Only the 64 samples of each row, then the 64 of each column, are
 * computed, not the whole blurred picture the reference makes: the same values to float rounding, in about a
 * third of the time (`docs/moderation.md`, "Cost").
 */
export function pdqCells(
  pixels: PdqPicture,
  { left, top, width, height }: PdqArea = { left: 0, top: 0, width: pixels.width, height: pixels.height },
): Float64Array {
  const across = tentTaps(width, Math.ceil(width / WINDOW_DIVISOR));
  const down = tentTaps(height, Math.ceil(height / WINDOW_DIVISOR));
  const firstRow = down.first[0] ?? 0;
  const lastRow = (down.first[CELLS - 1] ?? 0) + (down.count[CELLS - 1] ?? 0);
  // each row's 64 samples along it, for the rows the column samples reach: read from the luminance when it is made
  // already, else each row's converted in turn
  const alongRows = new Float64Array((lastRow - firstRow) * CELLS);
  const converted = 'luma' in pixels ? undefined : pixels;
  const luma = 'luma' in pixels ? pixels.luma : new Float64Array(pixels.width);
  for (let row = firstRow; row < lastRow; row += 1) {
    if (converted) luminanceOfRow(converted, top + row, luma);
    const from = (converted ? 0 : (top + row) * pixels.width) + left;
    const into = (row - firstRow) * CELLS;
    for (let j = 0; j < CELLS; j += 1) alongRows[into + j] = weighted(luma, across, j, from, 1);
  }
  const cells = new Float64Array(CELLS * CELLS);
  for (let i = 0; i < CELLS; i += 1) {
    for (let j = 0; j < CELLS; j += 1) cells[i * CELLS + j] = weighted(alongRows, down, i, j - firstRow * CELLS, CELLS);
  }
  return cells;
}

/**
 * Where each of the 64 samples along a line of `length` reads, and with what weights: two passes of a box of `window`
 * samples (from `window - half` before to `half - 1` after, `half` = window / 2 + 1), each output the mean of the
 * samples its box covers inside the line. Sample `s` reads `count[s]` samples from `first[s]`, weighted by
 * `weights[s * span ...]`.
 */
interface Taps {
  first: Int32Array;
  count: Int32Array;
  span: number;
  weights: Float64Array;
}

function tentTaps(length: number, window: number): Taps {
  const half = Math.floor((window + 2) / 2);
  const before = window - half;
  const after = half - 1;
  const box = (at: number) => ({ low: Math.max(0, at - before), high: Math.min(length - 1, at + after) });
  const span = 2 * (before + after) + 1;
  const first = new Int32Array(CELLS);
  const count = new Int32Array(CELLS);
  const weights = new Float64Array(CELLS * span);
  for (let s = 0; s < CELLS; s += 1) {
    const centre = Math.floor(((s + 0.5) * length) / CELLS);
    const outer = box(centre);
    const low = Math.max(0, outer.low - before);
    first[s] = low;
    count[s] = Math.min(length - 1, outer.high + after) - low + 1;
    for (let k = outer.low; k <= outer.high; k += 1) {
      const inner = box(k);
      const weight = 1 / ((outer.high - outer.low + 1) * (inner.high - inner.low + 1));
      for (let x = inner.low; x <= inner.high; x += 1) {
        const at = s * span + x - low;
        weights[at] = (weights[at] ?? 0) + weight;
      }
    }
  }
  return { first, count, span, weights };
}

/** Sample `s` of `taps` from `values`, whose tap `t` is at `offset + (first[s] + t) * stride`. */
function weighted(values: Float64Array, taps: Taps, s: number, offset: number, stride: number): number {
  const weights = taps.weights;
  const base = s * taps.span;
  let at = offset + (taps.first[s] ?? 0) * stride;
  let sum = 0;
  for (let t = 0, count = taps.count[s] ?? 0; t < count; t += 1, at += stride)
    sum += (weights[base + t] ?? 0) * (values[at] ?? 0);
  return sum;
}

function transform(pixels: PdqPicture, area?: PdqArea): { coefficients: Float64Array; quality: number } {
  const cells = pdqCells(pixels, area);
  return { coefficients: dct(cells), quality: qualityOf(cells) };
}

/** Luminance (Y of YUV) of a row's pixels into `luma`; a grey sample is its own, alpha is not looked at. */
function luminanceOfRow({ data, width, channels }: PdqPixels, row: number, luma: Float64Array): void {
  const start = row * width * channels;
  if (channels < 3) {
    for (let x = 0, at = start; x < width; x += 1, at += channels) luma[x] = data[at] ?? 0;
    return;
  }
  for (let x = 0, at = start; x < width; x += 1, at += channels) {
    luma[x] = 0.299 * (data[at] ?? 0) + 0.587 * (data[at + 1] ?? 0) + 0.114 * (data[at + 2] ?? 0);
  }
}

/** The reference's quality: significant steps between neighbouring cells, summed and scaled to at most 100. */
function qualityOf(cells: Float64Array): number {
  let steps = 0;
  const step = (a: number, b: number) => Math.abs(Math.trunc(((a - b) * 100) / 255));
  for (let i = 0; i < CELLS; i += 1) {
    for (let j = 0; j < CELLS; j += 1) {
      const here = cells[i * CELLS + j] ?? 0;
      if (i + 1 < CELLS) steps += step(here, cells[(i + 1) * CELLS + j] ?? 0);
      if (j + 1 < CELLS) steps += step(here, cells[i * CELLS + j + 1] ?? 0);
    }
  }
  return Math.min(100, Math.trunc(steps / 90));
}

/** The 16x16 DCT coefficients 1..16 of the 64x64 cells: D A Dt, as (D (At)t) Dt. */
function dct(cells: Float64Array): Float64Array {
  const transposed = new Float64Array(CELLS * CELLS);
  for (let i = 0; i < CELLS; i += 1) for (let j = 0; j < CELLS; j += 1) transposed[j * CELLS + i] = cells[i * CELLS + j] ?? 0;
  return timesTransposed(timesTransposed(DCT, transposed, FREQUENCIES, CELLS), DCT, FREQUENCIES, FREQUENCIES);
}

/** X Yt, for X of `rows` rows and Y of `columns` rows, both rows of 64. */
function timesTransposed(x: Float64Array, y: Float64Array, rows: number, columns: number): Float64Array {
  const product = new Float64Array(rows * columns);
  for (let i = 0; i < rows; i += 1) {
    for (let j = 0; j < columns; j += 1) {
      let sum = 0;
      for (let k = 0; k < CELLS; k += 1) sum += (x[i * CELLS + k] ?? 0) * (y[j * CELLS + k] ?? 0);
      product[i * columns + j] = sum;
    }
  }
  return product;
}

/**
 * The coefficients of the picture turned or mirrored: a DCT basis function is even or odd about the centre, so each
 * way is a transpose and sign changes (odd index: the function is symmetric, as the basis starts at frequency 1).
 */
function turned(a: Float64Array, way: (typeof DIHEDRAL)[number]): Float64Array {
  const b = new Float64Array(a.length);
  for (let i = 0; i < FREQUENCIES; i += 1) {
    for (let j = 0; j < FREQUENCIES; j += 1) {
      const value = a[i * FREQUENCIES + j] ?? 0;
      const iOdd = (i & 1) === 1;
      const jOdd = (j & 1) === 1;
      const sumOdd = ((i + j) & 1) === 1;
      const same = i * FREQUENCIES + j;
      const transposed = j * FREQUENCIES + i;
      if (way === 'original') b[same] = value;
      else if (way === 'rotate90') b[transposed] = jOdd ? value : -value;
      else if (way === 'rotate180') b[same] = sumOdd ? -value : value;
      else if (way === 'rotate270') b[transposed] = iOdd ? value : -value;
      else if (way === 'flipX') b[same] = iOdd ? value : -value;
      else if (way === 'flipY') b[same] = jOdd ? value : -value;
      else if (way === 'flipPlus1') b[transposed] = value;
      else b[transposed] = sumOdd ? -value : value;
    }
  }
  return b;
}

/**
 * The bits, as hex: bit `16 i + j` is set when coefficient (i, j) is above the median (the 128th smallest of 256), or
 * above `above` when given; 16-bit words, one per row i, written from the last to the first.
 */
function toHex(coefficients: Float64Array, above = coefficients.slice().sort()[coefficients.length / 2 - 1] ?? 0): PdqHash {
  const median = above;
  const words: string[] = [];
  for (let i = FREQUENCIES - 1; i >= 0; i -= 1) {
    let word = 0;
    for (let j = 0; j < FREQUENCIES; j += 1) if ((coefficients[i * FREQUENCIES + j] ?? 0) > median) word |= 1 << j;
    words.push(word.toString(16).padStart(4, '0'));
  }
  return words.join('');
}
