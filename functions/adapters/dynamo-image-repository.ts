import { randomUUID } from 'node:crypto';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoTable, retrySafe, sendConditional, sendOrFail } from './dynamo-calls';
import type { DueRef, ImageRecord, ImageTable, PendingUpload, StoredFile } from '../core/ports';
import { fingerprintOfKey } from './dynamo-duplicate-index';
import { readItem, type ItemReader } from './item-reader';
import { ITEM_PREFIX, SINGLE_ITEM, SWEEP_SHARDS, sweepShardKey, TABLE_SCHEMA } from './table-schema';

/** DynamoDB TTL is only a backstop behind the sweep; it may lag by days. */
const TTL_BACKSTOP_SECONDS = 7 * 86400;

const imagePk = (id: number): string => `${ITEM_PREFIX.image}${id}`;
const sweepShard = (id: number): string => sweepShardKey(id % SWEEP_SHARDS);
const objectKeyPk = (objectKey: string): string => `${ITEM_PREFIX.nameClaim}${objectKey}`;
/** The TTL (epoch seconds) behind an expiry: DynamoDB removes the item a while after the sweep should have. */
const backstopTtl = (expiresAtMs: number): number => Math.ceil(expiresAtMs / 1000) + TTL_BACKSTOP_SECONDS;
/** An expiry's attributes, set together: the expiry, the sweep index's (due then) and the TTL behind it. */
const EXPIRY_SET = 'expiresAtMs = :at, sweepShard = :shard, sweepAtMs = :at, #ttl = :ttl';
const expiryValues = (id: number, expiresAtMs: number): Record<string, unknown> => ({
  ':at': expiresAtMs,
  ':shard': sweepShard(id),
  ':ttl': backstopTtl(expiresAtMs),
});

