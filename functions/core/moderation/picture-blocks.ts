import { HASH_BYTES, MAX_INDEXED_HASHES, hashAt, packHashes } from './hash-index';

/**
 * The blocked pictures' list and its changes: a batch added (a takedown's hashes, an imported list), a batch or some
 * hashes lifted. Each change makes a new list from the old, to be stored whole in its place (`PictureBlockStore`), so
 * an import of a million hashes lands whole or not at all (`docs/moderation.md`, "Block lists at scale").
 */

/** Pictures blocked together: those of one takedown, or of one imported list. */
export interface PictureBlockBatch {
  /** Numbered from 1, in the order they were added (`admin unblock ID`). */
  id: number;
  reason: string;
  addedAtMs: number;
}

/** The blocked pictures, as stored: one list, replaced whole (`core/moderation/picture-blocks.ts`). */
export interface PictureBlockList {
  /** Names the stored list; any change stores it under a new one ('' before the first). */
  version: string;
  /** The PDQ hashes, 32 bytes each (`packHashes`), in ascending order, each once. */
  hashes: Uint8Array;
  /** The id of the batch each hash came in. */
  batchOf: Uint32Array;
  batches: PictureBlockBatch[];
  /** The last batch id given: ids are never given again, even once their batch is lifted. */
  lastBatchId: number;
}

/** Where the blocked pictures' list is kept (`docs/moderation.md`, "Block lists at scale"). */
export interface PictureBlockStore {
  /** The list's version, and its hashes unless it is still `known` (then one small read). */
  hashes(known: string | undefined): Promise<{ version: string; hashes?: Uint8Array }>;
  /** The whole list, batches included (the operator's tool). */
  read(): Promise<PictureBlockList>;
  /**
   * Stores `next` in place of the list it was made from (`next.version`), whole or not at all; false, storing
   * nothing, when the list changed meanwhile.
   */
  replace(next: PictureBlockList): Promise<boolean>;
}

/** The most hashes the list holds: what the index numbers (`core/moderation/hash-index.ts`). */
export const MAX_PICTURE_BLOCKS = MAX_INDEXED_HASHES;

export const NO_PICTURE_BLOCKS: PictureBlockList = {
  version: '',
  hashes: new Uint8Array(0),
  batchOf: new Uint32Array(0),
  batches: [],
  lastBatchId: 0,
};

/** A batch with the number of its hashes still in the list. */
export type CountedBatch = PictureBlockBatch & { count: number };

const rowsOf = (hashes: Uint8Array): number => hashes.length / HASH_BYTES;
const view = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Hex hashes in lower case, each once, in ascending order, packed. */
function packedSorted(hexes: readonly string[]): Uint8Array {
  return packHashes([...new Set(hexes.map((hex) => hex.toLowerCase()))].sort());
}

/**
 * The list with a batch of hashes added (those it holds already stay in their own batch); how many were new. No new
 * batch when none is.
 */
export function withBatch(
  list: PictureBlockList,
  hexes: readonly string[],
  reason: string,
  nowMs: number,
): { list: PictureBlockList; added: number } {
  const adding = view(packedSorted(hexes));
  const held = view(list.hashes);
  const id = list.lastBatchId + 1;
  const total = rowsOf(held) + rowsOf(adding);
  const hashes = new Uint8Array(total * HASH_BYTES);
  const batchOf = new Uint32Array(total);
  let rows = 0;
  let added = 0;
  let from = 0;
  let at = 0;
  // a merge of the two ascending runs; a hash in both keeps the batch it came in first
  while (from < rowsOf(held) || at < rowsOf(adding)) {
    const order =
      from >= rowsOf(held)
        ? 1
        : at >= rowsOf(adding)
          ? -1
          : held.compare(adding, at * HASH_BYTES, (at + 1) * HASH_BYTES, from * HASH_BYTES, (from + 1) * HASH_BYTES);
    if (order <= 0) {
      hashes.set(held.subarray(from * HASH_BYTES, (from + 1) * HASH_BYTES), rows * HASH_BYTES);
      batchOf[rows] = list.batchOf[from] ?? 0;
      from += 1;
      if (order === 0) at += 1;
    } else {
      hashes.set(adding.subarray(at * HASH_BYTES, (at + 1) * HASH_BYTES), rows * HASH_BYTES);
      batchOf[rows] = id;
      at += 1;
      added += 1;
    }
    rows += 1;
  }
  if (added === 0) return { list, added };
  const batches = [...list.batches, { id, reason, addedAtMs: nowMs }];
  const next = { hashes: hashes.slice(0, rows * HASH_BYTES), batchOf: batchOf.slice(0, rows), batches, lastBatchId: id };
  return { list: { ...next, version: list.version }, added };
}

/** The list without the hashes `drop` names (by row); batches left without a hash are gone too; how many went. */
function without(list: PictureBlockList, drop: (row: number) => boolean): { list: PictureBlockList; removed: number } {
  const kept: number[] = [];
  for (let row = 0; row < list.batchOf.length; row += 1) if (!drop(row)) kept.push(row);
  const hashes = new Uint8Array(kept.length * HASH_BYTES);
  const batchOf = new Uint32Array(kept.length);
  kept.forEach((row, at) => {
    hashes.set(list.hashes.subarray(row * HASH_BYTES, (row + 1) * HASH_BYTES), at * HASH_BYTES);
    batchOf[at] = list.batchOf[row] ?? 0;
  });
  const left = new Set(batchOf);
  const batches = list.batches.filter((batch) => left.has(batch.id));
  return { list: { ...list, hashes, batchOf, batches }, removed: list.batchOf.length - kept.length };
}

/** The list without a batch's hashes. */
export function withoutBatch(list: PictureBlockList, id: number): { list: PictureBlockList; removed: number } {
  return without(list, (row) => list.batchOf[row] === id);
}

/** The list without these hashes (hex, either case), whatever batch they came in. */
export function withoutHashes(list: PictureBlockList, hexes: readonly string[]): { list: PictureBlockList; removed: number } {
  const dropped = new Set(hexes.map((hex) => hex.toLowerCase()));
  return without(list, (row) => dropped.has(hashAt(list.hashes, row)));
}

/** The list's batches, oldest first, each with the number of its hashes. */
export function countedBatches(list: PictureBlockList): CountedBatch[] {
  const counts = new Map<number, number>();
  for (const id of list.batchOf) counts.set(id, (counts.get(id) ?? 0) + 1);
  return list.batches.map((batch) => ({ ...batch, count: counts.get(batch.id) ?? 0 }));
}

/** The number of hashes in the list. */
export const blockedCount = (list: PictureBlockList): number => rowsOf(list.hashes);
