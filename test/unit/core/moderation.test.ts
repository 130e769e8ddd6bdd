import { createHash } from 'node:crypto';
import {
  canonicalRange,
  comparableHashes,
  inRange,
  parseHashList,
  PICTURE_MATCH_DISTANCE,
  UploadGate,
} from '../../../functions/core/moderation/moderation';
import { HashIndex } from '../../../functions/core/moderation/hash-index';
import { countTurns } from '../../support/turns';
import { FakeClock, InMemoryModeration, InMemoryPictureBlocks } from '../../support/in-memory';

describe('canonicalRange', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7/32'],
    [' 203.0.113.77/24 ', '203.0.113.0/24'],
    ['2001:DB8:0:0::1', '2001:db8::1/128'],
    ['2001:db8:1234:5678:9::/64', '2001:db8:1234:5678::/64'],
    ['::ffff:198.51.100.9', '198.51.100.9/32'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    // IPv4-mapped ranges are their IPv4 ranges: clients are compared as IPv4
    ['::ffff:127.0.0.40/128', '127.0.0.40/32'],
    ['::FFFF:203.0.113.77/120', '203.0.113.0/24'],
    ['::ffff:0:0/96', '0.0.0.0/0'],
  ])('reads %s as %s', (text, range) => {
    expect(canonicalRange(text)).toBe(range);
  });

  it('bans a client by the IPv4-mapped range that names it (it matched nothing before)', () => {
    expect(inRange('127.0.0.40', canonicalRange('::ffff:127.0.0.40/128') ?? '')).toBe(true);
    expect(inRange('::ffff:127.0.0.40', canonicalRange('::ffff:127.0.0.40/128') ?? '')).toBe(true);
    expect(inRange('203.0.113.9', canonicalRange('::ffff:203.0.113.0/120') ?? '')).toBe(true);
  });

  it.each([
    '300.1.1.1',
    '203.0.113.0/33',
    '2001:db8::/129',
    'example.com',
    '',
    '1.2.3.4/-1',
    '10.0.0.1/8/8',
    '::ffff:1.2.3.4/95',
  ])('refuses %j', (text) => {
    expect(canonicalRange(text)).toBeUndefined();
  });
});

describe('inRange', () => {
  it('matches addresses of the same family inside the range, IPv4-mapped IPv6 as IPv4', () => {
    expect(inRange('203.0.113.200', '203.0.113.0/24')).toBe(true);
    expect(inRange('203.0.114.1', '203.0.113.0/24')).toBe(false);
    expect(inRange('::ffff:203.0.113.9', '203.0.113.0/24')).toBe(true);
    expect(inRange('2001:db8:1234:5678:ffff::1', '2001:db8:1234:5678::/64')).toBe(true);
    expect(inRange('2001:db8:1234:5679::1', '2001:db8:1234:5678::/64')).toBe(false);
    expect(inRange('203.0.113.9', '::/0')).toBe(false);
    expect(inRange('not an address', '0.0.0.0/0')).toBe(false);
  });
});