/** Image records, name claims and the id counter in one DynamoDB table keyed by `pk`. */
export class DynamoImageRepository extends DynamoTable implements ImageTable {
  async allocateId(): Promise<number> {
    const result = await sendOrFail('allocate id', () =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: SINGLE_ITEM.idCounter },
          UpdateExpression: 'ADD #value :one',
          ExpressionAttributeNames: { '#value': 'value' },
          ExpressionAttributeValues: { ':one': 1 },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    const id: unknown = result.Attributes?.['value'];
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) throw new Error(`the id counter holds ${String(id)}`);
    return id;
  }

  async claimName(upload: PendingUpload, sweepAtMs: number): Promise<boolean> {
    const item = {
      pk: objectKeyPk(upload.name),
      imageId: upload.imageId,
      status: 'pending',
      keys: upload.keys,
      createdAtMs: upload.createdAtMs,
      sweepShard: sweepShard(upload.imageId),
      sweepAtMs,
    };
    const write = { Item: item, ConditionExpression: 'attribute_not_exists(pk)' };
    return this.putIf('claim name', retrySafe(write, { imageId: upload.imageId, status: 'pending' }));
  }

  async saveActive(record: ImageRecord): Promise<boolean> {
    // Due for the sweep at its expiry; out of the sweep index when it never expires.
    const sweep = record.expiresAtMs === null ? {} : { sweepShard: sweepShard(record.id), sweepAtMs: record.expiresAtMs };
    const write = { Item: { ...toItem(record), ...sweep }, ConditionExpression: 'attribute_not_exists(pk)' };
    // its original's name is this upload's alone: a record naming it is this very write
    return this.putIf('save record', retrySafe(write, { 'original.key': record.original.key }));
  }

  async settleName(name: string): Promise<boolean> {
    // The claim stays (the name is never given again); only what made it pending goes, once: a concurrent settling
    // is refused, this one's retry is not (its mark).
    const mark = randomUUID();
    const write = {
      UpdateExpression: 'SET settledBy = :mark REMOVE #status, #keys, createdAtMs, sweepShard, sweepAtMs',
      ConditionExpression: '#status = :pending',
      ExpressionAttributeNames: { '#status': 'status', '#keys': 'keys' },
      ExpressionAttributeValues: { ':pending': 'pending', ':mark': mark },
    };
    return this.updateIf('settle name', objectKeyPk(name), retrySafe(write, { settledBy: mark }));
  }

  async findPending(name: string): Promise<PendingUpload | undefined> {
    const result = await sendOrFail('get name claim', () =>
      this.db.send(new GetCommand({ TableName: this.table, Key: { pk: objectKeyPk(name) }, ConsistentRead: true })),
    );
    if (result.Item?.['status'] !== 'pending') return undefined;
    const read = readItem(result.Item);
    const keys = read.child('keys');
    return {
      status: 'pending',
      name,
      imageId: read.number('imageId'),
      keys: { original: keys.string('original'), thumb: keys.string('thumb'), medium: keys.string('medium') },
      createdAtMs: read.number('createdAtMs'),
    };
  }

  async find(id: number): Promise<ImageRecord | undefined> {
    const result = await sendOrFail('get record', () =>
      this.db.send(new GetCommand({ TableName: this.table, Key: { pk: imagePk(id) }, ConsistentRead: true })),
    );
    return result.Item ? fromItem(result.Item) : undefined;
  }

  async addView(id: number): Promise<ImageRecord | undefined> {
    const result = await sendConditional('add view', () =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: imagePk(id) },
          UpdateExpression: 'ADD #views :one',
          ConditionExpression: 'attribute_exists(pk) AND #status = :active',
          ExpressionAttributeNames: { '#views': 'views', '#status': 'status' },
          ExpressionAttributeValues: { ':one': 1, ':active': 'active' },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return result?.Attributes ? fromItem(result.Attributes) : undefined;
  }

  async addDeleteToken(id: number, tokenHash: string): Promise<boolean> {
    return this.updateIf('add delete token', imagePk(id), {
      UpdateExpression: 'ADD deleteTokens :token',
      ConditionExpression: 'attribute_exists(pk) AND #status = :active',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':token': new Set([tokenHash]), ':active': 'active' },
    });
  }

  async tighten(id: number, asked: { nsfw: boolean; expiresAtMs: number | null }): Promise<ImageRecord | undefined> {
    const names = { '#status': 'status' };
    if (asked.nsfw)
      await this.updateIf('mark sensitive', imagePk(id), {
        UpdateExpression: 'SET nsfw = :true',
        ConditionExpression: '#status = :active',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':true': true, ':active': 'active' },
      });
    // sooner only: the condition keeps a later end from replacing an earlier one, whatever two uploads race
    if (asked.expiresAtMs !== null)
      await this.updateIf('bring expiry forward', imagePk(id), {
        UpdateExpression: `SET ${EXPIRY_SET}`,
        ConditionExpression:
          '#status = :active AND (attribute_not_exists(expiresAtMs) OR expiresAtMs = :none OR expiresAtMs > :at)',
        ExpressionAttributeNames: { ...names, '#ttl': TABLE_SCHEMA.ttlAttribute },
        ExpressionAttributeValues: { ...expiryValues(id, asked.expiresAtMs), ':none': null, ':active': 'active' },
      });
    const record = await this.find(id);
    return record?.status === 'active' ? record : undefined;
  }

  async releaseDeleteToken(id: number, tokenHash: string): Promise<boolean> {
    return this.updateIf('release delete token', imagePk(id), {
      UpdateExpression: 'DELETE deleteTokens :token',
      ConditionExpression: '#status = :active AND contains(deleteTokens, :hash) AND size(deleteTokens) > :one',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':token': new Set([tokenHash]), ':hash': tokenHash, ':active': 'active', ':one': 1 },
    });
  }

  markDeleting(id: number, tokenHash: string, nowMs: number): Promise<boolean> {
    // `deleting` already, with this token still in: this very mark met by its retry (the delete read the record live
    // just before; `docs/reliability.md`, "Lost answers"), so this link's deletion, answered as done
    const condition = '(#status = :active OR #status = :deleting) AND contains(deleteTokens, :token)';
    return this.markDue('mark deleting', id, nowMs, condition, {
      ':active': 'active',
      ':token': tokenHash,
    });
  }

  /** The sweep index's shards. */
  readonly duePartitions = SWEEP_SHARDS;

  async *dueRefs(nowMs: number, pageSize: number, shard: number): AsyncIterable<DueRef[]> {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.queryDue(shard, nowMs, pageSize, start);
      start = page.LastEvaluatedKey;
      const refs = (page.Items ?? []).map((item) => dueRefOfPk(item['pk'])).filter((ref) => ref !== undefined);
      if (refs.length > 0) yield refs;
    } while (start);
  }

  async oldestDueAtMs(nowMs: number): Promise<number | undefined> {
    const oldest = await Promise.all(
      Array.from({ length: SWEEP_SHARDS }, async (_, shard) => {
        const dueAtMs: unknown = (await this.queryDue(shard, nowMs, 1)).Items?.[0]?.['sweepAtMs'];
        return typeof dueAtMs === 'number' ? dueAtMs : undefined;
      }),
    );
    const found = oldest.filter((dueAtMs) => dueAtMs !== undefined);
    return found.length === 0 ? undefined : Math.min(...found);
  }

  /** One page of a shard of the sweep index: records due by `nowMs`, oldest first. */
  private queryDue(shard: number, nowMs: number, limit: number, start?: Record<string, unknown>) {
    return sendOrFail('list due records', () =>
      this.db.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: TABLE_SCHEMA.sweepIndex.name,
          KeyConditionExpression: 'sweepShard = :shard AND sweepAtMs <= :now',
          ExpressionAttributeValues: { ':shard': sweepShardKey(shard), ':now': nowMs },
          Limit: limit,
          ExclusiveStartKey: start,
        }),
      ),
    );
  }

  async imageIdOfName(objectKey: string): Promise<number | undefined> {
    const result = await sendOrFail('get name claim', () =>
      this.db.send(new GetCommand({ TableName: this.table, Key: { pk: objectKeyPk(objectKey) }, ConsistentRead: true })),
    );
    const id: unknown = result.Item?.['imageId'];
    return typeof id === 'number' ? id : undefined;
  }

  markTakenDown(id: number, nowMs: number): Promise<boolean> {
    return this.markDue('mark taken down', id, nowMs, 'attribute_exists(pk)', {}, ', takenDown = :true');
  }

  retire(id: number, nowMs: number, untilMs: number): Promise<boolean> {
    return this.updateIf('retire record', imagePk(id), {
      // out of the sweep's index; the table's TTL removes it once it can no longer be restored
      UpdateExpression: 'SET #status = :removed, restorableUntilMs = :until, #ttl = :ttl REMOVE sweepShard, sweepAtMs',
      // never one taken down: nothing of it is kept
      ConditionExpression:
        'attribute_not_exists(takenDown) AND (#status = :deleting OR (#status = :active AND expiresAtMs <= :now))',
      ExpressionAttributeNames: { '#status': 'status', '#ttl': TABLE_SCHEMA.ttlAttribute },
      ExpressionAttributeValues: {
        ':removed': 'removed',
        ':deleting': 'deleting',
        ':active': 'active',
        ':now': nowMs,
        ':until': untilMs,
        ':ttl': Math.ceil(untilMs / 1000),
      },
    });
  }

  revive(id: number, expiresAtMs: number | null): Promise<boolean> {
    return this.updateIf('revive record', imagePk(id), {
      // with an expiry, due then again; without, out of the sweep's index and of the TTL's
      UpdateExpression:
        expiresAtMs === null
          ? 'SET #status = :active, expiresAtMs = :none REMOVE restorableUntilMs, #ttl'
          : `SET #status = :active, ${EXPIRY_SET} REMOVE restorableUntilMs`,
      ConditionExpression: '#status = :removed',
      ExpressionAttributeNames: { '#status': 'status', '#ttl': TABLE_SCHEMA.ttlAttribute },
      ExpressionAttributeValues: {
        ':active': 'active',
        ':removed': 'removed',
        ...(expiresAtMs === null ? { ':none': null } : expiryValues(id, expiresAtMs)),
      },
    });
  }

  /** Marks a record `deleting` and due for the sweep now, when `condition` holds; false when it does not. */
  private markDue(
    operation: string,
    id: number,
    nowMs: number,
    condition: string,
    values: Record<string, unknown>,
    alsoSet = '',
  ): Promise<boolean> {
    return this.updateIf(operation, imagePk(id), {
      UpdateExpression: `SET #status = :deleting, sweepShard = :shard, sweepAtMs = :now${alsoSet}`,
      ConditionExpression: condition,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':deleting': 'deleting',
        ':shard': sweepShard(id),
        ':now': nowMs,
        ...(alsoSet === '' ? {} : { ':true': true }),
        ...values,
      },
    });
  }

  recent(sinceMs: number): AsyncIterable<ImageRecord[]> {
    return this.scanRecords('createdAtMs >= :since', { ':since': sinceMs });
  }

  withContent(md5s: string[]): AsyncIterable<ImageRecord[]> {
    const names = md5s.map((_, index) => `:md5${index}`).join(', ');
    const values = Object.fromEntries(md5s.map((md5, index) => [`:md5${index}`, md5]));
    // `#file`: an attribute name that could be a reserved word is always aliased
    return this.scanRecords(`(sourceMd5 IN (${names}) OR #file.md5 IN (${names}))`, values, { '#file': 'original' });
  }

  /** The records matching a filter, page by page: the whole table is read (an operator's tool, never an upload's). */
  private async *scanRecords(
    filter: string,
    values: Record<string, unknown>,
    names?: Record<string, string>,
  ): AsyncIterable<ImageRecord[]> {
    for await (const items of this.scanPrefix('scan records', ITEM_PREFIX.image, { filter, values, names }))
      yield items.map(fromItem);
  }

  remove(id: number): Promise<boolean> {
    return this.deleteIf('delete record', imagePk(id), { ConditionExpression: 'attribute_exists(pk)' });
  }
}

