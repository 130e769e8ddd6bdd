/**
 * The tables of a `HashIndex` (`hash-index.ts`), built from its hashes: how the 256 bits are cut into chunks, and for
 * each chunk where each of its values starts and the rows in the order of its value (`docs/moderation.md`, "Block
 * lists at scale").
 */
import { nextTurn } from '../turns';

/** 32-bit words a hash. */
const WORDS = 8;
/** 16-bit chunks a hash, in 8 pairs (a word each). */
const CHUNKS = 16;
const VALUES = 1 << 16;
/** Bits of a row number: an index holds at most 2^20 hashes. */
const ROW_BITS = 20;
/** How far the partner chunk is shifted to keep its top 12 bits beside a row. */
const PARTNER_SHIFT = 16 - (32 - ROW_BITS);
const PARTNER_MASK = (1 << (32 - ROW_BITS)) - 1;

/**
 * The layout's numbers, for the search to take as constants of its own module (an imported binding is read through
 * the module object at each use where the code runs untranspiled to one bundle, as under tsx and jest).
 */
export const INDEX_LAYOUT = { WORDS, CHUNKS, ROW_BITS, PARTNER_SHIFT, PARTNER_MASK } as const;

/** An index's tables, per chunk. */
export interface IndexTables {
  /** Where the entries of each of its values start (65,537 offsets). */
  starts: Uint32Array[];
  /**
   * Its entries in the order of its value, each a row and the top of its partner chunk; none for a chunk the rows are
   * already in the order of (the row is then the entry's place).
   */
  entries: Array<Uint32Array | undefined>;
}

/** How many hashes have each value of a chunk, as where each value starts; and whether the rows are in its order. */
interface ChunkValues {
  starts: Uint32Array;
  ordered: boolean;
}

/**
 * Word `pair` of every hash (its two chunks) into `column`, read once for both, and the values of each of the two: the
 * passes of the sort then read 4 bytes a hash in order, not a word of each 32 bytes (every cache line of the hashes)
 * each time.
 */
function pairColumn(words: Uint32Array, pair: number, column: Uint32Array): [ChunkValues, ChunkValues] {
  const firsts = new Uint32Array(VALUES + 1);
  const seconds = new Uint32Array(VALUES + 1);
  let firstOrdered = true;
  let secondOrdered = true;
  let previous = 0;
  for (let row = 0; row < column.length; row += 1) {
    const word = words[row * WORDS + pair]!;
    column[row] = word;
    firsts[(word >>> 16) + 1]! += 1;
    seconds[(word & 0xffff) + 1]! += 1;
    firstOrdered &&= word >>> 16 >= previous >>> 16;
    secondOrdered &&= (word & 0xffff) >= (previous & 0xffff);
    previous = word;
  }
  for (let value = 0; value < VALUES; value += 1) {
    firsts[value + 1]! += firsts[value]!;
    seconds[value + 1]! += seconds[value]!;
  }
  return [
    { starts: firsts, ordered: firstOrdered },
    { starts: seconds, ordered: secondOrdered },
  ];
}

/** A chunk of a pair's word: the first (high) half or the second. */
const half = (word: number, first: boolean): number => (first ? word >>> 16 : word & 0xffff);

/**
 * A chunk's entries in the order of its value: a radix sort by its high byte (each entry written to one of 256 places:
 * a single pass to 65,536 places writes all over the array, several times slower at a million hashes), then by its
 * low byte within each high byte's place, a few thousand entries that stay in the cache.
 */
function orderByChunk(
  column: Uint32Array,
  first: boolean,
  starts: Uint32Array,
  sorting: { entries: Uint32Array; lows: Uint8Array },
): Uint32Array {
  const size = column.length;
  const next = new Uint32Array(256);
  for (let high = 0; high < 256; high += 1) next[high] = starts[high << 8] ?? 0;
  for (let row = 0; row < size; row += 1) {
    const word = column[row] ?? 0;
    const value = half(word, first);
    const at = next[value >>> 8] ?? 0;
    next[value >>> 8] = at + 1;
    sorting.entries[at] = ((row << (32 - ROW_BITS)) | (half(word, !first) >>> PARTNER_SHIFT)) >>> 0;
    sorting.lows[at] = value & 0xff;
  }
  const order = new Uint32Array(size);
  for (let high = 0; high < 256; high += 1) {
    for (let low = 0; low < 256; low += 1) next[low] = starts[(high << 8) | low] ?? 0;
    const end = starts[(high + 1) << 8] ?? 0;
    for (let from = starts[high << 8] ?? 0; from < end; from += 1) {
      const low = sorting.lows[from] ?? 0;
      const at = next[low] ?? 0;
      next[low] = at + 1;
      order[at] = sorting.entries[from] ?? 0;
    }
  }
  return order;
}

/**
 * The tables of these hashes (eight 32-bit words each, in the machine's order). The build lets the event loop turn
 * after each pair's column and each chunk's order (tens of milliseconds each at a million hashes), so requests
 * meanwhile are answered.
 */
export async function buildTables(words: Uint32Array): Promise<IndexTables> {
  const size = words.length / WORDS;
  const starts: Uint32Array[] = [];
  const entries: Array<Uint32Array | undefined> = [];
  const sorting = { entries: new Uint32Array(size), lows: new Uint8Array(size) };
  const column = new Uint32Array(size);
  for (let pair = 0; pair < CHUNKS / 2; pair += 1) {
    await nextTurn();
    const chunks = pairColumn(words, pair, column);
    for (const [at, { starts: counts, ordered }] of chunks.entries()) {
      await nextTurn();
      starts.push(counts);
      entries.push(ordered ? undefined : orderByChunk(column, at === 0, counts, sorting));
    }
  }
  return { starts, entries };
}
