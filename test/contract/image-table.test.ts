import type { ImageRecord, ImageTable, PendingUpload } from '../../functions/core/ports';
import { InMemoryImageRepository } from '../support/in-memory';
import { createTestService, storesOf } from '../support/test-service';

/**
 * One contract per port of the image table (NameClaims, ImageRecords, SweepQueue, ImageScan), run against the
 * in-memory fake the unit tests use and the DynamoDB adapter on the stand-in (dynalite): a fake that drifts from the
 * store fails here (it once refused to mark a record being deleted a second time, which DynamoDB allows for the same
 * link).
 */
const implementations: Array<[string, () => Promise<ImageTable>]> = [
  ['the in-memory fake', () => Promise.resolve(new InMemoryImageRepository())],
  ['DynamoDB (dynalite)', async () => storesOf(await createTestService()).images],
];

let sequence = 0;
/** A fresh id and name for each case: the stores are shared within a suite. */
const fresh = (): { id: number; name: string } => {
  sequence += 1;
  return { id: 1_000_000 + sequence * 7, name: `images/2026/11/25/contract-${Date.now()}-${sequence}.png` };
};

function pending(name: string, imageId: number, createdAtMs = 1_000): PendingUpload {
  return {
    status: 'pending',
    name,
    imageId,
    keys: { original: name, thumb: name.replace('.png', '.th.png'), medium: name.replace('.png', '.md.png') },
    createdAtMs,
  };
}

function record(id: number, name: string, overrides: Partial<ImageRecord> = {}): ImageRecord {
  const file = (key: string) => ({
    key,
    width: 10,
    height: 8,
    size: 100,
    mime: 'image/png',
    extension: 'png',
    bits: 8,
    channels: 3,
  });
  return {
    id,
    status: 'active',
    name: 'contract',
    extension: 'png',
    original: { ...file(name), md5: 'a'.repeat(32) },
    thumb: file(name.replace('.png', '.th.png')),
    medium: file(name.replace('.png', '.md.png')),
    title: 'contract',
    description: null,
    nsfw: false,
    originalFilename: 'contract.png',
    exif: null,
    animated: false,
    createdAtMs: 5_000,
    expiresAtMs: null,
    views: 0,
    sourceMd5: 'b'.repeat(32),
    clientIp: '203.0.113.9',
    fingerprint: null,
    deleteTokenHashes: ['t'.repeat(64)],
    ...overrides,
  };
}

async function collect<T>(pages: AsyncIterable<T[]>): Promise<T[]> {
  const all: T[] = [];
  for await (const page of pages) all.push(...page);
  return all;
}

