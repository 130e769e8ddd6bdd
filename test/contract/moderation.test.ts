import type { BanList, BlockList, Report, ReportList } from '../../functions/core/ports';
import { InMemoryModeration, InMemoryReports } from '../support/in-memory';
import { createTestService, storesOf } from '../support/test-service';

/** The moderation ports (bans, blocked bytes and pictures) against the fake and the DynamoDB adapter alike. */
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

  it('blocks bytes by their md5', async () => {
    await store.block('a'.repeat(32), 'test', 1_000);
    expect(await store.anyBlocked(['a'.repeat(32)])).toBe(true);
    expect(await store.anyBlocked(['b'.repeat(32), 'a'.repeat(32)])).toBe(true);
    expect(await store.anyBlocked(['b'.repeat(32), 'c'.repeat(32)])).toBe(false);
    expect(await store.anyBlocked(['b'.repeat(32), 'b'.repeat(32)])).toBe(false);
  });

  it('blocks pictures by their hashes, in lower case, many at once and again without harm', async () => {
    expect(await store.pictures()).toEqual([]);
    // every first digit, and more than one update's worth under one of them
    const hashes = [
      ...Array.from({ length: 16 }, (_, digit) => `${digit.toString(16)}${'7'.repeat(63)}`),
      ...Array.from({ length: 120 }, (_, n) => `0${hashOf(n).slice(1)}`),
    ];
    await store.blockPictures(
      hashes.map((hash) => ({ hash: hash.toUpperCase(), reason: 'imported: test' })),
      1_000,
    );
    await store.blockPictures([{ hash: hashes[3] ?? '', reason: 'again' }], 2_000);
    expect((await store.pictures()).sort()).toEqual([...new Set(hashes)].sort());
  });

  it('blocks a hash given twice in one call, in either case, once (DynamoDB refuses a path set twice)', async () => {
    const hash = hashOf(77);
    await store.blockPictures(
      [
        { hash, reason: 'taken down: a' },
        { hash: hash.toUpperCase(), reason: 'taken down: a' },
      ],
      1_000,
    );
    expect(await store.pictures()).toEqual([hash]);
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
