import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { NOT_IMAGES } from '../support/images';
import { startFreshLocalProcess, type LocalProcess } from '../support/local-process';

/**
 * The flood limit bounds the imaging's cost, through `npm start` (`docs/rules.md`): an upload refused after its
 * imaging began (at the time limit, or a picture cut short) keeps its slot, one refused before (not an image) does not,
 * and a client over its limit is answered 429, its decode ended, not 413 at the time limit.
 */
jest.setTimeout(90_000);

const API_KEY = 'costly-refusals-key-0123456789';
const PHOTO = readFileSync(join(__dirname, '..', 'fixtures', 'photos', 'coffee.jpg'));
// the month's window alone: no window turns over while the test runs (but at the very end of a month)
const LIMITS = { minute: 0, hour: 0, day: 0, week: 0, month: 2 };
let server: LocalProcess;

beforeAll(async () => {
  server = await startFreshLocalProcess('costly-refusals', {
    API_KEY,
    FLOOD_LIMITS: JSON.stringify(LIMITS),
    DUPLICATES: 'allow',
    IMAGING_TIME_LIMIT_SECONDS: '1',
  });
});

afterAll(() => server?.stop());

async function upload(bytes: Buffer, name: string): Promise<{ status: number; code: unknown }> {
  const form = new FormData();
  form.set('source', new Blob([new Uint8Array(bytes)]), name);
  form.set('key', API_KEY);
  const response = await fetch(`${server.url}/api/1/upload`, { method: 'POST', body: form });
  const body = (await response.json()) as { error?: { code?: unknown } };
  return { status: response.status, code: body.error?.code };
}

/**
 * 300 frames of 64x65 noise (1.5 MB): its thumb quantises 18 of them enlarged, seconds of imaging (the time limit 1 s).
 */
async function costlyAnimation(): Promise<Buffer> {
  const [width, height, frames] = [64, 65, 300];
  const pixels = Buffer.alloc(width * height * 3 * frames);
  let state = 12_345;
  for (let index = 0; index < pixels.length; index += 1) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    pixels[index] = state >>> 24;
  }
  return sharp(pixels, { raw: { width, height: height * frames, channels: 3, pageHeight: height } })
    .gif({ loop: 0 })
    .toBuffer();
}

describe('refusals after real imaging work count against the client, through npm start', () => {
  it('counts a time-limit refusal and a picture cut short, not bytes refused unread, and answers 429 after', async () => {
    const animation = await costlyAnimation();
    // refused by their header, before any decode: they never count
    for (const [name, bytes] of Object.entries(NOT_IMAGES).slice(0, 3)) {
      expect(await upload(bytes, name)).toEqual({ status: 415, code: 613 });
    }
    // the first slot: the imaging ran to its time limit
    expect(await upload(animation, 'noise.gif')).toEqual({ status: 413, code: 615 });
    // the second: decoded, then refused as cut short
    const cut = Buffer.concat([PHOTO.subarray(0, Math.floor(PHOTO.length * 0.6)), Buffer.from([0xff, 0xd9])]);
    expect(await upload(cut, 'cut.jpg')).toEqual({ status: 415, code: 613 });
    // the client has used its month: a good photo is refused, and so is the costly animation before its decode (before,
    // its imaging ran to the time limit and answered 413: the slot was known only after it)
    expect(await upload(PHOTO, 'coffee.jpg')).toEqual({ status: 429, code: 130 });
    expect(await upload(animation, 'noise.gif')).toEqual({ status: 429, code: 130 });
  });
});
