import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, ListObjectVersionsCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore } from '../../functions/adapters/s3-object-store';
import { md5Hex } from '../../functions/core/hashes';
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
