import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { ServiceError } from '../../../functions/core/errors';
import { SharpImageProcessor } from '../../../functions/imaging/sharp-image-processor';
import { MalformedImageError } from '../../../functions/imaging/malformed';
import { stripMetadata, type StrippableFormat } from '../../../functions/imaging/strip-metadata';
import {
  makeAnimated,
  makeAvifWithMetadata,
  makeBmp,
  makeGifWithMetadata,
  makeJpeg,
  makeJpegWithMetadata,
  makePng,
  makePngWithMetadata,
  makeTiff,
  makeWebpWithMetadata,
} from '../../support/images';

/** One edit of a seed image: a byte changed, a run cut out, bytes put in, or the end cut off. */
type Edit = { kind: 'set' | 'remove' | 'insert' | 'truncate'; at: number; value: number; length: number };

const edit: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom('set', 'remove', 'insert', 'truncate'),
  at: fc.nat(),
  value: fc.nat({ max: 255 }),
  length: fc.integer({ min: 1, max: 64 }),
});

function applyEdits(seed: Buffer, edits: Edit[]): Buffer {
  let bytes = Buffer.from(seed);
  for (const change of edits) {
    if (bytes.length === 0) break;
    const at = change.at % bytes.length;
    if (change.kind === 'set') bytes[at] = change.value;
    else if (change.kind === 'remove') bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + change.length)]);
    else if (change.kind === 'insert')
      bytes = Buffer.concat([bytes.subarray(0, at), Buffer.alloc(change.length, change.value), bytes.subarray(at)]);
    else bytes = bytes.subarray(0, at);
  }
  return bytes;
}

let seeds: Array<{ name: string; format: StrippableFormat | undefined; bytes: Buffer }>;

beforeAll(async () => {
  seeds = [
    { name: 'jpeg', format: 'jpeg', bytes: await makeJpeg(48, 32, { orientation: 6 }) },
    { name: 'jpeg+metadata', format: 'jpeg', bytes: await makeJpegWithMetadata(40, 30) },
    { name: 'png', format: 'png', bytes: await makePng(24, 16, { alpha: true }) },
    { name: 'png+metadata', format: 'png', bytes: await makePngWithMetadata(24, 16) },
    { name: 'gif', format: 'gif', bytes: await makeGifWithMetadata() },
    { name: 'animated webp', format: 'webp', bytes: await makeAnimated('webp', 24, 16, 3) },
    { name: 'webp+metadata', format: 'webp', bytes: await makeWebpWithMetadata() },
    { name: 'avif', format: 'avif', bytes: await makeAvifWithMetadata() },
    { name: 'bmp', format: undefined, bytes: makeBmp(20, 12, 8) },
    { name: 'tiff', format: undefined, bytes: await makeTiff(20, 12) },
    { name: 'heic', format: undefined, bytes: readFileSync(join(__dirname, '..', '..', 'fixtures', 'gradient.heic')) },
  ];
});

const processor = new SharpImageProcessor({
  maxPixels: 2_000_000,
  maxHeicPixels: 24_000_000,
  timeLimitSeconds: 10,
  maxFrames: 20,
  thumbSize: 16,
  mediumWidth: 24,
  keepMetadata: false,
});

async function outcome(bytes: Buffer): Promise<string> {
  try {
    const result = await processor.process(bytes, { targetWidth: undefined });
    expect(result.original.bytes.length).toBeGreaterThan(0);
    expect(result.thumb.width).toBe(16);
    return 'stored';
  } catch (error) {
    if (error instanceof ServiceError && (error.kind === 'UnsupportedFormat' || error.kind === 'ImageTooLarge')) {
      // A refusal must come from the input, not from a bug: our parsers fail with MalformedImageError, libvips with
      // its own messages; a TypeError or RangeError means some code read past what it checked.
      const cause: unknown = error.cause;
      if (cause instanceof TypeError || cause instanceof RangeError || cause instanceof ReferenceError) throw cause;
      return error.kind;
    }
    throw error;
  }
}

describe('imaging under hostile input', () => {
  it('ends every mutated or truncated image in a stored image, a 413 or a 415', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.array(edit, { minLength: 1, maxLength: 4 }), async (pick, edits) => {
        const seed = seeds[pick % seeds.length]!;
        seen.add(await outcome(applyEdits(seed.bytes, edits)));
      }),
      { numRuns: 400, seed: 20261122 },
    );
    // the property is only worth something if both ends were reached
    expect(seen).toContain('stored');
    expect(seen).toContain('UnsupportedFormat');
  });

  it('ends random bytes, and random bytes behind a real magic number, in a 415', async () => {
    const magics = [
      Buffer.from([0xff, 0xd8, 0xff]),
      Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'),
      Buffer.from('GIF89a'),
      Buffer.from('RIFF\0\0\0\0WEBP'),
      Buffer.from('BM'),
      Buffer.from('II*\0'),
    ];
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.uint8Array({ minLength: 0, maxLength: 512 }), async (pick, tail) => {
        const bytes = Buffer.concat([pick % 2 === 0 ? magics[pick % magics.length]! : Buffer.alloc(0), Buffer.from(tail)]);
        expect(['UnsupportedFormat', 'ImageTooLarge']).toContain(await outcome(bytes));
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('strips mutated containers or refuses them with MalformedImageError, nothing else', () => {
    const strippable = seeds.filter(
      (seed): seed is { name: string; format: StrippableFormat; bytes: Buffer } => seed.format !== undefined,
    );
    fc.assert(
      fc.property(fc.nat(), fc.array(edit, { minLength: 1, maxLength: 6 }), fc.boolean(), (pick, edits, keepMetadata) => {
        const seed = strippable[pick % strippable.length]!;
        const bytes = applyEdits(seed.bytes, edits);
        try {
          const stripped = stripMetadata(seed.format, bytes, { keepMetadata });
          expect(stripped.length).toBeLessThanOrEqual(bytes.length + 1);
        } catch (error) {
          if (!(error instanceof MalformedImageError)) throw error;
        }
      }),
      { numRuns: 5000, seed: 42 },
    );
  });
});
