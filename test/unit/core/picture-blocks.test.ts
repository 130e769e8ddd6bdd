import { hashAt } from '../../../functions/core/moderation/hash-index';
import {
  blockedCount,
  countedBatches,
  NO_PICTURE_BLOCKS,
  withBatch,
  withoutBatch,
  withoutHashes,
} from '../../../functions/core/moderation/picture-blocks';
import type { PictureBlockList } from '../../../functions/core/moderation/picture-blocks';

const hash = (n: number): string => n.toString(16).padStart(64, '0').replace(/^0/, 'c');
const hashesOf = (list: PictureBlockList): string[] =>
  Array.from({ length: blockedCount(list) }, (_, row) => hashAt(list.hashes, row));

describe('the blocked pictures list', () => {
  it('adds a batch in ascending order, each hash once, in lower case; a hash held already keeps its batch', () => {
    const first = withBatch(NO_PICTURE_BLOCKS, [hash(30), hash(10), hash(20).toUpperCase(), hash(10)], 'list a', 100);
    expect(first.added).toBe(3);
    const second = withBatch(first.list, [hash(25), hash(20), hash(5)], 'takedown b', 200);
    expect(second.added).toBe(2);
    expect(hashesOf(second.list)).toEqual([hash(5), hash(10), hash(20), hash(25), hash(30)]);
    expect([...second.list.batchOf]).toEqual([2, 1, 1, 2, 1]);
    expect(countedBatches(second.list)).toEqual([
      { id: 1, reason: 'list a', addedAtMs: 100, count: 3 },
      { id: 2, reason: 'takedown b', addedAtMs: 200, count: 2 },
    ]);
    // nothing new: the same list, no empty batch
    expect(withBatch(second.list, [hash(5)], 'again', 300)).toEqual({ list: second.list, added: 0 });
  });

  it('lifts a batch, or hashes of any batch; a batch left empty goes, and ids are not given again', () => {
    const list = withBatch(withBatch(NO_PICTURE_BLOCKS, [hash(1), hash(2)], 'a', 1).list, [hash(3)], 'b', 2).list;
    const lifted = withoutBatch(list, 1);
    expect([lifted.removed, hashesOf(lifted.list), lifted.list.batches.map((batch) => batch.id)]).toEqual([2, [hash(3)], [2]]);
    const some = withoutHashes(list, [hash(3).toUpperCase(), hash(2), hash(99)]);
    expect([some.removed, hashesOf(some.list), some.list.batches.map((batch) => batch.id)]).toEqual([2, [hash(1)], [1]]);
    expect(withBatch(lifted.list, [hash(7)], 'c', 3).list.batches.map((batch) => batch.id)).toEqual([2, 3]);
    const lastLifted = withoutBatch(list, 2).list;
    expect(withBatch(lastLifted, [hash(8)], 'd', 4).list.batches.map((batch) => batch.id)).toEqual([1, 3]);
    expect(withoutBatch(list, 9).removed).toBe(0);
  });
});
