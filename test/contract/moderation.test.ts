import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DependencyError } from '../../functions/core/errors';
import { packHashes } from '../../functions/core/moderation/hash-index';
import { countedBatches, withBatch } from '../../functions/core/moderation/picture-blocks';
import type { BanList, BlockList, Report, ReportList } from '../../functions/core/ports';
import type { PictureBlockStore } from '../../functions/core/moderation/picture-blocks';
import { InMemoryModeration, InMemoryPictureBlocks, InMemoryReports } from '../support/in-memory';
import { createTestService, storesOf, type TestService } from '../support/test-service';

/** The moderation ports (bans, blocked bytes) against the fake and the DynamoDB adapter alike. */
const implementations: Array<[string, () => Promise<BanList & BlockList>]> = [
  ['the in-memory fake', () => Promise.resolve(new InMemoryModeration())],
  ['DynamoDB (dynalite)', async () => storesOf(await createTestService()).moderation],
];

/** A PDQ-shaped hash of its own for each number, starting with any hex digit. */
const hashOf = (n: number): string => (n.toString(16).padStart(8, '0') + 'c3'.repeat(28)).slice(-64).padStart(64, '0');

describe.each(implementations)('the moderation ports, on %s', (_name, open) => {
  let store: BanList & BlockList;

  beforeEach(async () => {
    store = await open();
  });

  it('keeps bans by range, with their ends, and removes one once', async () => {
    await store.add({ range: '203.0.113.0/24', untilMs: null });
    await store.add({ range: '2001:db8::/32', untilMs: 5_000 });
    expect((await store.all()).sort((a, b) => a.range.localeCompare(b.range))).toEqual([
      { range: '2001:db8::/32', untilMs: 5_000 },
      { range: '203.0.113.0/24', untilMs: null },
    ]);
    expect(await store.remove('203.0.113.0/24')).toBe(true);
    expect(await store.remove('203.0.113.0/24')).toBe(false);
  });

  it('blocks bytes by their md5, lists them, and lifts a block once', async () => {
    await store.block('a'.repeat(32), 'test', 1_000);
    expect(await store.blockedBytes()).toEqual([{ md5: 'a'.repeat(32), reason: 'test', blockedAtMs: 1_000 }]);
    expect(await store.anyBlocked(['a'.repeat(32)])).toBe(true);
    expect(await store.anyBlocked(['b'.repeat(32), 'a'.repeat(32)])).toBe(true);
    expect(await store.anyBlocked(['b'.repeat(32), 'c'.repeat(32)])).toBe(false);
    expect(await store.anyBlocked(['b'.repeat(32), 'b'.repeat(32)])).toBe(false);
    expect(await store.unblock('a'.repeat(32))).toBe(true);
    expect(await store.unblock('a'.repeat(32))).toBe(false);
    expect([await store.anyBlocked(['a'.repeat(32)]), await store.blockedBytes()]).toEqual([false, []]);
  });
});

/** The blocked pictures' list store, against the fake and the S3 adapter (its object, and its item in DynamoDB). */
describe.each([
  ['the in-memory fake', async () => ({ store: new InMemoryPictureBlocks(), service: undefined })],
  [
    'S3 and DynamoDB (s3rver, dynalite)',
    async () => {
      const service = await createTestService();
      return { store: storesOf(service).pictureBlocks, service };
    },
  ],
] as Array<[string, () => Promise<{ store: PictureBlockStore; service: TestService | undefined }>]>)(
  "the blocked pictures' list, on %s",
  (_name, open) => {
    it('starts empty, stores a list whole under a new version, and sends its hashes only to a reader of another', async () => {
      const { store } = await open();
      const empty = await store.read();
      expect([empty.version, empty.hashes.length, empty.batches]).toEqual(['', 0, []]);
      const hashes = Array.from({ length: 300 }, (_, n) => hashOf(n * 7919));
      const first = withBatch(
        empty,
        hashes.map((hash) => hash.toUpperCase()),
        'imported: list.txt',
        1_000,
      ).list;
      const both = withBatch(first, [hashOf(5), ...hashes.slice(0, 3)], 'taken down: Ab3', 2_000).list;
      expect(await store.replace(first)).toBe(true);
      const stored = await store.read();
      expect(await store.replace({ ...both, version: stored.version })).toBe(true);
      const read = await store.read();
      expect(read.version).not.toEqual(stored.version);
      expect([Buffer.from(read.hashes), [...read.batchOf], read.batches]).toEqual([
        Buffer.from(both.hashes),
        [...both.batchOf],
        [
          { id: 1, reason: 'imported: list.txt', addedAtMs: 1_000 },
          { id: 2, reason: 'taken down: Ab3', addedAtMs: 2_000 },
        ],
      ]);
      expect(countedBatches(read).map((batch) => batch.count)).toEqual([300, 1]);
      const sent = await store.hashes(undefined);
      expect([sent.version, Buffer.from(sent.hashes ?? [])]).toEqual([read.version, Buffer.from(both.hashes)]);
      expect(await store.hashes(read.version)).toEqual({ version: read.version });
    });

    it('refuses a list made from one that changed meanwhile, storing nothing', async () => {
      const { store, service } = await open();
      const start = await store.read();
      expect(await store.replace(withBatch(start, [hashOf(1)], 'first', 1).list)).toBe(true);
      expect(await store.replace(withBatch(start, [hashOf(2)], 'second', 2).list)).toBe(false);
      const now = await store.read();
      expect(await store.replace(withBatch(now, [hashOf(3)], 'third', 3).list)).toBe(true);
      expect(await store.replace(withBatch(now, [hashOf(4)], 'fourth', 4).list)).toBe(false);
      expect((await store.read()).batches.map((batch) => batch.reason)).toEqual(['first', 'third']);
      // the object of the list before stays (an instance may be reading it); older ones and refused ones go
      if (service) expect((await service.objectKeys()).filter((key) => key.startsWith('moderation/'))).toHaveLength(2);
    });
  },
);

