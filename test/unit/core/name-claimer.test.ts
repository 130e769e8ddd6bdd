import { NameClaimer } from '../../../functions/core/upload/name-claimer';
import type { PendingUpload } from '../../../functions/core/ports';
import { InMemoryImageRepository } from '../../support/in-memory';

function setup() {
  const images = new InMemoryImageRepository();
  const tried: string[] = [];
  const claimName = images.claimName.bind(images);
  images.claimName = async (upload: PendingUpload, sweepAtMs: number) => {
    tried.push(upload.name);
    return claimName(upload, sweepAtMs);
  };
  let hex = 0;
  const random = { hex: (chars: number) => (hex += 1).toString(16).padStart(chars, '0'), safeInteger: () => 1 };
  const claimer = new NameClaimer(images, random, 'original');
  const claim = (baseName: string, folder = '2026/11/23', imageId = 1) =>
    claimer.claim({ baseName, extension: 'png', folder, imageId, idEncoded: 'x', nowMs: 0 });
  return { images, tried, claim };
}

describe('NameClaimer', () => {
  it('claims the uploaded name, then a suffixed one when it is taken, recording each upload as pending', async () => {
    const { claim, images } = setup();
    expect((await claim('image', '2026/11/23', 1)).name).toBe('image');
    const second = await claim('image', '2026/11/23', 2);
    expect(second.name).toMatch(/^image[0-9a-f]{16}$/);
    expect(second.keys).toEqual({
      original: `images/2026/11/23/${second.name}.png`,
      thumb: `images/2026/11/23/${second.name}.th.png`,
      medium: `images/2026/11/23/${second.name}.md.png`,
    });
    expect(await images.findPending(second.keys.original)).toMatchObject({ imageId: 2, keys: second.keys });
  });

  it('writes the claim of a popular name once per instance: later uploads of it go straight to a suffixed name', async () => {
    const { claim, tried } = setup();
    // each upload with an image id of its own (a claim of the same id counts as its own, written again)
    for (let upload = 0; upload < 20; upload += 1) await claim('image', '2026/11/23', upload + 1);
    expect(tried.filter((name) => name === 'images/2026/11/23/image.png')).toHaveLength(2); // the claim, then one refusal
    expect(tried).toHaveLength(21);
    // another day's folder is a name of its own
    expect((await claim('image', '2026/11/24')).name).toBe('image');
  });
});
