import { randomBytes } from 'node:crypto';
import {
  HASH_BYTES,
  HashIndex,
  hashAt,
  hashWords,
  MAX_INDEXED_DISTANCE,
  packHashes,
} from '../../../functions/core/moderation/hash-index';
import { pdqDistance } from '../../../functions/core/moderation/pdq-hash';

/** The hash with these bits flipped (bit 0: the first hex digit's highest). */
function flipped(hex: string, bits: Iterable<number>): string {
  const bytes = Buffer.from(hex, 'hex');
  for (const bit of bits) bytes[bit >> 3] = (bytes[bit >> 3] ?? 0) ^ (0x80 >> (bit & 7));
  return bytes.toString('hex');
}

/** `count` of a chunk's 16 bits (chunk 0: the first four hex digits), from its first. */
const inChunk = (chunk: number, count: number): number[] => Array.from({ length: count }, (_, at) => chunk * 16 + at);

/** Random distinct bits of the 256. */
function randomBits(count: number): number[] {
  const bits = new Set<number>();
  while (bits.size < count) bits.add(randomBytes(1)[0] ?? 0);
  return [...bits];
}

const sorted = (hexes: string[]): string[] => [...hexes].sort();

/** For each query, the least distance to a held hash: every one compared, bit by bit (pdqDistance takes seconds). */
function nearestDistances(held: readonly string[], queries: readonly string[]): number[] {
  const ones = (word: number): number => {
    let count = 0;
    for (let rest = word >>> 0; rest !== 0; rest &= rest - 1) count += 1;
    return count;
  };
  const heldWords = held.map(hashWords);
  return queries.map((query) => {
    const words = hashWords(query);
    return Math.min(...heldWords.map((hash) => hash.reduce((sum, word, at) => sum + ones(word ^ (words[at] ?? 0)), 0)));
  });
}

describe('HashIndex', () => {
  const held = Array.from({ length: 5_000 }, () => randomBytes(HASH_BYTES).toString('hex'));
  let inOrder: HashIndex;
  let unordered: HashIndex;

  beforeAll(async () => {
    inOrder = await HashIndex.build(packHashes(sorted(held)));
    unordered = await HashIndex.build(packHashes(held));
  });

  it('holds the hashes it was built from, and nothing when built from none', async () => {
    expect([inOrder.size, unordered.size]).toEqual([5_000, 5_000]);
    expect((await HashIndex.build(new Uint8Array(0))).anyWithin([held[0] ?? ''], 31)).toBe(false);
    await expect(HashIndex.build(new Uint8Array(33))).rejects.toThrow('32 bytes each');
  });

  // where the 31 bits differ decides which chunk finds the hash: every shape the pigeonhole argument allows
  it.each([
    [
      'spread evenly, 3 or 4 a pair of chunks (the one pair of 3 finds it)',
      [...Array(8).keys()].flatMap((pair) => [...inChunk(2 * pair, 2), ...inChunk(2 * pair + 1, pair === 5 ? 1 : 2)]),
    ],
    ['all in one chunk', inChunk(3, 16).concat(inChunk(4, 15))],
    [
      'one chunk clean and its partner 3 away, every other pair 4',
      [...Array(8).keys()].flatMap((pair) =>
        pair === 3 ? inChunk(7, 3) : [...inChunk(2 * pair, 2), ...inChunk(2 * pair + 1, 2)],
      ),
    ],
    [
      // in the rows' own order, the first chunk is looked up with its partner read from the hash itself
      'the first chunk clean and its partner 3 away, every other pair 4',
      [...Array(8).keys()].flatMap((pair) =>
        pair === 0 ? inChunk(1, 3) : [...inChunk(2 * pair, 2), ...inChunk(2 * pair + 1, 2)],
      ),
    ],
    ['at random', randomBits(31)],
  ])(`finds a hash ${MAX_INDEXED_DISTANCE} bits away, %s, in either order of rows`, (_shape, bits) => {
    for (const row of [0, 1_234, 4_999]) {
      const near = flipped(held[row] ?? '', bits);
      expect(pdqDistance(near, held[row] ?? '')).toBe(31);
      expect([inOrder.anyWithin([near], 31), unordered.anyWithin([near], 31)]).toEqual([true, true]);
    }
  });

  it.each([
    ['4 a pair of chunks', [...Array(16).keys()].flatMap((chunk) => inChunk(chunk, 2))],
    ['at random', randomBits(32)],
  ])('finds nothing 32 bits away, %s', (_shape, bits) => {
    const far = flipped(held[77] ?? '', bits);
    expect([inOrder.anyWithin([far], 31), unordered.anyWithin([far], 31)]).toEqual([false, false]);
  });

  it('answers as a comparison with every hash does, for queries at every distance around the limit', () => {
    const queries = Array.from({ length: 400 }, (_, n) => flipped(held[n * 11] ?? '', randomBits(4 + (n % 36))));
    const nearest = nearestDistances(held, queries);
    expect(queries.slice(0, 50).map((query, n) => pdqDistance(query, held[n * 11] ?? ''))).toEqual(
      queries.slice(0, 50).map((_, n) => 4 + (n % 36)),
    );
    for (const distance of [10, 15, 16, 23, 24, 31]) {
      const expected = nearest.map((bits) => bits <= distance);
      expect(queries.map((query) => inOrder.anyWithin([query], distance))).toEqual(expected);
      expect(queries.map((query) => unordered.anyWithin([query], distance))).toEqual(expected);
      expect(expected.filter(Boolean).length).toBeGreaterThan(0);
    }
  });

  it('finds a match among several queries, and refuses a distance past what it finds every match at', () => {
    const near = flipped(held[9] ?? '', randomBits(12));
    expect(unordered.anyWithin([randomBytes(32).toString('hex'), near], 31)).toBe(true);
    expect(() => unordered.anyWithin([near], 32)).toThrow('up to 31 bits');
  });

  it('answers as a comparison with every hash does when its buckets hold thousands (several batches of rows)', async () => {
    // 6,000 hashes alike but for their first pair of chunks: every lookup of a chunk the query keeps finds all of them
    const base = randomBytes(HASH_BYTES);
    const crowd = Array.from({ length: 6_000 }, () => Buffer.concat([randomBytes(4), base.subarray(4)]).toString('hex'));
    // each 18 to 33 bits from the crowd's shared part, all in its first chunks: the rest found by every lookup
    const queries = Array.from({ length: 120 }, (_, n) =>
      flipped(
        Buffer.concat([randomBytes(4), base.subarray(4)]).toString('hex'),
        [...Array(18 + (n % 16)).keys()].map((bit) => 32 + bit),
      ),
    );
    const nearest = nearestDistances(crowd, queries);
    const expected = nearest.map((bits) => bits <= 31);
    expect(new Set(expected)).toEqual(new Set([true, false]));
    for (const index of [await HashIndex.build(packHashes(sorted(crowd))), await HashIndex.build(packHashes(crowd))])
      expect(queries.map((query) => index.anyWithin([query], 31))).toEqual(expected);
  });

  it('packs hashes and reads them back', () => {
    const packed = packHashes(held.slice(0, 3).map((hash) => hash.toUpperCase()));
    expect([0, 1, 2].map((row) => hashAt(packed, row))).toEqual(held.slice(0, 3));
  });
});
