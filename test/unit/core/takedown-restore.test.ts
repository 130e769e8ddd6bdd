import { Admin } from '../../../functions/core/admin/admin';
import { parseHashList } from '../../../functions/core/moderation/moderation';
import { IdCodecs } from '../../../functions/core/image/id-codec';
import type { ImageRecord } from '../../../functions/core/ports';
import { restoreImage } from '../../../functions/core/lifecycle/restore-image';
import { Sweeper } from '../../../functions/core/lifecycle/sweeper';
import { NO_METRICS } from '../../../functions/core/metrics';
import {
  FakeClock,
  InMemoryDuplicateIndex,
  InMemoryImageRepository,
  InMemoryModeration,
  InMemoryObjectStore,
  InMemoryPictureBlocks,
  InMemoryReports,
  InMemoryStagedStore,
} from '../../support/in-memory';

/**
 * A takedown keeps nothing of what it takes down, whatever state its copies are in, and a restore never brings back
 * what was taken down or blocked since (the stores' fakes, which keep versions as the stack's bucket does).
 */
const DAY_MS = 86_400_000;
const file = (key: string) => ({ key, width: 4, height: 4, size: 9, mime: 'image/png', extension: 'png', bits: 8, channels: 3 });
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

function recordOf(id: number, name: string, clientIp: string): ImageRecord {
  return {
    id,
    status: 'active',
    name,
    extension: 'png',
    original: { ...file(`images/${name}.png`), md5: 'stored-md5' },
    thumb: file(`images/${name}.th.png`),
    medium: file(`images/${name}.md.png`),
    title: name,
    description: null,
    nsfw: false,
    originalFilename: `${name}.png`,
    exif: null,
    animated: false,
    createdAtMs: 0,
    expiresAtMs: null,
    views: 0,
    sourceMd5: 'sent-md5',
    clientIp,
    fingerprint: null,
    deleteTokenHashes: ['t'],
  };
}

/** Two images of the same bytes, from two clients, stored; an admin and a sweep over the same fakes. */
async function twoCopies() {
  const images = new InMemoryImageRepository();
  const objects = new InMemoryObjectStore();
  const moderation = new InMemoryModeration();
  const reports = new InMemoryReports();
  const clock = new FakeClock(1_000_000);
  const codecs = new IdCodecs(async () => 'salt', 999);
  for (const [id, name, ip] of [
    [1, 'a', '198.51.100.1'],
    [2, 'b', '198.51.100.2'],
  ] as const) {
    const record = recordOf(id, name, ip);
    const keys = { original: record.original.key, thumb: record.thumb.key, medium: record.medium.key };
    await images.claimName({ status: 'pending', name: keys.original, imageId: id, keys, createdAtMs: 0 }, 0);
    await images.settleName(keys.original);
    await images.saveActive(record);
    for (const key of Object.values(keys))
      await objects.put({ key, body: new Uint8Array([id]), contentType: 'image/png', cacheControl: '', md5: '' });
  }
  const deps = {
    images,
    objects,
    duplicates: new InMemoryDuplicateIndex(),
    purger: { purge: async () => 0 },
    logger: quiet,
    codecs,
    moderation,
    pictureBlocks: new InMemoryPictureBlocks(),
    stats: { add: async () => undefined, read: async () => new Map() },
    reports,
    staged: new InMemoryStagedStore(),
    clock,
    publicUrl: 'https://img.example.com',
  };
  const sweeper = new Sweeper({ ...deps, metrics: NO_METRICS, keepDeletedMs: 30 * DAY_MS });
  const codec = await codecs.codec();
  return { ...deps, admin: new Admin(deps), sweeper, id: (n: number) => codec.encode(n) };
}