describe('UploadGate', () => {
  const refusal = { kind: 'Banned', message: 'Uploads from your address are not allowed' };

  it('refuses a banned address, reads the bans once per cache period, and lets a ban lapse at its end', async () => {
    const clock = new FakeClock();
    const moderation = new InMemoryModeration();
    const all = jest.spyOn(moderation, 'all');
    await moderation.add({ range: '203.0.113.0/24', untilMs: clock.nowMs() + 60_000 });
    const gate = new UploadGate(moderation, moderation, new InMemoryPictureBlocks(), clock, 30_000);
    await expect(gate.admit('203.0.113.5')).rejects.toMatchObject(refusal);
    await expect(gate.admit('198.51.100.5')).resolves.toBeUndefined();
    expect(all).toHaveBeenCalledTimes(1);
    // an unban is seen once the cache period has passed, not before
    await moderation.remove('203.0.113.0/24');
    clock.advance(29_999);
    await expect(gate.admit('203.0.113.5')).rejects.toMatchObject(refusal);
    clock.advance(1);
    await expect(gate.admit('203.0.113.5')).resolves.toBeUndefined();
    expect(all).toHaveBeenCalledTimes(2);
    // a ban with an end refuses until then, without a new read
    await moderation.add({ range: '2001:db8::/32', untilMs: clock.nowMs() + 40_000 });
    clock.advance(30_000);
    await expect(gate.admit('2001:db8:5::1')).rejects.toMatchObject(refusal);
    clock.advance(10_000);
    await expect(gate.admit('2001:db8:5::1')).resolves.toBeUndefined();
  });

  it('refuses blocked bytes only, as sent or as they would be stored (metadata, bytes after the end removed)', async () => {
    const moderation = new InMemoryModeration();
    await moderation.block('0123456789abcdef0123456789abcdef');
    const gate = new UploadGate(moderation, moderation, new InMemoryPictureBlocks(), new FakeClock(), 30_000);
    const refusal = { kind: 'Blocked', message: 'This image was taken down and may not be uploaded again' };
    await expect(gate.checkBytes(['0123456789abcdef0123456789abcdef', 'e'.repeat(32)])).rejects.toMatchObject(refusal);
    await expect(gate.checkBytes(['e'.repeat(32), '0123456789abcdef0123456789abcdef'])).rejects.toMatchObject(refusal);
    await expect(gate.checkBytes(['ffffffffffffffffffffffffffffffff', 'e'.repeat(32)])).resolves.toBeUndefined();
  });

  /** A hash `bits` bits away from `hash` (its first bits flipped). */
  const away = (hash: string, bits: number): string => {
    const digits = [...hash].map((digit) => Number.parseInt(digit, 16));
    for (let bit = 0; bit < bits; bit += 1) digits[bit >> 2] = (digits[bit >> 2] ?? 0) ^ (8 >> (bit & 3));
    return digits.map((digit) => digit.toString(16)).join('');
  };

  it(`refuses a picture within ${PICTURE_MATCH_DISTANCE} bits of a blocked one, turned or not, and nothing farther`, async () => {
    const clock = new FakeClock();
    const pictures = new InMemoryPictureBlocks();
    const blocked = 'a5'.repeat(32);
    await pictures.block(['f1'.repeat(32), blocked, '0e'.repeat(32)]);
    const gate = new UploadGate(new InMemoryModeration(), new InMemoryModeration(), pictures, clock, 30_000);
    const upload = (queries: string[]) => ({ perceptual: { hashes: [], queries: [queries], quality: 100 } });
    const other = 'f0'.repeat(32);
    await expect(gate.checkPicture(upload([other, away(blocked, PICTURE_MATCH_DISTANCE)]))).rejects.toMatchObject({
      kind: 'Blocked',
    });
    await expect(gate.checkPicture(upload([other, away(blocked, PICTURE_MATCH_DISTANCE + 1)]))).resolves.toBeUndefined();
    // an animation has no picture hash (its bytes are checked by checkBytes)
    await expect(gate.checkPicture({})).resolves.toBeUndefined();
  });

  it("checks an animation's queries a frame at a time, the event loop turning between, up to the last", async () => {
    const pictures = new InMemoryPictureBlocks();
    const blocked = 'a5'.repeat(32);
    await pictures.block([blocked]);
    const gate = new UploadGate(new InMemoryModeration(), new InMemoryModeration(), pictures, new FakeClock(), 30_000);
    const turns = countTurns();
    const slices: Array<{ queries: number; turn: number }> = [];
    const anyWithin = HashIndex.prototype.anyWithin;
    const search = jest.spyOn(HashIndex.prototype, 'anyWithin').mockImplementation(function (this: HashIndex, hexes, distance) {
      slices.push({ queries: hexes.length, turn: turns.turn() });
      return anyWithin.call(this, hexes, distance);
    });
    try {
      // 6 frames of 55 queries, the blocked picture's hash the very last
      const unrelated = (n: number) => createHash('sha256').update(String(n)).digest('hex');
      const frames = Array.from({ length: 6 }, (_, frame) => Array.from({ length: 55 }, (_, n) => unrelated(frame * 55 + n)));
      frames[5]?.splice(54, 1, away(blocked, 3));
      await expect(gate.checkPicture({ perceptual: { queries: frames } })).rejects.toMatchObject({ kind: 'Blocked' });
    } finally {
      turns.stop();
      search.mockRestore();
    }
    expect(slices.map((slice) => slice.queries)).toEqual([55, 55, 55, 55, 55, 55]);
    expect(new Set(slices.map((slice) => slice.turn)).size).toBe(slices.length);
  });

  it('reads the list once per cache period, and the hashes and a new index only when its version changed', async () => {
    const clock = new FakeClock();
    const pictures = new InMemoryPictureBlocks();
    const reads = jest.spyOn(pictures, 'hashes');
    const gate = new UploadGate(new InMemoryModeration(), new InMemoryModeration(), pictures, clock, 30_000);
    const hash = '3c'.repeat(32);
    const same = { perceptual: { hashes: [hash], queries: [[hash]], quality: 100 } };
    await gate.admit('203.0.113.9');
    await expect(gate.checkPicture(same)).resolves.toBeUndefined();
    await pictures.block([hash]);
    await expect(gate.checkPicture(same)).resolves.toBeUndefined();
    clock.advance(30_000);
    await expect(gate.checkPicture(same)).rejects.toMatchObject({ kind: 'Blocked' });
    clock.advance(30_000);
    await expect(gate.checkPicture(same)).rejects.toMatchObject({ kind: 'Blocked' });
    // admit's read and checkPicture's were one; each later read sent the version the gate holds
    expect(reads.mock.calls).toEqual([[undefined], [''], ['v1']]);
    const answers = await Promise.all(reads.mock.results.map((result) => result.value as Promise<{ hashes?: Uint8Array }>));
    expect(answers.map((answer) => answer.hashes !== undefined)).toEqual([true, true, false]);
  });

  it('compares a picture only once some picture is blocked, or while the list cannot be read', async () => {
    const clock = new FakeClock();
    const pictures = new InMemoryPictureBlocks();
    const gate = new UploadGate(new InMemoryModeration(), new InMemoryModeration(), pictures, clock, 30_000);
    await expect(gate.pictureCheck().compared).resolves.toBe(false);
    await pictures.block(['5a'.repeat(32)]);
    clock.advance(30_000);
    await expect(gate.pictureCheck().compared).resolves.toBe(true);
    const failing = new InMemoryPictureBlocks();
    jest.spyOn(failing, 'hashes').mockRejectedValueOnce(new Error('store down'));
    const unread = new UploadGate(new InMemoryModeration(), new InMemoryModeration(), failing, clock, 30_000);
    await expect(unread.pictureCheck().compared).resolves.toBe(true);
  });

  it("reads the list once for an upload's two questions, even with no cache, and again only when that read failed", async () => {
    const pictures = new InMemoryPictureBlocks();
    const hash = '5a'.repeat(32);
    await pictures.block([hash]);
    const reads = jest.spyOn(pictures, 'hashes');
    const gate = new UploadGate(new InMemoryModeration(), new InMemoryModeration(), pictures, new FakeClock(), 0);
    const upload = gate.pictureCheck();
    await expect(upload.compared).resolves.toBe(true);
    await expect(upload.check({ perceptual: { queries: [[hash]] } })).rejects.toMatchObject({ kind: 'Blocked' });
    expect(reads).toHaveBeenCalledTimes(1);
    reads.mockRejectedValueOnce(new Error('store down'));
    const unlucky = gate.pictureCheck();
    await expect(unlucky.compared).resolves.toBe(true);
    await expect(unlucky.check({ perceptual: { queries: [[hash]] } })).rejects.toMatchObject({ kind: 'Blocked' });
    expect(reads).toHaveBeenCalledTimes(3);
  });

  it('waits for the list at the picture check, and reads it again there when the read at admission failed', async () => {
    const pictures = new InMemoryPictureBlocks();
    const hash = '5a'.repeat(32);
    await pictures.block([hash]);
    jest.spyOn(pictures, 'hashes').mockRejectedValueOnce(new Error('store down'));
    const gate = new UploadGate(new InMemoryModeration(), new InMemoryModeration(), pictures, new FakeClock(), 30_000);
    await expect(gate.admit('203.0.113.9')).resolves.toBeUndefined();
    await expect(gate.checkPicture({ perceptual: { queries: [[hash]] } })).rejects.toMatchObject({
      kind: 'Blocked',
    });
  });
});

