import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { gifBlocks } from '../../functions/imaging/containers/gif';
import { startFreshLocalProcess, type LocalProcess } from '../support/local-process';

/**
 * Bytes that do not decode whole are refused, 415 code 613, through `npm start`: a JPEG cut short with its end marker
 * put back, and a GIF whose image data was cut at a sub-block with its terminator and trailer put back (each a whole
 * container, which libvips decoded with the missing part blank); the warnings camera files carry still pass.
 */
jest.setTimeout(90_000);

const API_KEY = 'cut-short-key-0123456789';
const PHOTOS = join(__dirname, '..', 'fixtures', 'photos');
const EOI = Buffer.from([0xff, 0xd9]);
let server: LocalProcess;

beforeAll(async () => {
  server = await startFreshLocalProcess('cut-short', { API_KEY, FLOOD_LIMITS: '{}', DUPLICATES: 'allow' });
});

afterAll(() => server?.stop());

async function upload(bytes: Buffer, name: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new FormData();
  form.set('source', new Blob([new Uint8Array(bytes)]), name);
  form.set('key', API_KEY);
  const response = await fetch(`${server.url}/api/1/upload`, { method: 'POST', body: form });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const REFUSED: Record<string, unknown> = {
  status: 415,
  body: expect.objectContaining({ error: { message: 'Unavailable image format', code: 613 } }) as unknown,
};

/** A JPEG's bytes up to `share` of its length, its end marker put back. */
const cutJpeg = (jpeg: Buffer, share: number): Buffer => Buffer.concat([jpeg.subarray(0, Math.floor(jpeg.length * share)), EOI]);

/** A GIF whose image `index` is cut after half its data sub-blocks: the blocks' terminator and the trailer put back. */
function cutGif(gif: Buffer, index = 0): Buffer {
  const image = [...gifBlocks(gif)].filter((block) => block.kind === 'image')[index];
  if (!image || image.kind !== 'image') throw new Error('no such image');
  const starts: number[] = [];
  for (let pos = image.codeSizeAt + 1; (gif[pos] ?? 0) !== 0; pos += (gif[pos] ?? 0) + 1) starts.push(pos);
  return Buffer.concat([gif.subarray(0, starts[Math.floor(starts.length / 2)]), Buffer.from([0x00, 0x3b])]);
}

describe('pictures that do not decode whole, through npm start', () => {
  const photo = (name: string): Buffer => readFileSync(join(PHOTOS, name));

  it.each(['astronaut.jpg', 'coffee.jpg', 'camera.jpg'])('refuses %s cut short with its end marker put back', async (name) => {
    expect(await upload(cutJpeg(photo(name), 0.6), name)).toMatchObject(REFUSED);
    const progressive = await sharp(photo(name)).jpeg({ quality: 85, progressive: true }).toBuffer();
    expect(await upload(cutJpeg(progressive, 0.8), name)).toMatchObject(REFUSED);
    // the whole photo is taken
    expect((await upload(photo(name), name)).status).toBe(200);
  });

  it('refuses a GIF, still or a frame of an animation, whose image data was cut with its trailer put back', async () => {
    const still = await sharp(photo('chelsea.jpg')).gif().toBuffer();
    expect(await upload(cutGif(still), 'still.gif')).toMatchObject(REFUSED);
    const frames = await Promise.all(
      ['chelsea.jpg', 'rocket.jpg', 'coffee.jpg'].map((name) => sharp(photo(name)).resize(160, 120).raw().toBuffer()),
    );
    const animation = await sharp(Buffer.concat(frames), { raw: { width: 160, height: 360, channels: 3, pageHeight: 120 } })
      .gif({ loop: 0 })
      .toBuffer();
    expect(await upload(cutGif(animation, 1), 'animation.gif')).toMatchObject(REFUSED);
    expect((await upload(still, 'still.gif')).status).toBe(200);
    expect((await upload(animation, 'animation.gif')).status).toBe(200);
  });

  it('takes photos with the warnings camera files carry: odd scan parameters, fill bytes before the end', async () => {
    for (const name of ['astronaut.jpg', 'rocket.jpg']) {
      const jpeg = photo(name);
      // a baseline scan that says it ends at coefficient 62 (some phones' encoders): libjpeg warns and decodes it whole
      const scan = jpeg.indexOf(Buffer.from([0xff, 0xda]));
      const odd = Buffer.from(jpeg);
      odd[scan + jpeg.readUInt16BE(scan + 2)] = 62;
      await expect(sharp(odd, { failOn: 'warning' }).raw().toBuffer()).rejects.toThrow(/Invalid SOS parameters/);
      // fill bytes before the end marker, as some cameras write
      const padded = Buffer.concat([jpeg.subarray(0, jpeg.length - 2), Buffer.alloc(16, 0xff), EOI]);
      for (const bytes of [odd, padded]) {
        const answer = await upload(bytes, name);
        expect([name, answer.status]).toEqual([name, 200]);
      }
    }
  });
});
