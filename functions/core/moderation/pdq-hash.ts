import { bitCount } from './hash-index';

/**
 * PDQ hashes as values: their form, their distance, their quality's cut-off, and their turned and mirrored forms. What
 * makes a hash from pixels is the fingerprint's (`functions/fingerprint/pdq.ts`); `docs/moderation.md` has the
 * measurements and the threshold.
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

/** Frequencies a side of the 16x16 coefficients a hash has a bit for. */
export const PDQ_FREQUENCIES = 16;

/** A hash's bits from its 16x16 coefficients (`hashOfCoefficients`), and in its eight turned and mirrored forms. */
export function turnedHashes(coefficients: Float64Array): PdqHash[] {
  return DIHEDRAL.map((way) => hashOfCoefficients(way === 'original' ? coefficients : turned(coefficients, way)));
}

/**
 * A stored hash's eight turned and mirrored forms, from its bits alone (`DIHEDRAL`'s order): each bit moved and
 * flipped as its coefficient would be, taking the median for zero. Within 18 bits of the forms made from the
 * coefficients on the measured photos (`docs/moderation.md`): for finding stored pictures, never for an upload's check.
 */
export function turnedOfHash(hash: PdqHash): PdqHash[] {
  const bit = (i: number, j: number) => (Number.parseInt(hash.slice((15 - i) * 4, (16 - i) * 4), 16) >> j) & 1;
  const signs = new Float64Array(PDQ_FREQUENCIES * PDQ_FREQUENCIES);
  for (let i = 0; i < PDQ_FREQUENCIES; i += 1)
    for (let j = 0; j < PDQ_FREQUENCIES; j += 1) signs[i * PDQ_FREQUENCIES + j] = bit(i, j) ? 1 : -1;
  return DIHEDRAL.map((way) => hashOfCoefficients(way === 'original' ? signs : turned(signs, way), 0));
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
 * The coefficients of the picture turned or mirrored: a DCT basis function is even or odd about the centre, so each
 * way is a transpose and sign changes (odd index: the function is symmetric, as the basis starts at frequency 1).
 */
function turned(a: Float64Array, way: (typeof DIHEDRAL)[number]): Float64Array {
  const b = new Float64Array(a.length);
  for (let i = 0; i < PDQ_FREQUENCIES; i += 1) {
    for (let j = 0; j < PDQ_FREQUENCIES; j += 1) {
      const value = a[i * PDQ_FREQUENCIES + j] ?? 0;
      const iOdd = (i & 1) === 1;
      const jOdd = (j & 1) === 1;
      const sumOdd = ((i + j) & 1) === 1;
      const same = i * PDQ_FREQUENCIES + j;
      const transposed = j * PDQ_FREQUENCIES + i;
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
 * The bits of 16x16 coefficients, as hex: bit `16 i + j` is set when coefficient (i, j) is above the median (the
 * 128th smallest of 256), or above `above` when given; 16-bit words, one per row i, written from the last to the first.
 */
export function hashOfCoefficients(
  coefficients: Float64Array,
  above = coefficients.slice().sort()[coefficients.length / 2 - 1] ?? 0,
): PdqHash {
  const words: string[] = [];
  for (let i = PDQ_FREQUENCIES - 1; i >= 0; i -= 1) {
    let word = 0;
    for (let j = 0; j < PDQ_FREQUENCIES; j += 1) if ((coefficients[i * PDQ_FREQUENCIES + j] ?? 0) > above) word |= 1 << j;
    words.push(word.toString(16).padStart(4, '0'));
  }
  return words.join('');
}
