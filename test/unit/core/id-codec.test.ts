import { IdCodec } from '../../../functions/core/image/id-codec';

describe('IdCodec', () => {
  it.each([
    ['', 0, 1, 'k'],
    ['', 0, 62, 'k1'],
    ['', 0, 1000, 'ce'],
    ['', 0, 123456, 'ZLT'],
    ['', 999, 1, 'cL'],
    ['', 999, 2, 'ZT'],
    ['changeme', 999, 1, 'Gs'],
    ['changeme', 999, 1000, 'zdmE'],
  ])('encodes with salt %j and padding %i the id %i as %s', (salt, padding, id, encoded) => {
    const codec = new IdCodec(salt, padding);
    expect(codec.encode(id)).toBe(encoded);
    expect(codec.decode(encoded)).toBe(id);
  });

  it('round-trips many ids with a random salt', () => {
    const codec = new IdCodec('4f1c7d0e9a2b', 999);
    for (let id = 1; id < 5000; id += 7) expect(codec.decode(codec.encode(id))).toBe(id);
    expect(codec.decode(codec.encode(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('refuses text that is not the canonical encoding of an id', () => {
    const codec = new IdCodec('', 999);
    expect(codec.decode('k')).toBeUndefined(); // 1 is not a multiple of the padding
    expect(codec.decode('')).toBeUndefined();
    expect(codec.decode('c-L')).toBeUndefined();
    expect(codec.decode('../cL')).toBeUndefined();
    const zero = new IdCodec('', 0).encode(62).charAt(1); // the alphabet's digit 0
    expect(codec.decode(`${zero}cL`)).toBeUndefined();
    expect(codec.decode('Z'.repeat(17))).toBeUndefined();
  });

  it('rejects ids that are not positive integers', () => {
    const codec = new IdCodec('', 999);
    expect(() => codec.encode(0)).toThrow(RangeError);
    expect(() => codec.encode(1.5)).toThrow(RangeError);
  });
});