describe('a takedown and a restore', () => {
  it('takes down a copy deleted by its link and kept for a restore, versions and all; restore refuses both', async () => {
    const world = await twoCopies();
    // the second client deleted its copy with its link, and the sweep kept its record to restore
    expect(await world.images.markDeleting(2, 't', world.clock.nowMs())).toBe(true);
    await world.objects.deleteMany(['images/b.png', 'images/b.th.png', 'images/b.md.png']);
    await world.sweeper.sweep();
    expect((await world.images.find(2))?.status).toBe('removed');

    const done = await world.admin.takedown(world.id(1), { block: true });
    expect(done.removed.map((one) => one.idEncoded)).toEqual([world.id(1), world.id(2)]);
    expect([...world.objects.versions.keys()]).toEqual([]);
    expect(await world.images.find(2)).toBeUndefined();
    await expect(world.admin.restore(world.id(2))).rejects.toThrow(`no image ${world.id(2)}`);
  });

  it('refuses to restore an image whose bytes were blocked since, changing nothing', async () => {
    const world = await twoCopies();
    expect(await world.images.markDeleting(2, 't', world.clock.nowMs())).toBe(true);
    await world.objects.deleteMany(['images/b.png', 'images/b.th.png', 'images/b.md.png']);
    await world.sweeper.sweep();
    await world.moderation.block('stored-md5', 'blocked by hand', world.clock.nowMs());
    await expect(world.admin.restore(world.id(2))).rejects.toThrow(
      `${world.id(2)} cannot be restored: its bytes or its picture are blocked`,
    );
    expect(await world.objects.exist(['images/b.png'])).toBe(false);
    expect((await world.images.find(2))?.status).toBe('removed');
  });

  it('never keeps a record taken down after the sweep read it, and restore refuses one marked so', async () => {
    const world = await twoCopies();
    expect(await world.images.markDeleting(1, 't', world.clock.nowMs())).toBe(true);
    // a takedown marks it while a sweep run holds it as merely deleting, then stops before removing it
    const find = world.images.find.bind(world.images);
    let marked = false;
    jest.spyOn(world.images, 'find').mockImplementation(async (id) => {
      const read = await find(id);
      if (!marked) {
        marked = true;
        await world.images.markTakenDown(1, world.clock.nowMs());
      }
      return read;
    });
    await world.sweeper.sweep();
    expect(await find(1)).toBeUndefined();
    const record = { ...recordOf(1, 'a', '198.51.100.1'), status: 'removed' as const, takenDown: true };
    await expect(restoreImage(world, record, 'a')).rejects.toThrow('a was taken down: nothing of it is restored');
  });

  it('takes the files away again when the record cannot be made active, so none is served without one', async () => {
    const world = await twoCopies();
    expect(await world.images.markDeleting(2, 't', world.clock.nowMs())).toBe(true);
    await world.objects.deleteMany(['images/b.png', 'images/b.th.png', 'images/b.md.png']);
    await world.sweeper.sweep();
    jest.spyOn(world.images, 'revive').mockRejectedValueOnce(new Error('throttled'));
    await expect(world.admin.restore(world.id(2))).rejects.toThrow(
      `${world.id(2)} was not restored (Error: throttled): run restore again`,
    );
    expect(await world.objects.exist(['images/b.png'])).toBe(false);
    await expect(world.admin.restore(world.id(2))).resolves.toMatchObject({ idEncoded: world.id(2) });
    expect(await world.objects.exist(['images/b.png', 'images/b.th.png', 'images/b.md.png'])).toBe(true);
  });

  it('names the hashes to import, one a line, when the picture could not be blocked after the takedown', async () => {
    const world = await twoCopies();
    const hashes = ['a5'.repeat(32), '3c'.repeat(32)];
    const found = world.images.find.bind(world.images);
    jest.spyOn(world.images, 'find').mockImplementation(async (id) => {
      const record = await found(id);
      return record && { ...record, perceptual: { hashes, quality: 90 } };
    });
    jest.spyOn(world.pictureBlocks, 'replace').mockRejectedValue(new Error('throttled'));
    const error: unknown = await world.admin.takedown(world.id(1), { block: true }).catch((caught: unknown) => caught);
    expect(String(error)).toContain('taken down, but not blocked (Error: throttled); to block its picture, import');
    // as `block-hashes import` reads them: every hash, each on its own line
    const [, list = ''] = String(error).split('import these PDQ hashes:');
    expect(parseHashList(list)).toEqual({ hashes, skipped: 0 });
  });
});
