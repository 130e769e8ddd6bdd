import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { completeBmpHeader, type RawPixels } from '../../../functions/imaging/decode-foreign';
import { DecodeTimeout, ForeignDecoder } from '../../../functions/imaging/foreign-decoder';
import { MalformedImageError } from '../../../functions/imaging/malformed';
import { makeBmp, makeMonochromeBmp } from '../../support/images';

/** BMP and HEIC pixels are made in a worker: the caller's thread turns meanwhile, and a decode past its time stops. */
const heic = readFileSync(join(__dirname, '..', '..', 'fixtures', 'gradient.heic')); // 96x64
const big = makeMonochromeBmp(6000, 6000); // 36 MP from 4.5 MB: about a second of bmp-ts
const bmpOf = (bytes: Buffer) => ({ format: 'bmp' as const, bytes, header: completeBmpHeader(bytes) });
const always = (ms: number) => () => ms;

/** V8's full collection, reached as jest's leak detector reaches it. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** How many times a 1 ms timer fired while `work` ran: none when the work held this thread throughout. */
async function turnsDuring(work: Promise<unknown>): Promise<{ turns: number; outcome: unknown }> {
  let turns = 0;
  const timer = setInterval(() => (turns += 1), 1);
  const outcome = await work.catch((error: unknown) => error);
  clearInterval(timer);
  return { turns, outcome };
}

describe('the decoder of BMP and HEIC', () => {
  const decoder = new ForeignDecoder();
  afterAll(() => decoder.close());

  it('decodes a BMP to its pixels, in its byte order and channels', async () => {
    const pixels = await decoder.decode(bmpOf(makeBmp(3, 2, 24)), always(10_000));
    expect([pixels.width, pixels.height, pixels.channels, pixels.data.length]).toEqual([3, 2, 3, 18]);
    const alpha = await decoder.decode(bmpOf(makeBmp(3, 2, 32)), always(10_000));
    expect([alpha.channels, alpha.data.length]).toEqual([4, 24]);
    const mono = await decoder.decode(bmpOf(makeMonochromeBmp(16, 1)), always(10_000));
    // 0x0f: four pixels of colour 0 (black), four of colour 1 (white), twice
    expect([...mono.data.subarray(0, 3)]).toEqual([0, 0, 0]);
    expect([...mono.data.subarray(12, 15)]).toEqual([255, 255, 255]);
  });

  it('keeps the calling thread free while a large BMP is decoded', async () => {
    const { turns, outcome } = await turnsDuring(decoder.decode(bmpOf(big), always(60_000)));
    expect(outcome).toMatchObject({ width: 6000, height: 6000, channels: 3 });
    expect(turns).toBeGreaterThan(20);
  });

  it('stops a decode past its time, ending its worker, and the next decode gets a new one', async () => {
    const ended = jest.spyOn(Worker.prototype, 'terminate');
    const { turns, outcome } = await turnsDuring(decoder.decode(bmpOf(big), always(50)));
    expect(outcome).toBeInstanceOf(DecodeTimeout);
    expect(turns).toBeGreaterThan(0);
    expect(ended).toHaveBeenCalledTimes(1);
    ended.mockRestore();
    const after = await decoder.decode(bmpOf(makeBmp(4, 4, 24)), always(10_000));
    expect([after.width, after.height]).toEqual([4, 4]);
  });

  it('ends a decode whose upload was refused meanwhile, with the refusal, and one refused before it starts', async () => {
    const ended = jest.spyOn(Worker.prototype, 'terminate');
    const refusal = new Error('Flooding detected');
    const stopping = new AbortController();
    setTimeout(() => stopping.abort(refusal), 50);
    const { outcome } = await turnsDuring(decoder.decode(bmpOf(big), always(60_000), stopping.signal));
    // (its message only: a diff of the pixels a decode not ended would have answered takes the test's whole heap)
    expect(outcome instanceof Error ? outcome.message : 'pixels').toBe(refusal.message);
    // its worker ended (the count may hold another suite's idle worker too: Worker.prototype is the process's)
    expect(ended).toHaveBeenCalled();
    ended.mockRestore();
    await expect(decoder.decode(bmpOf(makeBmp(4, 4, 24)), always(10_000), stopping.signal)).rejects.toBe(refusal);
    const after = await decoder.decode(bmpOf(makeBmp(4, 4, 24)), always(10_000), new AbortController().signal);
    expect([after.width, after.height]).toEqual([4, 4]);
  });

  it('reads the time left when its decode starts, after the decodes before it', async () => {
    let asked = 0;
    const first = decoder.decode(bmpOf(makeBmp(4, 4, 24)), always(10_000));
    const second = decoder.decode(bmpOf(makeBmp(4, 4, 24)), () => ((asked += 1), 0));
    expect(asked).toBe(0);
    await first;
    await expect(second).rejects.toBeInstanceOf(DecodeTimeout);
    expect(asked).toBe(1);
  });

  it('decodes a HEIC with libheif, and refuses one holding more pixels than allowed', async () => {
    const pixels = await decoder.decode({ format: 'heic', bytes: heic, maxPixels: 96 * 64 }, always(30_000));
    expect([pixels.width, pixels.height, pixels.channels, pixels.data.length]).toEqual([96, 64, 4, 96 * 64 * 4]);
    const refused = decoder.decode({ format: 'heic', bytes: heic, maxPixels: 96 * 64 - 1 }, always(30_000));
    await expect(refused).rejects.toThrow(new MalformedImageError('HEIC holds more pixels than its header said'));
    const broken = decoder.decode({ format: 'heic', bytes: heic.subarray(0, 200), maxPixels: 96 * 64 }, always(30_000));
    await expect(broken).rejects.toBeInstanceOf(MalformedImageError);
  });

  it('lets go of the pixels it answered once its caller does', async () => {
    let pixels: RawPixels | undefined = await decoder.decode(bmpOf(makeBmp(64, 64, 24)), always(10_000));
    const answered = new WeakRef(pixels);
    pixels = undefined;
    await new Promise(setImmediate);
    collectGarbage();
    expect(answered.deref()).toBeUndefined();
  });

  it('ends a worker left idle, and starts another for the next decode', async () => {
    const idle = new ForeignDecoder(20);
    const ended = jest.spyOn(Worker.prototype, 'terminate');
    try {
      await idle.decode(bmpOf(makeBmp(4, 4, 24)), always(10_000));
      // only this decoder's worker counts: the suite's other decoder may end its own idle worker meanwhile
      const worker = idle['worker'];
      const endsOfIt = (): number => ended.mock.contexts.filter((ending) => ending === worker).length;
      expect(worker).toBeDefined();
      expect(endsOfIt()).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(endsOfIt()).toBe(1);
      expect((await idle.decode(bmpOf(makeBmp(5, 4, 24)), always(10_000))).width).toBe(5);
    } finally {
      ended.mockRestore();
      await idle.close();
    }
  });

  it('leaves the bytes it was given as they were', async () => {
    const bytes = makeBmp(5, 5, 24);
    const copy = Buffer.from(bytes);
    await decoder.decode(bmpOf(bytes), always(10_000));
    expect(bytes.equals(copy)).toBe(true);
  });
});