/** A hash with half its bits set, as a picture with detail makes, unique per `n`. */
const detailed = (n: number): string => `${n.toString(16).padStart(4, '0')}${'a5'.repeat(30)}`;

describe('parseHashList', () => {
  it('reads every line ending, skips hashes under quality 50 in every spelling, and counts them', () => {
    const zero = '0'.repeat(64);
    const text = [
      '\ufeff# a list',
      `${detailed(1)},90`,
      `${detailed(2)},"49"\r${detailed(3)},49.0\r\n${detailed(4)},49%`,
      `${detailed(5)},-1\u2028${detailed(6)},049;flat.jpg`,
      `${detailed(7)}\t100\u2029${detailed(8)},50`,
      `${detailed(9)},photo.jpg`,
      // no quality given, but a flat picture's: none of its bits set
      zero,
      `${detailed(1).toUpperCase()},95`,
    ].join('\n');
    expect(parseHashList(text)).toEqual({
      hashes: [detailed(1), detailed(7), detailed(8), detailed(9)],
      skipped: 6,
    });
  });

  it('names the first line it cannot read: no hash, or a quality over 100', () => {
    expect(parseHashList(`${detailed(1)}\nnot-a-hash`)).toEqual({
      badLine: 2,
      problem: 'holds no PDQ hash (64 hex digits): not-a-hash',
    });
    expect(parseHashList(`${detailed(1)},150`)).toEqual({ badLine: 1, problem: `has a quality over 100: ${detailed(1)},150` });
    // two hashes on a line: the second was taken for a quality (none), and a third dropped
    const three = `${detailed(1)} ${detailed(2)} ${detailed(3)}`;
    expect(parseHashList(`# a list\n${three}`)).toEqual({
      badLine: 2,
      problem: `holds more than one PDQ hash (one a line): ${three.slice(0, 80)}`,
    });
    // a CSV's column of 64 hex digits after the hash (a SHA-256 of the file) is a column, not a second hash
    const sha256 = 'e3'.repeat(32);
    expect(parseHashList(`${detailed(1)},${sha256}\n${detailed(2)},90,${sha256}`)).toEqual({
      hashes: [detailed(1), detailed(2)],
      skipped: 0,
    });
  });

  it('takes every hash whatever its quality for a list of blocks to lift', () => {
    const text = [`${detailed(1)},10`, '0'.repeat(64), `${detailed(2)},90`].join('\n');
    expect(parseHashList(text, { every: true })).toEqual({ hashes: [detailed(1), '0'.repeat(64), detailed(2)], skipped: 0 });
    expect(parseHashList(text)).toEqual({ hashes: [detailed(2)], skipped: 2 });
  });
});

describe('comparableHashes', () => {
  it("keeps a record's hashes once each, in lower case, and none of a picture whose own hash is under quality 50", () => {
    expect(comparableHashes({ hashes: [detailed(1).toUpperCase(), detailed(1)], quality: 80 })).toEqual([detailed(1)]);
    // a record made before hashes were sorted by quality: a sticker's zeros, and the zeros inside its margin
    expect(comparableHashes({ hashes: ['0'.repeat(64), '0'.repeat(64)], quality: 0 })).toEqual([]);
    expect(comparableHashes(undefined)).toEqual([]);
  });
});
