/**
 * PDQ, the 256-bit perceptual hash Meta published for matching pictures (its hashes are what industry hash-sharing
 * lists hold): the picture's luminance blurred and sampled down to 64x64, its 16x16 lowest DCT frequencies but the
 * constant one, and a bit per frequency: above their median or not. Re-encodes, resizes and small edits move few bits;
 * different pictures differ in about half (`docs/moderation.md` has the measurements and the threshold).
 *
 * Written from the published algorithm (Meta's "The TMK+PDQF and PDQ hashing algorithms", and its reference
 * implementations' conventions: luminance weights, the tent filter of two box passes, sampling at cell centres, the
 * hex form): a hash made here compares with one made by Meta's tools.
 */

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

/** The PDQ hash of a picture, its quality, and the hashes of its turned and mirrored copies (one transform for all). */
export function pdqHash(pixels: PdqPixels): PdqResult {
  const { coefficients, quality } = transform(pixels);
  const hashes = DIHEDRAL.map((way) => toHex(way === 'original' ? coefficients : turned(coefficients, way)));
  return { hash: hashes[0] ?? '', quality, turned: hashes };
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
  for (let at = 0; at < 64; at += 8) {
    let diff = (Number.parseInt(a.slice(at, at + 8), 16) ^ Number.parseInt(b.slice(at, at + 8), 16)) >>> 0;
    while (diff !== 0) {
      diff &= diff - 1;
      bits += 1;
    }
  }
  return bits;
}

/** Whether a text is a PDQ hash (64 hex digits, either case). */
export function isPdqHash(text: string): boolean {
  return /^[0-9a-f]{64}$/i.test(text);
}

/** The two working planes of the filter, kept between hashes (a hash runs to its end without yielding). */
let planes: { luma: Float32Array; scratch: Float32Array } | undefined;

function planesFor(size: number): { luma: Float32Array; scratch: Float32Array } {
  if (!planes || planes.luma.length < size) planes = { luma: new Float32Array(size), scratch: new Float32Array(size) };
  return planes;
}

function transform(pixels: PdqPixels): { coefficients: Float64Array; quality: number } {
  const { width, height } = pixels;
  const { luma, scratch } = planesFor(width * height);
  luminance(pixels, luma);
  const alongRows = Math.ceil(width / WINDOW_DIVISOR);
  const alongColumns = Math.ceil(height / WINDOW_DIVISOR);
  for (let pass = 0; pass < 2; pass += 1) {
    for (let row = 0; row < height; row += 1) boxBlur(luma, scratch, row * width, 1, width, alongRows);
    for (let column = 0; column < width; column += 1) boxBlur(scratch, luma, column, width, height, alongColumns);
  }
  const cells = new Float64Array(CELLS * CELLS);
  for (let i = 0; i < CELLS; i += 1) {
    const row = Math.floor(((i + 0.5) * height) / CELLS);
    for (let j = 0; j < CELLS; j += 1) cells[i * CELLS + j] = luma[row * width + Math.floor(((j + 0.5) * width) / CELLS)] ?? 0;
  }
  return { coefficients: dct(cells), quality: qualityOf(cells) };
}

/** Luminance (Y of YUV) of each pixel into `luma`; a grey sample is its own, alpha is not looked at. */
function luminance({ data, width, height, channels }: PdqPixels, luma: Float32Array): void {
  const count = width * height;
  if (channels < 3) {
    for (let pixel = 0, at = 0; pixel < count; pixel += 1, at += channels) luma[pixel] = data[at] ?? 0;
    return;
  }
  for (let pixel = 0, at = 0; pixel < count; pixel += 1, at += channels) {
    luma[pixel] = 0.299 * (data[at] ?? 0) + 0.587 * (data[at + 1] ?? 0) + 0.114 * (data[at + 2] ?? 0);
  }
}

/**
 * One pass of a box filter along a line of `length` samples `stride` apart: each output the mean of the window around
 * it (`window` samples, from `window - half` before to `half - 1` after, `half` = window / 2 + 1), cut at the ends.
 */
function boxBlur(input: Float32Array, output: Float32Array, start: number, stride: number, length: number, window: number) {
  if (window === 1) {
    for (let k = 0, at = start; k < length; k += 1, at += stride) output[at] = input[at] ?? 0;
    return;
  }
  const half = Math.floor((window + 2) / 2);
  const before = window - half;
  const after = half - 1;
  let sum = 0;
  let count = 0;
  // the first window: the samples up to `after` past the first
  for (let k = 0; k < Math.min(after, length); k += 1) {
    sum += input[start + k * stride] ?? 0;
    count += 1;
  }
  for (let k = 0; k < length; k += 1) {
    const entering = k + after;
    if (entering < length) {
      sum += input[start + entering * stride] ?? 0;
      count += 1;
    }
    const leaving = k - before - 1;
    if (leaving >= 0) {
      sum -= input[start + leaving * stride] ?? 0;
      count -= 1;
    }
    output[start + k * stride] = sum / count;
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
function toHex(
  coefficients: Float64Array,
  above = [...coefficients].sort((x, y) => x - y)[coefficients.length / 2 - 1] ?? 0,
): PdqHash {
  const median = above;
  const words: string[] = [];
  for (let i = FREQUENCIES - 1; i >= 0; i -= 1) {
    let word = 0;
    for (let j = 0; j < FREQUENCIES; j += 1) if ((coefficients[i * FREQUENCIES + j] ?? 0) > median) word |= 1 << j;
    words.push(word.toString(16).padStart(4, '0'));
  }
  return words.join('');
}
