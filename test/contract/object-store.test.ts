import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, ListObjectVersionsCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore } from '../../functions/adapters/s3-object-store';
import { md5Hex } from '../../functions/core/hashes';
import { VersionsNotKept } from '../../functions/core/errors';
import type { ObjectStore, StoredObject } from '../../functions/core/ports';
import { InMemoryObjectStore } from '../support/in-memory';
import { motoAvailable, startMoto, type Moto } from '../support/moto';
import { createTestService, storesOf } from '../support/test-service';

/**
 * The object store's removals against the fake, the local stand-in (no versions) and moto with versioning on (as the
 * stack's bucket): a removal keeps what a restore needs where the bucket keeps versions; a purge keeps nothing.
 */
let moto: Moto | undefined;
afterAll(() => moto?.stop());

/** Versions and delete markers of a key in the versioned bucket: what a restore could find. */
let versionsOf: ((key: string) => Promise<number>) | undefined;

async function versionedBucket(): Promise<ObjectStore> {
  moto ??= await startMoto();
  const s3 = new S3Client({
    region: 'us-east-1',
    endpoint: moto.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const bucket = `versions-${randomBytes(4).toString('hex')}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
  versionsOf = async (key) => {
    const page = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: key }));
    return [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].filter((version) => version.Key === key).length;
  };
  return new S3ObjectStore(s3, bucket);
}

const implementations: Array<[string, () => Promise<ObjectStore>]> = [
  ['the in-memory fake', () => Promise.resolve(new InMemoryObjectStore())],
  ['the local stand-in (s3rver, no versions)', async () => storesOf(await createTestService()).objects],
  ...(motoAvailable() ? [['S3 with versioning (moto)', versionedBucket] as [string, () => Promise<ObjectStore>]] : []),
];

const objectOf = (key: string, text: string): StoredObject => {
  const body = new TextEncoder().encode(text);
  return { key, body, contentType: 'image/png', cacheControl: 'no-cache', md5: md5Hex(body) };
};

describe.each(implementations)('the object store, on %s', (name, open) => {
  it('removes current objects, takes the same key again, and purges a key whole, leaving the others', async () => {
    const store = await open();
    await store.put(objectOf('images/a.png', 'first'));
    await store.put(objectOf('images/ab.png', 'neighbour'));
    await store.deleteMany(['images/a.png']);
    expect(await store.read('images/a.png')).toBeUndefined();
    await store.put(objectOf('images/a.png', 'second'));
    expect(new TextDecoder().decode(await store.read('images/a.png'))).toBe('second');
    // a removal kept the first bytes where versions are kept: two versions and a delete marker
    if (name.includes('versioning')) expect(await versionsOf?.('images/a.png')).toBe(3);
    await store.purge(['images/a.png']);
    expect(await store.exist(['images/a.png'])).toBe(false);
    if (name.includes('versioning')) expect(await versionsOf?.('images/a.png')).toBe(0);
    // a key that begins with the purged one is another object
    expect(new TextDecoder().decode(await store.read('images/ab.png'))).toBe('neighbour');
  });

  it("reads a removed object's newest kept version where versions are kept, nothing where not, nothing once purged", async () => {
    const store = await open();
    await store.put(objectOf('images/k.png', 'kept'));
    expect(new TextDecoder().decode(await store.readKept('images/k.png'))).toBe('kept');
    await store.deleteMany(['images/k.png']);
    expect(await store.read('images/k.png')).toBeUndefined();
    const kept = await store.readKept('images/k.png');
    if (name.includes('no versions')) expect(kept).toBeUndefined();
    else expect(new TextDecoder().decode(kept)).toBe('kept');
    await store.purge(['images/k.png']);
    expect(await store.readKept('images/k.png')).toBeUndefined();
    expect(await store.readKept('images/never.png')).toBeUndefined();
  });
});

describe.each(implementations)('a restore, on %s', (name, open) => {
  const keepsVersions = !name.includes('no versions');

  it('makes the removed bytes current again, and changes nothing when one of the keys has no version kept', async () => {
    const store = await open();
    await store.put(objectOf('images/r.png', 'kept'));
    await store.put(objectOf('images/r.th.png', 'thumb'));
    // removed twice (a delete link, then the sweep): two delete markers above the version
    await store.deleteMany(['images/r.png', 'images/r.th.png']);
    await store.deleteMany(['images/r.png']);
    if (!keepsVersions) {
      await expect(store.restore(['images/r.png'])).rejects.toThrow(VersionsNotKept);
      return;
    }
    expect(await store.restore(['images/r.png', 'images/never.png'])).toEqual(['images/never.png']);
    expect(await store.exist(['images/r.png'])).toBe(false);
    expect(await store.restore(['images/r.png', 'images/r.th.png'])).toEqual([]);
    expect(new TextDecoder().decode(await store.read('images/r.png'))).toBe('kept');
    expect(new TextDecoder().decode(await store.read('images/r.th.png'))).toBe('thumb');
    if (name.includes('versioning')) expect(await versionsOf?.('images/r.png')).toBe(1);
    // a purged key is gone for good
    await store.purge(['images/r.png']);
    expect(await store.restore(['images/r.png'])).toEqual(['images/r.png']);
  });
});

describe('the in-memory fake', () => {
  it("keeps removed objects as versions until a purge, as the stack's bucket does", async () => {
    const store = new InMemoryObjectStore();
    await store.put(objectOf('images/a.png', 'first'));
    await store.deleteMany(['images/a.png']);
    expect(store.versions.get('images/a.png')).toHaveLength(1);
    await store.purge(['images/a.png']);
    expect(store.versions.has('images/a.png')).toBe(false);
  });
});
