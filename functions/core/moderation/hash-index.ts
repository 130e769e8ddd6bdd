/**
 * A list of 256-bit hashes (PDQ) searched by Hamming distance: multi-index hashing, as Meta's reference does it
 * (Norouzi, Punjani and Fleet, "Fast search in Hamming space with multi-index hashing"), with a filter of its own.
 *
 * The 256 bits are cut into 8 pairs of 16-bit chunks. Two hashes at most 31 bits apart differ in at most 3 bits of
 * some pair (8 pairs of 4 would make 32): in at most 1 of one of its chunks, and in at most 3 less that many of the
 * other. So each chunk of a query is looked up as it is and with each of its bits flipped (17 lookups), and of the
 * hashes found there, those whose partner chunk is too far are passed over unread (12 of its bits are kept beside
 * each); only the few left, about one in 60, are compared whole. The filter matters: a hash read whole is a read from
 * anywhere in tens of megabytes, a few hundred nanoseconds on the machines measured.
 *
 * Memory, for N hashes (at most 2^20): the hashes, 32 bytes each; for each chunk, the hashes in the order of its
 * value, 4 bytes each (the row in 20 bits, 12 of the partner chunk), and where each value starts (256 KB). The rows
 * are kept in the order of their first chunk, which then needs no order of its own: 92 bytes a hash, and 4 MB
 * (`docs/moderation.md`, "Block lists at scale").
 */
import { buildTables, INDEX_LAYOUT } from './hash-index-build';

const { WORDS, CHUNKS, ROW_BITS, PARTNER_SHIFT, PARTNER_MASK } = INDEX_LAYOUT;

/** Bytes a hash: 64 hex digits. */
export const HASH_BYTES = 32;
/** How many bits each value of a partner chunk's kept top has set. */
const PARTNER_BITS = Uint8Array.from({ length: PARTNER_MASK + 1 }, (_, top) => bitCount(top));
/** The most bits apart this index finds every match at: 3 bits a pair of chunks, under 4. */
export const MAX_INDEXED_DISTANCE = 31;
/** The most hashes an index takes (rows numbered in 20 bits). */
export const MAX_INDEXED_HASHES = 1 << ROW_BITS;

/** The 16-bit chunk `chunk` of a hash held as eight 32-bit words (the first chunk is the hex form's first 4 digits). */
function chunkOf(words: Uint32Array, base: number, chunk: number): number {
  const word = words[base + (chunk >> 1)] ?? 0;
  return chunk & 1 ? word & 0xffff : word >>> 16;
}

