import { randomBytes } from 'node:crypto';
import type { RandomSource } from '../core/ports';

const SAFE_INTEGER_MASK = BigInt(Number.MAX_SAFE_INTEGER); // 2^53 - 1: the low 53 bits

/** Random values from the operating system's CSPRNG. */
export const cryptoRandom: RandomSource = {
  hex: (chars) =>
    randomBytes(Math.ceil(chars / 2))
      .toString('hex')
      .slice(0, chars),
  safeInteger: () => {
    for (;;) {
      // 64 random bits, the low 53 kept: uniform over 0 .. 2^53 - 1; 0 is drawn again
      const value = Number(randomBytes(8).readBigUInt64BE(0) & SAFE_INTEGER_MASK);
      if (value > 0) return value;
    }
  },
};
