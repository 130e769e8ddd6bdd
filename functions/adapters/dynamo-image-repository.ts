import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { retrySafe, sendConditional, sendOrFail } from './dynamo-calls';
import { DynamoImageReads } from './dynamo-image-reads';
import type { Holds, ImageRecord, ImageTable, PendingUpload } from '../core/ports';
import { EXPIRY_SET, expiryValues, fromItem, imagePk, objectKeyPk, sweepShard, toItem } from './image-items';
import { readItem } from './item-reader';
import { SINGLE_ITEM, TABLE_SCHEMA } from './table-schema';

/** Delete tokens a write of the holds names in its condition, beside their count (`writeHolds`). */
const CHECKED_TOKENS = 64;

/** Image records, name claims and the id counter in one DynamoDB table keyed by `pk`. */
export class DynamoImageRepository extends DynamoImageReads implements ImageTable {
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

  async writeHolds(
    id: number,
    readTokens: readonly string[],
    holds: Holds,
    expiresAtMs: number | null,
  ): Promise<ImageRecord | undefined> {
    const tokens = Object.keys(holds);
    // a record keeps at least one: the last link takes the image instead (`markDeleting`)
    if (tokens.length === 0) throw new Error('an image holds at least one delete token');
    const values: Record<string, unknown> = {
      ':active': 'active',
      ':count': readTokens.length,
      ':tokens': new Set(tokens),
      ':holds': holds,
      ...(expiresAtMs === null ? { ':none': null } : expiryValues(id, expiresAtMs)),
    };
    // the tokens read: as many, and the last ones given still there (a condition expression holds at most 4 KB: an
    // image answered to hundreds of duplicates would make it too long; a change that both adds and removes a token,
    // keeping the count, and leaves these alone is the one not seen)
    const held = readTokens.slice(-CHECKED_TOKENS).map((hash, index) => {
      values[`:t${index}`] = hash;
      return `contains(deleteTokens, :t${index})`;
    });
    const result = await sendConditional('write holds', () =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: imagePk(id) },
          // with an end, due for the sweep then; without, out of its index and of the TTL's
          UpdateExpression:
            expiresAtMs === null
              ? 'SET deleteTokens = :tokens, holds = :holds, expiresAtMs = :none REMOVE sweepShard, sweepAtMs, #ttl'
              : `SET deleteTokens = :tokens, holds = :holds, ${EXPIRY_SET}`,
          ConditionExpression: ['#status = :active', 'size(deleteTokens) = :count', ...held].join(' AND '),
          ExpressionAttributeNames: { '#status': 'status', '#ttl': TABLE_SCHEMA.ttlAttribute },
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return result?.Attributes ? fromItem(result.Attributes) : undefined;
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

  remove(id: number): Promise<boolean> {
    return this.deleteIf('delete record', imagePk(id), { ConditionExpression: 'attribute_exists(pk)' });
  }
}