/** How many bits of a 32-bit word are set. */
export function bitCount(value: number): number {
  let v = value - ((value >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** A hash's eight 32-bit words, from its 64 hex digits. */
export function hashWords(hex: string): Uint32Array {
  const words = new Uint32Array(WORDS);
  for (let word = 0; word < WORDS; word += 1) words[word] = Number.parseInt(hex.slice(word * 8, word * 8 + 8), 16);
  return words;
}

/** Packed hashes (32 bytes each, the hex form's bytes in order) from their hex forms. */
export function packHashes(hexes: readonly string[]): Uint8Array {
  const packed = new Uint8Array(hexes.length * HASH_BYTES);
  hexes.forEach((hex, row) => packed.set(Buffer.from(hex, 'hex'), row * HASH_BYTES));
  return packed;
}

/** The hex form of the packed hash at `row`. */
export function hashAt(packed: Uint8Array, row: number): string {
  return Buffer.from(packed.subarray(row * HASH_BYTES, (row + 1) * HASH_BYTES)).toString('hex');
}

/** A check's settings and working arrays (`HashIndex.anyWithin`). */
interface Search {
  /** The bits a pair of chunks may differ in. */
  pairBits: number;
  /** How many of a chunk's bits are flipped for its lookups (none when a pair may differ in under 2). */
  flips: number;
  /** How many lookups a query makes: each chunk as it is, and with each bit flipped. */
  lookups: number;
  /** Each lookup's first entry (or the first not yet taken) and the one after its last. */
  bounds: Uint32Array;
  /** The rows left to compare whole, a batch at a time. */
  rows: Uint32Array;
  /** How many of `rows` this batch holds. */
  found: number;
}

/** The most rows compared whole in one batch: crowded buckets take several, and the array stays small. */
const ROWS_A_BATCH = 4096;

/**
 * The working arrays of every check, made once: a check runs to its end without a turn of the event loop, so no two
 * use them at once. Each chunk is looked up as it is and with each of its 16 bits flipped.
 */
const SEARCH: Search = {
  pairBits: 0,
  flips: 0,
  lookups: 0,
  bounds: new Uint32Array(CHUNKS * 17 * 2),
  rows: new Uint32Array(ROWS_A_BATCH),
  found: 0,
};

/** What the reads ahead read, kept so that the compiler cannot leave them out as unused. */
const readAhead = new Int32Array(1);

export class HashIndex {
  static readonly EMPTY = new HashIndex(new Uint32Array(0), [], []);

  private constructor(
    private readonly words: Uint32Array,
    /** Per chunk: where the entries of each of its values start (65,537 offsets). */
    private readonly starts: readonly Uint32Array[],
    /**
     * Per chunk: its entries in the order of its value, each a row and the top of its partner chunk; none for the
     * first chunk when the rows are in its order (the row is then the entry's place).
     */
    private readonly entries: ReadonlyArray<Uint32Array | undefined>,
  ) {}

  /**
   * The index of packed hashes (`packHashes`'s form, each once); its build lets the event loop turn between its steps
   * (`buildTables`).
   */
  static async build(packed: Uint8Array): Promise<HashIndex> {
    const size = packed.length / HASH_BYTES;
    if (!Number.isInteger(size)) throw new RangeError('packed hashes are 32 bytes each');
    if (size > MAX_INDEXED_HASHES) throw new RangeError(`an index holds at most ${MAX_INDEXED_HASHES} hashes`);
    if (size === 0) return HashIndex.EMPTY;
    // the hashes' bytes as 32-bit words in the order of the machines Node runs on here (little-endian: x86-64, arm64)
    const copy = new Uint8Array(packed);
    Buffer.from(copy.buffer, copy.byteOffset, copy.byteLength).swap32();
    const words = new Uint32Array(copy.buffer, copy.byteOffset, size * WORDS);
    const { starts, entries } = await buildTables(words);
    return new HashIndex(words, starts, entries);
  }

  get size(): number {
    return this.words.length / WORDS;
  }

  /** The bytes the index holds. */
  get bytes(): number {
    const arrays = [this.words, ...this.starts, ...this.entries];
    return arrays.reduce((sum, one) => sum + (one?.byteLength ?? 0), 0);
  }

  /**
   * Whether any of these hashes (hex) is at most `distance` bits (up to `MAX_INDEXED_DISTANCE`) from one held.
   *
   * Each query in three passes, each of reads that do not wait for one another, so that the memory serves them
   * together rather than one after the other (`docs/moderation.md`, "Block lists at scale"): where each of its buckets
   * begins and ends, with a read of its first and last entry; the rows whose partner chunk is near enough, with a read
   * of each one's hash; those hashes compared whole. The last two go a batch of rows at a time.
   */
  anyWithin(hexes: readonly string[], distance: number): boolean {
    if (distance > MAX_INDEXED_DISTANCE) throw new RangeError(`the index finds matches up to ${MAX_INDEXED_DISTANCE} bits`);
    if (this.size === 0) return false;
    // the bits a pair of chunks may differ in (some pair does no more), split between the chunk and its partner
    const pairBits = Math.floor(distance / (CHUNKS / 2));
    const search = SEARCH;
    search.pairBits = pairBits;
    search.flips = pairBits >= 2 ? 16 : 0;
    search.lookups = CHUNKS * (search.flips + 1);
    for (const hex of hexes) {
      const query = hashWords(hex);
      this.findBuckets(query, search);
      for (let next = 0; next < search.lookups;) {
        next = this.nearPartners(query, search, next);
        if (this.anyRowWithin(query, search, distance)) return true;
      }
    }
    return false;
  }

  /** Where each bucket the query looks in begins and ends, into `search.bounds`. */
  private findBuckets(query: Uint32Array, search: Search): void {
    let at = 0;
    for (let chunk = 0; chunk < CHUNKS; chunk += 1) {
      const starts = this.starts[chunk]!;
      const value = chunkOf(query, 0, chunk);
      for (let flip = -1; flip < search.flips; flip += 1, at += 2) {
        const looked = flip < 0 ? value : value ^ (1 << flip);
        search.bounds[at] = starts[looked]!;
        search.bounds[at + 1] = starts[looked + 1]!;
      }
    }
    let touched = 0;
    at = 0;
    for (let chunk = 0; chunk < CHUNKS; chunk += 1) {
      const order = this.entries[chunk];
      for (let flip = -1; flip < search.flips; flip += 1, at += 2) {
        const begin = search.bounds[at]!;
        const end = search.bounds[at + 1]!;
        if (begin === end) continue;
        touched ^= order ? order[begin]! ^ order[end - 1]! : this.words[begin * WORDS]! ^ this.words[(end - 1) * WORDS]!;
      }
    }
    readAhead[0] = (readAhead[0] ?? 0) ^ touched;
  }

  /**
   * From lookup `from` on, the rows in its buckets whose partner chunk is at most the bits left from the query's (the
   * top 12 bits kept beside each row; the whole chunk where the rows are in the chunk's order), into `search.rows`
   * until it is full; the lookup to go on from (a bucket left half taken starts where it was left).
   */
  private nearPartners(query: Uint32Array, search: Search, from: number): number {
    const { rows, bounds } = search;
    const perChunk = search.flips + 1;
    let found = 0;
    for (let chunk = Math.floor(from / perChunk); chunk < CHUNKS; chunk += 1) {
      const order = this.entries[chunk];
      const partner = chunkOf(query, 0, chunk ^ 1);
      const partnerTop = partner >>> PARTNER_SHIFT;
      const first = chunk * perChunk;
      for (let lookup = Math.max(from, first); lookup < first + perChunk; lookup += 1) {
        // the first lookup of a chunk is its value as it is, with all the pair's bits left to its partner
        const partnerBits = lookup === first ? search.pairBits : search.pairBits - 1;
        const end = bounds[2 * lookup + 1]!;
        let at = bounds[2 * lookup]!;
        // each entry adds one row at most: as many as there is room for
        const stop = Math.min(end, at + rows.length - found);
        if (order === undefined) {
          for (; at < stop; at += 1)
            if (bitCount(chunkOf(this.words, at * WORDS, chunk ^ 1) ^ partner) <= partnerBits) rows[found++] = at;
        } else {
          for (; at < stop; at += 1) {
            const kept = order[at]!;
            if (PARTNER_BITS[(kept ^ partnerTop) & PARTNER_MASK]! <= partnerBits) rows[found++] = kept >>> (32 - ROW_BITS);
          }
        }
        if (at < end) {
          bounds[2 * lookup] = at;
          search.found = found;
          return lookup;
        }
      }
    }
    search.found = found;
    return search.lookups;
  }

  /** Whether any of this batch's rows is within `distance` of the query: each one's hash read first, then compared. */
  private anyRowWithin(query: Uint32Array, search: Search, distance: number): boolean {
    const { rows, found } = search;
    let touched = 0;
    for (let one = 0; one < found; one += 1) touched ^= this.words[rows[one]! * WORDS]!;
    readAhead[0] = (readAhead[0] ?? 0) ^ touched;
    for (let one = 0; one < found; one += 1) if (this.rowWithin(rows[one]!, query, distance)) return true;
    return false;
  }

  /** Whether the hash at `row` is within `distance` of the query. */
  private rowWithin(row: number, query: Uint32Array, distance: number): boolean {
    const words = this.words;
    const base = row * WORDS;
    let bits = 0;
    for (let word = 0; word < WORDS && bits <= distance; word += 1) bits += bitCount(words[base + word]! ^ query[word]!);
    return bits <= distance;
  }
}
