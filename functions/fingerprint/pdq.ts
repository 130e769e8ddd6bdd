import { hashOfCoefficients, turnedHashes, type PdqHash } from '../core/moderation/pdq-hash';
import { wholeArea, type PdqArea, type Plane } from './planes';

export { wholeArea, type PdqArea } from './planes';

/**
 * PDQ, the 256-bit perceptual hash Meta published for matching pictures (its hashes are what industry hash-sharing
 * lists hold): the picture's luminance blurred and sampled down to 64x64, its 16x16 lowest DCT frequencies but the
 * constant one, and a bit per frequency: above their median or not. Re-encodes, resizes and small edits move few bits;
 * different pictures differ in about half (`docs/moderation.md` has the measurements and the threshold).
 *
 * Written from the published algorithm (Meta's "The TMK+PDQF and PDQ hashing algorithms", and its reference
 * implementations' conventions: luminance weights, the tent filter of two box passes, sampling at cell centres, the
 * hex form): a hash made here compares with one made by Meta's tools. Measured on Meta's reference vectors
 * (`test/unit/fingerprint/pdq-reference.test.ts`): 2 to 8 bits from the reference's hashes from the whole decode, 2 to 10
 * from the service's copy for the fingerprint.
 */

/** What the hash of an area is made of: its 16x16 coefficients, and its quality. */
export interface PdqOutcome {
  coefficients: Float64Array;
  /** 0 to 100: how much detail the hash rests on (a flat picture hashes poorly); the reference's measure. */
  quality: number;
}