describe("the blocked pictures' list in S3", () => {
  it('is a failed read (a dependency error), never a list, when its object does not add up', async () => {
    const service = await createTestService();
    const store = storesOf(service).pictureBlocks;
    expect(await store.replace(withBatch(await store.read(), [hashOf(1), hashOf(2)], 'a', 1).list)).toBe(true);
    const [key] = (await service.objectKeys()).filter((name) => name.startsWith('moderation/'));
    const stored = await service.clients.s3.send(new GetObjectCommand({ Bucket: service.bucket, Key: key }));
    const bytes = Buffer.from((await stored.Body?.transformToByteArray()) ?? []);
    await service.clients.s3.send(
      new PutObjectCommand({ Bucket: service.bucket, Key: key, Body: bytes.subarray(0, bytes.length - 40) }),
    );
    await expect(store.hashes(undefined)).rejects.toBeInstanceOf(DependencyError);
    await expect(store.read()).rejects.toMatchObject({ what: 'read blocked pictures' });
  });
});

describe("the blocked pictures' list of before (16 items in the table)", () => {
  it('is read while no list is stored, and moved into the list, its items removed, by the first change', async () => {
    const service = await createTestService();
    const store = storesOf(service).pictureBlocks;
    const db = DynamoDBDocumentClient.from(service.clients.dynamodb);
    const old = [`0${hashOf(1).slice(1)}`, `0${hashOf(2).slice(1)}`, `f${hashOf(3).slice(1)}`];
    for (const digit of ['0', 'f'])
      await db.send(
        new PutCommand({
          TableName: service.table,
          Item: {
            pk: `PDQBLOCK#${digit}`,
            hashes: Object.fromEntries(
              old.filter((hash) => hash.startsWith(digit)).map((hash) => [hash, { reason: 'taken down: x', blockedAtMs: 5 }]),
            ),
          },
        }),
      );
    const legacy = await store.hashes(undefined);
    expect(legacy.version).toMatch(/^legacy:/);
    expect(Buffer.from(legacy.hashes ?? [])).toEqual(Buffer.from(packHashes([...old].sort())));
    expect(await store.hashes(legacy.version)).toEqual({ version: legacy.version });
    expect(await store.replace(withBatch(await store.read(), [hashOf(9)], 'new', 6).list)).toBe(true);
    const moved = await store.read();
    expect(moved.batches).toEqual([
      { id: 1, reason: 'taken down: x', addedAtMs: 5 },
      { id: 2, reason: 'new', addedAtMs: 6 },
    ]);
    expect(moved.hashes.length / 32).toBe(4);
    expect(await service.items('PDQBLOCK#')).toEqual([]);
  });
});

/** A viewer's report of an image. */
const reportOf = (imageId: number, clientIp: string, atMs = 1_000) => ({
  imageId,
  clientIp,
  reason: 'spam',
  note: 'a note',
  atMs,
});

describe.each([
  ['the in-memory fake', () => Promise.resolve(new InMemoryReports())],
  ['DynamoDB (dynalite)', async () => storesOf(await createTestService()).reports],
] as Array<[string, () => Promise<ReportList>]>)('the report list, on %s', (_name, open) => {
  it('keeps one report per client and image, lists them all, and resolves an image’s reports', async () => {
    const reports = await open();
    expect(await reports.add(reportOf(7, '203.0.113.1'))).toBe(true);
    expect(await reports.add(reportOf(7, '203.0.113.1', 2_000))).toBe(false);
    expect(await reports.add(reportOf(7, '2001:db8::1'))).toBe(true);
    expect(await reports.add(reportOf(70, '203.0.113.1'))).toBe(true);
    const all: Report[] = [];
    for await (const page of reports.all()) all.push(...page);
    expect(all.sort((a, b) => a.imageId - b.imageId || a.clientIp.localeCompare(b.clientIp))).toEqual([
      reportOf(7, '2001:db8::1'),
      reportOf(7, '203.0.113.1'),
      reportOf(70, '203.0.113.1'),
    ]);
    // image 7's reports only: not those of image 70, whose id starts the same
    expect(await reports.resolve(7)).toBe(2);
    expect(await reports.resolve(7)).toBe(0);
    expect(await reports.add(reportOf(7, '203.0.113.1'))).toBe(true);
  });
});
