import { IdCodecs } from '../../../functions/core/image/id-codec';
import { ImageAccess } from '../../../functions/core/lifecycle/image-access';
import type { ImageRecord, StoredFile } from '../../../functions/core/ports';
import {
  FakeClock,
  InMemoryDuplicateIndex,
  InMemoryImageRepository,
  InMemoryObjectStore,
  InMemorySettings,
} from '../../support/in-memory';

const file = (key: string): StoredFile => ({
  key,
  width: 10,
  height: 10,
  size: 100,
  mime: 'image/png',
  extension: 'png',
  bits: 8,
  channels: 3,
});

const record: ImageRecord = {
  id: 7,
  status: 'active',
  name: 'cat',
  extension: 'png',
  original: { ...file('images/2026/11/23/cat.png'), md5: 'a'.repeat(32) },
  thumb: file('images/2026/11/23/cat.th.png'),
  medium: file('images/2026/11/23/cat.md.png'),
  title: 'cat',
  description: null,
  nsfw: false,
  originalFilename: 'cat.png',
  exif: null,
  animated: false,
  createdAtMs: 0,
  expiresAtMs: null,
  views: 4,
  sourceMd5: 'b'.repeat(32),
  clientIp: '203.0.113.5',
  fingerprint: null,
  deleteTokenHashes: [],
};

function setup() {
  const images = new InMemoryImageRepository();
  images.records.set(record.id, structuredClone(record));
  const warnings: string[] = [];
  const codecs = new IdCodecs(() => new InMemorySettings({ apiKey: 'k', floodLimits: '{}' }).idSalt(), 999);
  const access = new ImageAccess({
    images,
    objects: new InMemoryObjectStore(),
    duplicates: new InMemoryDuplicateIndex(),
    clock: new FakeClock(),
    logger: { info: () => undefined, warn: (message) => warnings.push(message), error: () => undefined },
    codecs,
    publicUrl: 'https://img.example',
  });
  return { images, access, warnings, idEncoded: async () => (await codecs.codec()).encode(record.id) };
}

describe('ImageAccess.view', () => {
  it('counts one more view and shows the count after it', async () => {
    const { access, idEncoded, images } = setup();
    expect((await access.view(await idEncoded())).views).toBe(5);
    expect(images.records.get(7)?.views).toBe(5);
  });

  it('still shows the page when the view cannot be counted (a throttled counter), with the count read', async () => {
    const { access, idEncoded, images, warnings } = setup();
    images.addView = () => Promise.reject(new Error('throughput exceeded on the item'));
    expect((await access.view(await idEncoded())).views).toBe(4);
    expect(warnings).toEqual(['view not counted']);
  });

  it('answers 404 for an id that holds no image', async () => {
    const { access } = setup();
    await expect(access.view('nope')).rejects.toMatchObject({ kind: 'NotFound' });
  });
});
