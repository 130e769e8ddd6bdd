import { createHash } from 'node:crypto';
import { md5Hex, md5HexInTurns } from '../../../functions/core/hashes';

describe('md5HexInTurns', () => {
  const MiB = 1024 * 1024;
  const bytesOf = (size: number): Buffer => Buffer.alloc(size, 'a picture of 37 bytes, over and over.');

  it.each([0, 1, 4 * MiB - 1, 4 * MiB, 4 * MiB + 1, 9 * MiB + 3])('hashes %s bytes as one md5 would', async (size) => {
    const bytes = bytesOf(size);
    const expected = createHash('md5').update(bytes).digest('hex');
    expect(await md5HexInTurns(bytes)).toBe(expected);
    expect(md5Hex(bytes)).toBe(expected);
  });

  it('lets the event loop turn while it hashes 32 MB, a slice at a time', async () => {
    const bytes = bytesOf(32 * MiB);
    const order: string[] = [];
    const hashing = md5HexInTurns(bytes).then((hex) => order.push(hex));
    // one md5 of the whole would end before any callback of the loop's next turn
    setImmediate(() => order.push('turned'));
    await hashing;
    expect(order).toEqual(['turned', md5Hex(bytes)]);
  });
});
