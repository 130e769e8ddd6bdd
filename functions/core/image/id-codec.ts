import { sha256Hex } from '../hashes';

const BASE_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const RADIX = BASE_ALPHABET.length;

/** How new ids are made: drawn at random (unguessable), or Chevereto's counter (`ID_SCHEME`). */
export type IdScheme = 'random' | 'sequential';

/** Chevereto's id codec: ids encoded in base 62 over an alphabet shuffled by the sha256 of a secret salt. */
export class IdCodec {
  private readonly alphabet: string;
  private readonly digitOf: Map<string, number>;

  constructor(
    salt: string,
    private readonly padding: number,
  ) {
    if (!Number.isSafeInteger(padding) || padding < 0) throw new RangeError('padding must be a non-negative integer');
    this.alphabet = shuffleAlphabet(salt);
    this.digitOf = new Map([...this.alphabet].map((char, digit) => [char, digit]));
  }

  /** Encodes a positive integer id. */
  encode(id: number): string {
    if (!Number.isSafeInteger(id) || id < 1) throw new RangeError(`id must be a positive integer, got ${id}`);
    let x = BigInt(id) * BigInt(this.padding > 0 ? this.padding : 1);
    let out = '';
    do {
      out = this.alphabet[Number(x % BigInt(RADIX))] + out;
      x /= BigInt(RADIX);
    } while (x > 0n);
    return out;
  }

  /** Decodes an encoded id; undefined when the text is not the canonical encoding of a valid id. */
  decode(encoded: string): number | undefined {
    if (encoded.length === 0 || encoded.length > 16) return undefined;
    let x = 0n;
    for (const char of encoded) {
      const digit = this.digitOf.get(char);
      if (digit === undefined) return undefined;
      x = x * BigInt(RADIX) + BigInt(digit);
    }
    const padding = BigInt(this.padding > 0 ? this.padding : 1);
    if (x % padding !== 0n) return undefined;
    const id = x / padding;
    if (id < 1n || id > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
    // Leading zero digits would give a second spelling of the same id; only the canonical one is valid.
    return this.encode(Number(id)) === encoded ? Number(id) : undefined;
  }
}

function shuffleAlphabet(salt: string): string {
  const hash = sha256Hex(salt);
  const pairs = [...BASE_ALPHABET].map((char, n) => ({ char, h: hash.charAt(n) }));
  pairs.sort((a, b) => (a.h === b.h ? compareBytes(a.char, b.char) : compareBytes(b.h, a.h)));
  return pairs.map((pair) => pair.char).join('');
}

function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The codec of the deployment's salt (read from the settings), made once per salt. */
export class IdCodecs {
  private cached: { salt: string; codec: IdCodec } | undefined;

  constructor(
    private readonly salt: () => Promise<string>,
    private readonly padding: number,
  ) {}

  async codec(): Promise<IdCodec> {
    const salt = await this.salt();
    if (this.cached?.salt !== salt) this.cached = { salt, codec: new IdCodec(salt, this.padding) };
    return this.cached.codec;
  }
}
