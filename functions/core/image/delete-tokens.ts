import { sha256Hex } from '../hashes';
import type { RandomSource } from '../ports';

const TOKEN_HEX_CHARS = 48;
const TOKEN_PATTERN = /^[0-9a-f]{48}$/;

/** Delete links carry 48 random hex characters (192 bits); records keep only their sha256. */
export const deleteTokens = {
  make(random: RandomSource): { token: string; hash: string } {
    const token = random.hex(TOKEN_HEX_CHARS);
    return { token, hash: sha256Hex(token) };
  },
  /** The hash a record holds for a token; undefined for text that cannot be a token. */
  hashOf(token: string): string | undefined {
    return TOKEN_PATTERN.test(token) ? sha256Hex(token) : undefined;
  },
};