/** What an item of the sweep index is: an image's record (`IMG#42`) or a name claim (`KEY#2026/11/23/a.png`). */
function dueRefOfPk(pk: unknown): DueRef | undefined {
  if (typeof pk !== 'string') return undefined;
  if (pk.startsWith(ITEM_PREFIX.nameClaim)) return { name: pk.slice(ITEM_PREFIX.nameClaim.length) };
  const id = pk.startsWith(ITEM_PREFIX.image) ? Number(pk.slice(ITEM_PREFIX.image.length)) : NaN;
  return Number.isSafeInteger(id) ? { id } : undefined;
}

function toItem(record: ImageRecord): Record<string, unknown> {
  const { exif, deleteTokenHashes, fingerprint, perceptual, ...rest } = record;
  return {
    pk: imagePk(record.id),
    ...rest,
    ...(perceptual ? { pdq: pdqBytes(perceptual) } : {}),
    // the duplicate claim it holds, by its one part the record lacks (its client and md5 are the record's own): the
    // width asked for, 0 for none; absent when it holds none
    ...(fingerprint === null ? {} : { dupWidth: fingerprint.width ?? 0 }),
    exifJson: exif === null ? null : JSON.stringify(exif),
    deleteTokens: new Set(deleteTokenHashes),
    ...(record.expiresAtMs === null ? {} : { [TABLE_SCHEMA.ttlAttribute]: backstopTtl(record.expiresAtMs) }),
  };
}

const STATUSES: ReadonlySet<string> = new Set(['active', 'deleting', 'removed']);

function fromItem(item: Record<string, unknown>): ImageRecord {
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