export interface PdqResult {
  hash: PdqHash;
  quality: number;
  /** The hashes of the picture turned and mirrored each of the eight ways (`DIHEDRAL`'s order: the first is `hash`). */
  turned: PdqHash[];
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

/** The PDQ hash of a luminance plane (or an `area` of it), its quality, and its turned and mirrored forms. */
export function pdqHash(plane: Plane, area?: PdqArea): PdqResult {
  const [outcome] = pdqOf(plane, [area ?? wholeArea(plane)]);
  const turned = turnedHashes(outcome?.coefficients ?? new Float64Array(FREQUENCIES * FREQUENCIES));
  return { hash: turned[0] ?? '', quality: outcome?.quality ?? 0, turned };
}

/** The hash of an outcome as it is (`hashOfCoefficients`). */
export function hashOf(outcome: PdqOutcome): PdqHash {
  return hashOfCoefficients(outcome.coefficients);
}

/**
 * The coefficients and quality of each area of a plane. Areas of the same columns share the pass along their rows
 * (the whole picture's, and its crops from the top or the bottom, read each row once for all of them).
 */
export function pdqOf(plane: Plane, areas: readonly PdqArea[]): PdqOutcome[] {
  return cellsOf(plane, areas).map((cells) => ({ coefficients: dct(cells), quality: qualityOf(cells) }));
}

/**
 * The 64x64 samples the hash is made from: the luminance of the plane (or of an `area` of it, as if cut out), blurred
 * by the reference's filter (two passes of a box along the rows and along the columns, cut at the edges), read at the
 * cells' centres.
 */
export function pdqCells(plane: Plane, area: PdqArea = wholeArea(plane)): Float64Array {
  return cellsOf(plane, [area])[0] ?? new Float64Array(CELLS * CELLS);
}

function cellsOf(plane: Plane, areas: readonly PdqArea[]): Float64Array[] {
  const taps = new Map<number, Taps>();
  const tapsOf = (length: number): Taps => {
    let known = taps.get(length);
    if (!known) taps.set(length, (known = tentTaps(length, Math.ceil(length / WINDOW_DIVISOR))));
    return known;
  };
  const cellsByArea: Float64Array[] = new Array<Float64Array>(areas.length);
  const byColumns = new Map<string, number[]>();
  areas.forEach((area, index) => {
    const key = `${area.left},${area.width}`;
    byColumns.set(key, [...(byColumns.get(key) ?? []), index]);
  });
  for (const indices of byColumns.values()) {
    const first = areas[indices[0] ?? 0];
    if (!first) continue;
    const across = tapsOf(first.width);
    // the rows any area of these columns reads, each row's 64 samples along it computed once
    const reach = indices.map((index) => {
      const area = areas[index] ?? first;
      const down = tapsOf(area.height);
      const from = area.top + down.first[0]!;
      return { area, down, from, to: area.top + down.first[CELLS - 1]! + down.count[CELLS - 1]! };
    });
    const firstRow = Math.min(...reach.map((one) => one.from));
    const lastRow = Math.max(...reach.map((one) => one.to));
    const alongRows = new Float64Array((lastRow - firstRow) * CELLS);
    for (let row = firstRow; row < lastRow; row += 1)
      alongRow(plane.values, row * plane.width + first.left, across, alongRows, (row - firstRow) * CELLS);
    reach.forEach(({ area, down }, k) => {
      cellsByArea[indices[k] ?? 0] = downColumns(alongRows, (area.top - firstRow) * CELLS, down);
    });
  }
  return cellsByArea;
}

/**
 * Where each of the 64 samples along a line of `length` reads, and with what weights: two passes of a box of `window`
 * samples (from `window - half` before to `half - 1` after, `half` = window / 2 + 1), each output the mean of the
 * samples its box covers inside the line. Sample `s` reads `count[s]` samples from `first[s]`, weighted by
 * `weights[s * span ...]`. Each sample is a weighted sum of the luminance around it (the filter is linear and
 * separable), so only the 64 samples of each row, then the 64 of each column, are computed, not the whole blurred
 * picture the reference makes: the same values to float rounding.
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
      for (let x = inner.low; x <= inner.high; x += 1) weights[s * span + x - low]! += weight;
    }
  }
  return { first, count, span, weights };
}

/** The 64 samples along one row of the plane, from `from`, into `into` onwards. */
function alongRow(values: Float32Array, from: number, taps: Taps, out: Float64Array, into: number): void {
  const { first, count, span, weights } = taps;
  for (let s = 0; s < CELLS; s += 1) {
    let sum = 0;
    const at = from + first[s]!;
    const base = s * span;
    for (let t = 0, n = count[s]!; t < n; t += 1) sum += weights[base + t]! * values[at + t]!;
    out[into + s] = sum;
  }
}

/** The 64x64 cells: the samples along the rows, read down each of the 64 columns (rows of 64, from `offset`). */
function downColumns(alongRows: Float64Array, offset: number, taps: Taps): Float64Array {
  const { first, count, span, weights } = taps;
  const cells = new Float64Array(CELLS * CELLS);
  for (let i = 0; i < CELLS; i += 1) {
    const base = i * span;
    const row = offset + first[i]! * CELLS;
    for (let t = 0, n = count[i]!; t < n; t += 1) {
      const weight = weights[base + t]!;
      const from = row + t * CELLS;
      for (let j = 0; j < CELLS; j += 1) cells[i * CELLS + j]! += weight * alongRows[from + j]!;
    }
  }
  return cells;
}

/** The reference's quality: significant steps between neighbouring cells, summed and scaled to at most 100. */
function qualityOf(cells: Float64Array): number {
  let steps = 0;
  const step = (a: number, b: number) => Math.abs(Math.trunc(((a - b) * 100) / 255));
  for (let i = 0; i < CELLS; i += 1) {
    for (let j = 0; j < CELLS; j += 1) {
      const here = cells[i * CELLS + j]!;
      if (i + 1 < CELLS) steps += step(here, cells[(i + 1) * CELLS + j]!);
      if (j + 1 < CELLS) steps += step(here, cells[i * CELLS + j + 1]!);
    }
  }
  return Math.min(100, Math.trunc(steps / 90));
}

/** The 16x16 DCT coefficients 1..16 of the 64x64 cells: D A Dt, as (D A) Dt. */
function dct(cells: Float64Array): Float64Array {
  const half = new Float64Array(FREQUENCIES * CELLS);
  for (let u = 0; u < FREQUENCIES; u += 1) {
    for (let i = 0; i < CELLS; i += 1) {
      const d = DCT[u * CELLS + i]!;
      for (let j = 0; j < CELLS; j += 1) half[u * CELLS + j]! += d * cells[i * CELLS + j]!;
    }
  }
  const coefficients = new Float64Array(FREQUENCIES * FREQUENCIES);
  for (let u = 0; u < FREQUENCIES; u += 1) {
    for (let v = 0; v < FREQUENCIES; v += 1) {
      let sum = 0;
      for (let j = 0; j < CELLS; j += 1) sum += half[u * CELLS + j]! * DCT[v * CELLS + j]!;
      coefficients[u * FREQUENCIES + v] = sum;
    }
  }
  return coefficients;
}
