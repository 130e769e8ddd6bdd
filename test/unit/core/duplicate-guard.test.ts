import {
  DuplicateGuard,
  IN_FLIGHT_WAIT_MS,
  STALE_CLAIM_MS,
  type DuplicatePolicy,
} from '../../../functions/core/upload/duplicate-guard';
import type { ImageRecord } from '../../../functions/core/ports';
import { PENDING_GRACE_MS } from '../../../functions/core/lifecycle/lifecycle';
import { FakeClock, InMemoryDuplicateIndex, InMemoryImageRepository, InMemoryObjectStore } from '../../support/in-memory';

const fingerprint = { clientIp: '203.0.113.5', md5: 'a'.repeat(32), width: undefined };
const keys = { original: 'images/o.png', thumb: 'images/o.th.png', medium: 'images/o.md.png' };
const file = (key: string) => ({
  key,
  body: Buffer.from('x'),
  contentType: 'image/png',
  cacheControl: 'no-store',
  md5: '9dd4e461268c8034f5c8564e155c67a6',
});

function setup(policy: DuplicatePolicy = 'return-existing') {
  const clock = new FakeClock();
  const duplicates = new InMemoryDuplicateIndex();
  const images = new InMemoryImageRepository();
  const objects = new InMemoryObjectStore();
  let next = 0;
  const random = { hex: (chars: number) => String((next += 1)).padStart(chars, '0'), safeInteger: () => 1 };
  const guard = new DuplicateGuard({ duplicates, images, objects, clock, random, policy });
  /** The three files of the image, as its upload puts them. */
  const putFiles = (): void => {
    for (const key of Object.values(keys)) objects.objects.set(key, file(key));
  };
  /** An upload finishes: its files, then its record (the order it waits for them in does not matter to the guard). */
  const store = (record: ImageRecord): void => {
    putFiles();
    images.records.set(record.id, record);
  };
  return { clock, duplicates, images, objects, guard, putFiles, store };
}

const active = (id: number, clock: FakeClock): ImageRecord =>
  ({
    id,
    original: { key: keys.original },
    thumb: { key: keys.thumb },
    medium: { key: keys.medium },
    createdAtMs: clock.nowMs(),
    status: 'active',
    expiresAtMs: null,
    deleteTokenHashes: ['x'],
  }) as unknown as ImageRecord;

describe('DuplicateGuard', () => {
  it('claims a new fingerprint for the image about to be stored', async () => {
    const { guard, duplicates } = setup();
    expect(await guard.check(fingerprint, 7)).toMatchObject({ claim: { fingerprint } });
    expect([...duplicates.entries.values()][0]?.imageId).toBe(7);
  });

  it('answers the stored image of an earlier claim, or refuses it when duplicates are rejected', async () => {
    const { guard, store, clock } = setup();
    await guard.check(fingerprint, 7);
    store(active(7, clock));
    expect(await guard.check(fingerprint, 8)).toMatchObject({ existing: { id: 7 } });
    const rejecting = setup('reject');
    await rejecting.guard.check(fingerprint, 7);
    rejecting.store(active(7, rejecting.clock));
    await expect(rejecting.guard.check(fingerprint, 8)).rejects.toMatchObject({ kind: 'Duplicate' });
  });

  it('waits for an identical upload in flight and answers its image once it is stored', async () => {
    const { guard, store, clock } = setup();
    await guard.check(fingerprint, 7); // its upload is storing image 7: no record yet
    const sleep = clock.sleep.bind(clock);
    let polls = 0;
    clock.sleep = async (ms) => {
      polls += 1;
      if (polls === 3) store(active(7, clock)); // the first upload finishes meanwhile
      await sleep(ms);
    };
    expect(await guard.check(fingerprint, 8)).toMatchObject({ existing: { id: 7 } });
    expect(polls).toBe(3);
  });

  it('waits while the record of an identical upload is written but its files are not all there yet', async () => {
    const { guard, images, objects, putFiles, clock } = setup();
    await guard.check(fingerprint, 7);
    images.records.set(7, active(7, clock)); // the record is written alongside the puts, which are not done yet
    objects.objects.set(keys.original, file(keys.original));
    const sleep = clock.sleep.bind(clock);
    let polls = 0;
    clock.sleep = async (ms) => {
      polls += 1;
      if (polls === 2) putFiles(); // the renditions' puts end meanwhile
      await sleep(ms);
    };
    expect(await guard.check(fingerprint, 8)).toMatchObject({ existing: { id: 7 } });
    expect(polls).toBe(2);
    // a policy that refuses duplicates does not refuse before the files are there either
    const rejecting = setup('reject');
    await rejecting.guard.check(fingerprint, 7);
    rejecting.images.records.set(7, active(7, rejecting.clock));
    expect(await rejecting.guard.check(fingerprint, 8)).toEqual({ claim: undefined }); // waited, then stored unclaimed
  });

  it('answers a record past the pending grace without looking for its files (the sweep has settled its upload)', async () => {
    const { guard, images, objects, clock } = setup();
    await guard.check(fingerprint, 7);
    images.records.set(7, active(7, clock));
    clock.advance(PENDING_GRACE_MS);
    objects.failing = true; // any look at the files would throw
    expect(await guard.check(fingerprint, 8)).toMatchObject({ existing: { id: 7 } });
  });

  it('takes over the claim of an upload that died between its record and its files, after the stale time', async () => {
    const { guard, images, duplicates, clock } = setup();
    await guard.check(fingerprint, 7);
    images.records.set(7, active(7, clock)); // no file ever came: the sweep removes the record at the grace's end
    clock.advance(STALE_CLAIM_MS + 1);
    const startedMs = clock.nowMs();
    expect(await guard.check(fingerprint, 8)).toMatchObject({ claim: { fingerprint } });
    expect(clock.nowMs()).toBe(startedMs);
    expect([...duplicates.entries.values()][0]?.imageId).toBe(8);
  });

  it('stops waiting for an identical upload in flight after its wait, and stores this one unclaimed', async () => {
    const { guard, clock } = setup();
    await guard.check(fingerprint, 7); // its upload is storing image 7: no record yet
    const startedMs = clock.nowMs();
    expect(await guard.check(fingerprint, 8)).toEqual({ claim: undefined });
    expect(clock.nowMs() - startedMs).toBeGreaterThanOrEqual(IN_FLIGHT_WAIT_MS);
    expect(clock.nowMs() - startedMs).toBeLessThan(IN_FLIGHT_WAIT_MS + 1000);
  });

  it('takes over a stale claim whose upload died (no record after the stale time)', async () => {
    const { guard, duplicates, clock } = setup();
    await guard.check(fingerprint, 7);
    clock.advance(STALE_CLAIM_MS + 1);
    expect(await guard.check(fingerprint, 8)).toMatchObject({ claim: { fingerprint } });
    expect([...duplicates.entries.values()][0]?.imageId).toBe(8);
  });

  it('takes over a claim whose image is gone or expired, at once', async () => {
    const { guard, images, clock } = setup();
    await guard.check(fingerprint, 7);
    images.records.set(7, { ...active(7, clock), status: 'deleting' });
    const startedMs = clock.nowMs();
    expect(await guard.check(fingerprint, 8)).toMatchObject({ claim: { fingerprint } });
    expect(clock.nowMs()).toBe(startedMs);
  });

  it('claims nothing when duplicates are allowed', async () => {
    const { guard, duplicates } = setup('allow');
    expect(await guard.check(fingerprint, 7)).toEqual({ claim: undefined });
    expect(duplicates.entries.size).toBe(0);
  });
});
