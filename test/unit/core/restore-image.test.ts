import { restoreImage } from '../../../functions/core/lifecycle/restore-image';
import type { ImageRecord } from '../../../functions/core/ports';
import {
  FakeClock,
  InMemoryImageRepository,
  InMemoryModeration,
  InMemoryObjectStore,
  InMemoryPictureBlocks,
} from '../../support/in-memory';

const file = (key: string) => ({ key, width: 4, height: 4, size: 9, mime: 'image/png', extension: 'png', bits: 8, channels: 3 });
const KEYS = ['images/a.png', 'images/a.th.png', 'images/a.md.png'] as const;

/** A stored image, removed (its delete link, or its expiry at `expiresAtMs`) and swept, as the stores then hold it. */
async function removedImage(expiresAtMs: number | null, nowMs: number) {
  const images = new InMemoryImageRepository();
  const objects = new InMemoryObjectStore();
  const record = {
    id: 5,
    status: 'active',
    original: { ...file(KEYS[0]), md5: 'm' },
    thumb: file(KEYS[1]),
    medium: file(KEYS[2]),
    expiresAtMs,
    deleteTokenHashes: ['t'],
  } as unknown as ImageRecord;
  await images.claimName(
    {
      status: 'pending',
      name: KEYS[0],
      imageId: 5,
      keys: { original: KEYS[0], thumb: KEYS[1], medium: KEYS[2] },
      createdAtMs: 0,
    },
    0,
  );
  await images.saveActive(record);
  for (const key of KEYS)
    await objects.put({ key, body: new Uint8Array([1]), contentType: 'image/png', cacheControl: '', md5: '' });
  if (expiresAtMs === null || expiresAtMs > nowMs) await images.markDeleting(5, 't', nowMs);
  await objects.deleteMany(KEYS);
  expect(await images.retire(5, nowMs, nowMs + 1_000_000)).toBe(true);
  const clock = new FakeClock(nowMs);
  const moderation = new InMemoryModeration();
  const pictureBlocks = new InMemoryPictureBlocks();
  return { images, objects, clock, moderation, pictureBlocks, record: (await images.find(5)) as ImageRecord };
}

describe('restoreImage', () => {
  it('brings the files and the record back, and drops an expiry that has passed', async () => {
    const deps = await removedImage(50_000, 60_000);
    expect(await restoreImage(deps, deps.record, 'a')).toEqual({ files: [...KEYS], expiresAtMs: null });
    expect(await deps.objects.exist(KEYS)).toBe(true);
    expect(await deps.images.find(5)).toMatchObject({ status: 'active', expiresAtMs: null });
  });

  it('keeps an expiry still ahead (a delete link used before it)', async () => {
    const deps = await removedImage(90_000, 60_000);
    expect(await restoreImage(deps, deps.record, 'a')).toEqual({ files: [...KEYS], expiresAtMs: 90_000 });
  });

  it('changes nothing when a file has no version kept, or past the time its record is kept', async () => {
    const lost = await removedImage(null, 60_000);
    lost.objects.versions.delete(KEYS[1]);
    await expect(restoreImage(lost, lost.record, 'a')).rejects.toThrow(
      `a cannot be restored: no earlier version of ${KEYS[1]} is kept any more`,
    );
    expect(await lost.objects.exist([KEYS[0]])).toBe(false);
    expect((await lost.images.find(5))?.status).toBe('removed');

    const late = await removedImage(null, 60_000);
    late.clock.advance(1_000_000);
    await expect(restoreImage(late, late.record, 'a')).rejects.toThrow('a was removed too long ago');
    expect(await late.objects.exist(KEYS)).toBe(false);
  });
});