describe.each(implementations)('the image table ports, on %s', (_name, open) => {
  let table: ImageTable;

  beforeAll(async () => {
    table = await open();
  });

  describe('NameClaims', () => {
    it('claims a name once: another image is refused, the same upload again (a retried write) is not', async () => {
      const { id, name } = fresh();
      expect(await table.claimName(pending(name, id), 9_000)).toBe(true);
      expect(await table.claimName(pending(name, id + 1), 9_000)).toBe(false);
      expect(await table.claimName(pending(name, id), 9_000)).toBe(true);
      expect(await table.imageIdOfName(name)).toBe(id);
    });

    it('records the upload as pending until it is settled, once; the name stays taken', async () => {
      const { id, name } = fresh();
      await table.claimName(pending(name, id), 9_000);
      expect(await table.findPending(name)).toEqual(pending(name, id));
      expect(await table.settleName(name)).toBe(true);
      expect(await table.settleName(name)).toBe(false);
      expect(await table.findPending(name)).toBeUndefined();
      expect(await table.imageIdOfName(name)).toBe(id);
      expect(await table.claimName(pending(name, id + 1), 9_000)).toBe(false);
      expect(await table.imageIdOfName(`${name}.unknown`)).toBeUndefined();
    });
  });

  describe('ImageRecords', () => {
    it("keeps a record's picture hashes when it has them, and none when it has not", async () => {
      const hashed = fresh();
      const perceptual = { hashes: ['0f'.repeat(32), 'e1'.repeat(32)], quality: 87 };
      await table.saveActive(record(hashed.id, hashed.name, { perceptual }));
      expect((await table.find(hashed.id))?.perceptual).toEqual(perceptual);
      const plain = fresh();
      await table.saveActive(record(plain.id, plain.name));
      expect(await table.find(plain.id)).not.toHaveProperty('perceptual');
    });

    it('saves a record once: another image under its id is refused, the same record again (retried) is not', async () => {
      const { id, name } = fresh();
      expect(await table.saveActive(record(id, name))).toBe(true);
      expect(await table.find(id)).toEqual(record(id, name));
      expect(await table.saveActive(record(id, `${name}.other.png`))).toBe(false);
      expect(await table.saveActive(record(id, name))).toBe(true);
      expect(await table.find(id + 3)).toBeUndefined();
    });

    it('counts views of active records only', async () => {
      const { id, name } = fresh();
      await table.saveActive(record(id, name));
      expect((await table.addView(id))?.views).toBe(1);
      expect(await table.addView(id + 3)).toBeUndefined();
      await table.markTakenDown(id, 6_000);
      expect(await table.addView(id)).toBeUndefined();
    });

    it('writes the holds of an active record and its end, only over the tokens it read', async () => {
      const { id, name } = fresh();
      await table.saveActive({ ...record(id, name), expiresAtMs: 9_000_000 });
      const [first = ''] = record(id, name).deleteTokenHashes;
      const second = 'u'.repeat(64);
      const after = await table.writeHolds(id, [first], { [first]: 9_000_000, [second]: 12_000_000 }, 12_000_000);
      expect(after).toMatchObject({ expiresAtMs: 12_000_000, holdEnds: { [first]: 9_000_000, [second]: 12_000_000 } });
      expect(new Set(after?.deleteTokenHashes)).toEqual(new Set([first, second]));
      expect(await table.find(id)).toEqual(after);
      // due for the sweep at its new end, not its old one
      const dueAt = async (nowMs: number) =>
        (
          await Promise.all(
            Array.from({ length: table.duePartitions }, (_, partition) => collect(table.dueRefs(nowMs, 50, partition))),
          )
        ).flat();
      expect(await dueAt(9_000_000)).not.toContainEqual(expect.objectContaining({ id }));
      expect(await dueAt(12_000_000)).toContainEqual(expect.objectContaining({ id }));
      // over tokens it no longer holds exactly (one read before the second hold came): nothing written
      expect(await table.writeHolds(id, [first], { [first]: null }, null)).toBeUndefined();
      expect(await table.writeHolds(id, [first, 'x'.repeat(64)], { [first]: null }, null)).toBeUndefined();
      // a hold without an end: the image has none, and leaves the sweep's index
      expect(await table.writeHolds(id, [first, second], { [second]: null }, null)).toMatchObject({
        deleteTokenHashes: [second],
        expiresAtMs: null,
        holdEnds: { [second]: null },
      });
      expect(await dueAt(20_000_000)).not.toContainEqual(expect.objectContaining({ id }));
      await table.markTakenDown(id, 6_000);
      expect(await table.writeHolds(id, [second], { [second]: null, [first]: null }, null)).toBeUndefined();
    });

    it('writes the holds of an image answered to hundreds of uploads (a condition that names them all is too long)', async () => {
      const { id, name } = fresh();
      await table.saveActive(record(id, name));
      const [first = ''] = record(id, name).deleteTokenHashes;
      const many = Object.fromEntries(
        [first, ...Array.from({ length: 299 }, (_, n) => n.toString(16).padStart(64, '0'))].map((hash) => [hash, null]),
      );
      const after = await table.writeHolds(id, [first], many, null);
      expect(after?.deleteTokenHashes).toHaveLength(300);
      const fewer = await table.writeHolds(id, after?.deleteTokenHashes ?? [], { [first]: null }, null);
      expect(fewer?.deleteTokenHashes).toEqual([first]);
      // read before the last change: refused
      expect(await table.writeHolds(id, after?.deleteTokenHashes ?? [], { [first]: 5 }, 5)).toBeUndefined();
    });

    it('marks a record being deleted by a link it holds; the same mark again (retried) counts too', async () => {
      const { id, name } = fresh();
      await table.saveActive(record(id, name));
      const token = record(id, name).deleteTokenHashes[0] ?? '';
      expect(await table.markDeleting(id, 'x'.repeat(64), 6_000)).toBe(false);
      expect(await table.markDeleting(id, token, 6_000)).toBe(true);
      expect((await table.find(id))?.status).toBe('deleting');
      expect(await table.markDeleting(id, token, 6_000)).toBe(true);
      expect(await table.markDeleting(id + 3, token, 6_000)).toBe(false);
    });

    it('lets the operator take any record down, and removes a record once', async () => {
      const { id, name } = fresh();
      await table.saveActive(record(id, name));
      expect(await table.markTakenDown(id, 6_000)).toBe(true);
      expect(await table.find(id)).toMatchObject({ status: 'deleting', takenDown: true });
      expect(await table.markTakenDown(id + 3, 6_000)).toBe(false);
      expect(await table.remove(id)).toBe(true);
      expect(await table.remove(id)).toBe(false);
      expect(await table.find(id)).toBeUndefined();
    });

    it('keeps a removed record (deleted, or expired) until a moment, and makes it active again once', async () => {
      const { id: deletedId, name: deletedName } = fresh();
      const { id: expiredId, name: expiredName } = fresh();
      const { id: liveId, name: liveName } = fresh();
      await table.saveActive(record(deletedId, deletedName, { expiresAtMs: 90_000 }));
      await table.saveActive(record(expiredId, expiredName, { expiresAtMs: 7_000 }));
      await table.saveActive(record(liveId, liveName, { expiresAtMs: 20_000 }));
      await table.markDeleting(deletedId, record(deletedId, deletedName).deleteTokenHashes[0] ?? '', 6_000);
      // an active record that has not expired, and one already removed, are not retired
      expect(await table.retire(liveId, 10_000, 99_000)).toBe(false);
      expect(await table.retire(deletedId, 10_000, 99_000)).toBe(true);
      expect(await table.retire(expiredId, 10_000, 99_000)).toBe(true);
      expect(await table.retire(deletedId, 10_000, 99_000)).toBe(false);
      expect(await table.find(deletedId)).toMatchObject({ status: 'removed', restorableUntilMs: 99_000 });
      // one taken down is never kept
      const { id: takenId, name: takenName } = fresh();
      await table.saveActive(record(takenId, takenName));
      await table.markTakenDown(takenId, 6_000);
      expect(await table.retire(takenId, 10_000, 99_000)).toBe(false);
      expect((await table.find(takenId))?.status).toBe('deleting');
      expect(await table.addView(deletedId)).toBeUndefined();
      expect(await table.revive(liveId, null)).toBe(false);
      expect(await table.revive(deletedId, 90_000)).toBe(true);
      expect(await table.revive(expiredId, null)).toBe(true);
      expect(await table.revive(expiredId, null)).toBe(false);
      const revived = await table.find(deletedId);
      expect(revived).toMatchObject({ status: 'active', expiresAtMs: 90_000 });
      expect(revived).not.toHaveProperty('restorableUntilMs');
      expect(await table.find(expiredId)).toMatchObject({ status: 'active', expiresAtMs: null });
      expect(await table.addView(expiredId)).toMatchObject({ views: 1 });
    });

    it('allocates ids of a counter, one after the other', async () => {
      const first = await table.allocateId();
      expect(await table.allocateId()).toBe(first + 1);
    });
  });

  describe('SweepQueue', () => {
    let queue: ImageTable;

    beforeEach(async () => {
      queue = await open();
    });

    const everythingDue = async (nowMs: number) => {
      const parts = Array.from({ length: queue.duePartitions }, (_, partition) => collect(queue.dueRefs(nowMs, 2, partition)));
      return (await Promise.all(parts)).flat();
    };

    it('holds what is due: expired images, records being deleted, name claims past their grace; oldest first', async () => {
      const expiring = fresh();
      const deleting = fresh();
      const later = fresh();
      const claim = fresh();
      await queue.saveActive(record(expiring.id, expiring.name, { expiresAtMs: 7_000 }));
      await queue.saveActive(record(later.id, later.name, { expiresAtMs: 50_000 }));
      await queue.saveActive(record(deleting.id, deleting.name));
      await queue.markDeleting(deleting.id, record(deleting.id, deleting.name).deleteTokenHashes[0] ?? '', 8_000);
      await queue.claimName(pending(claim.name, claim.id), 9_000);
      const due = await everythingDue(10_000);
      expect(due).toEqual(expect.arrayContaining([{ id: expiring.id }, { id: deleting.id }, { name: claim.name }]));
      expect(due).toHaveLength(3);
      expect(await queue.oldestDueAtMs(10_000)).toBe(7_000);
    });

    it('lets go of what is settled, removed or retired, and of nothing before it is due', async () => {
      const claim = fresh();
      const expiring = fresh();
      const retired = fresh();
      await queue.claimName(pending(claim.name, claim.id), 9_000);
      await queue.saveActive(record(expiring.id, expiring.name, { expiresAtMs: 9_500 }));
      await queue.saveActive(record(retired.id, retired.name, { expiresAtMs: 9_600 }));
      expect(await everythingDue(8_000)).toEqual([]);
      expect(await queue.oldestDueAtMs(8_000)).toBeUndefined();
      await queue.settleName(claim.name);
      await queue.remove(expiring.id);
      expect(await everythingDue(10_000)).toEqual([{ id: retired.id }]);
      await queue.retire(retired.id, 10_000, 99_000);
      expect(await everythingDue(10_000)).toEqual([]);
      // made active again with an expiry, it is due again at it
      await queue.revive(retired.id, 12_000);
      expect(await everythingDue(13_000)).toEqual([{ id: retired.id }]);
    });
  });

  describe('ImageScan', () => {
    it('finds records made since a moment, and records of given bytes (as uploaded, or as stored)', async () => {
      const scanned = await open();
      const old = fresh();
      const recent = fresh();
      await scanned.saveActive(record(old.id, old.name, { createdAtMs: 1_000, sourceMd5: 'c'.repeat(32) }));
      await scanned.saveActive(record(recent.id, recent.name, { createdAtMs: 90_000 }));
      expect((await collect(scanned.recent(50_000))).map((found) => found.id)).toEqual([recent.id]);
      const bySource = await collect(scanned.withContent(['c'.repeat(32)]));
      expect(bySource.map((found) => found.id)).toEqual([old.id]);
      const byStored = await collect(scanned.withContent(['a'.repeat(32)]));
      expect(byStored.map((found) => found.id).sort()).toEqual([old.id, recent.id].sort());
    });
  });
});
