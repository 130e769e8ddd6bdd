import type { DueRef, ImageRecord, StoredFile } from '../core/ports';
import { fingerprintOfKey } from './dynamo-duplicate-index';
import { readItem, type ItemReader } from './item-reader';
import { ITEM_PREFIX, SWEEP_SHARDS, sweepShardKey, TABLE_SCHEMA } from './table-schema';

/**
 * An image's record as the table holds it (`DynamoImageRepository`): its keys, its expiry's attributes, and the record
 * written to and read from its item.
 */

/** DynamoDB TTL is only a backstop behind the sweep; it may lag by days. */
const TTL_BACKSTOP_SECONDS = 7 * 86400;

export const imagePk = (id: number): string => `${ITEM_PREFIX.image}${id}`;
export const sweepShard = (id: number): string => sweepShardKey(id % SWEEP_SHARDS);
export const objectKeyPk = (objectKey: string): string => `${ITEM_PREFIX.nameClaim}${objectKey}`;
/** The TTL (epoch seconds) behind an expiry: DynamoDB removes the item a while after the sweep should have. */
export const backstopTtl = (expiresAtMs: number): number => Math.ceil(expiresAtMs / 1000) + TTL_BACKSTOP_SECONDS;
/** An expiry's attributes, set together: the expiry, the sweep index's (due then) and the TTL behind it. */
export const EXPIRY_SET = 'expiresAtMs = :at, sweepShard = :shard, sweepAtMs = :at, #ttl = :ttl';
export const expiryValues = (id: number, expiresAtMs: number): Record<string, unknown> => ({
  ':at': expiresAtMs,
  ':shard': sweepShard(id),
  ':ttl': backstopTtl(expiresAtMs),
});

/** What an item of the sweep index is: an image's record (`IMG#42`) or a name claim (`KEY#2026/11/23/a.png`). */
export function dueRefOfPk(pk: unknown): DueRef | undefined {
  if (typeof pk !== 'string') return undefined;
  if (pk.startsWith(ITEM_PREFIX.nameClaim)) return { name: pk.slice(ITEM_PREFIX.nameClaim.length) };
  const id = pk.startsWith(ITEM_PREFIX.image) ? Number(pk.slice(ITEM_PREFIX.image.length)) : NaN;
  return Number.isSafeInteger(id) ? { id } : undefined;
}

export function toItem(record: ImageRecord): Record<string, unknown> {
  const { exif, deleteTokenHashes, holdEnds, fingerprint, perceptual, ...rest } = record;
  return {
    pk: imagePk(record.id),
    ...rest,
    ...(perceptual ? { pdq: pdqBytes(perceptual) } : {}),
    // the duplicate claim it holds, by its one part the record lacks (its client and md5 are the record's own): the
    // width asked for, 0 for none; absent when it holds none
    ...(fingerprint === null ? {} : { dupWidth: fingerprint.width ?? 0 }),
    exifJson: exif === null ? null : JSON.stringify(exif),
    deleteTokens: new Set(deleteTokenHashes),
    ...(holdEnds === undefined ? {} : { holds: holdEnds }),
    ...(record.expiresAtMs === null ? {} : { [TABLE_SCHEMA.ttlAttribute]: backstopTtl(record.expiresAtMs) }),
  };
}

const STATUSES: ReadonlySet<string> = new Set(['active', 'deleting', 'removed']);

export function fromItem(item: Record<string, unknown>): ImageRecord {
  const read = readItem(item);
  const status = read.string('status');
  if (!STATUSES.has(status)) throw new Error(`unknown image status ${status}`);
  const exifJson = read.optionalString('exifJson');
  const pdq = item['pdq'];
  const nsfwScore = read.optionalNumber('nsfwScore');
  const restorableUntilMs = read.optionalNumber('restorableUntilMs');
  return {
    id: read.number('id'),
    status: status as ImageRecord['status'],
    name: read.string('name'),
    extension: read.string('extension'),
    original: { ...fileFrom(read.child('original')), md5: read.child('original').string('md5') },
    thumb: fileFrom(read.child('thumb')),
    medium: fileFrom(read.child('medium')),
    title: read.string('title'),
    description: read.optionalString('description'),
    nsfw: read.boolean('nsfw'),
    originalFilename: read.string('originalFilename'),
    exif: exifJson === null ? null : (JSON.parse(exifJson) as Record<string, unknown>),
    animated: read.boolean('animated'),
    createdAtMs: read.number('createdAtMs'),
    expiresAtMs: read.optionalNumber('expiresAtMs'),
    views: read.number('views'),
    sourceMd5: read.string('sourceMd5'),
    clientIp: read.string('clientIp'),
    fingerprint: fingerprintOf(read),
    deleteTokenHashes: read.stringSet('deleteTokens'),
    ...holdEndsOf(item['holds']),
    ...(pdq instanceof Uint8Array ? { perceptual: perceptualOf(pdq) } : {}),
    ...(nsfwScore === null ? {} : { nsfwScore }),
    ...(item['takenDown'] === true ? { takenDown: true } : {}),
    ...(restorableUntilMs === null ? {} : { restorableUntilMs }),
  };
}

/**
 * A record's picture hashes as one binary attribute, the quality byte first, then 32 bytes a hash: 69 bytes for two,
 * where their hex took 140, so that a record stays within one write unit (1 KB).
 */
function pdqBytes(perceptual: NonNullable<ImageRecord['perceptual']>): Uint8Array {
  return Buffer.concat([Buffer.from([perceptual.quality]), ...perceptual.hashes.map((hash) => Buffer.from(hash, 'hex'))]);
}

function perceptualOf(bytes: Uint8Array): NonNullable<ImageRecord['perceptual']> {
  const buffer = Buffer.from(bytes);
  const hashes: string[] = [];
  for (let at = 1; at + 32 <= buffer.length; at += 32) hashes.push(buffer.toString('hex', at, at + 32));
  return { hashes, quality: buffer[0] ?? 0 };
}

/** The end of each hold, from the record's `holds` map: a number, or null for none (absent: a record of one hold). */
function holdEndsOf(holds: unknown): Pick<ImageRecord, 'holdEnds'> {
  if (typeof holds !== 'object' || holds === null) return {};
  const holdEnds: NonNullable<ImageRecord['holdEnds']> = {};
  for (const [hash, end] of Object.entries(holds as Record<string, unknown>)) {
    if (end === null || typeof end === 'number') holdEnds[hash] = end;
    else throw new Error(`the hold ${hash} ends at ${JSON.stringify(end)}`);
  }
  return { holdEnds };
}

/** The duplicate claim a record holds: `dupWidth`, or the `duplicateKey` records written before it carry. */
function fingerprintOf(read: ItemReader): ImageRecord['fingerprint'] {
  const width = read.optionalNumber('dupWidth');
  if (width !== null) {
    return { clientIp: read.string('clientIp'), md5: read.string('sourceMd5'), width: width === 0 ? undefined : width };
  }
  const key = read.optionalString('duplicateKey');
  return key === null ? null : fingerprintOfKey(key);
}

function fileFrom(read: ItemReader): StoredFile {
  return {
    key: read.string('key'),
    width: read.number('width'),
    height: read.number('height'),
    size: read.number('size'),
    mime: read.string('mime'),
    extension: read.string('extension'),
    bits: read.number('bits'),
    channels: read.optionalNumber('channels'),
  };
}
