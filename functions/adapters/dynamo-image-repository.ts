import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DependencyError } from '../core/errors';
import type { ImageRecord, ImageRepository, StoredFile } from '../core/ports';
import { readItem, type ItemReader } from './item-reader';

const ID_COUNTER_PK = 'COUNTER#image-id';
/** DynamoDB TTL is only a backstop behind the sweep; it may lag by days. */
const TTL_BACKSTOP_SECONDS = 7 * 86400;

export const imagePk = (id: number): string => `IMG#${id}`;
export const objectKeyPk = (objectKey: string): string => `KEY#${objectKey}`;

/** Image records, name claims and the id counter in one DynamoDB table keyed by `pk`. */
export class DynamoImageRepository implements ImageRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async allocateId(): Promise<number> {
    const result = await this.call('allocate id', () =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: ID_COUNTER_PK },
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

  async claimObjectKey(objectKey: string, imageId: number): Promise<boolean> {
    return this.conditional('claim object key', () =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: objectKeyPk(objectKey), imageId },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  async createPending(record: ImageRecord, deleteTokenHash: string): Promise<void> {
    await this.call('create record', () =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...toItem({ ...record, status: 'pending' }), deleteTokens: new Set([deleteTokenHash]) },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  async activate(id: number): Promise<void> {
    await this.call('activate record', () =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: imagePk(id) },
          UpdateExpression: 'SET #status = :active',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':active': 'active' },
        }),
      ),
    );
  }

  async find(id: number): Promise<ImageRecord | undefined> {
    const result = await this.call('get record', () =>
      this.db.send(new GetCommand({ TableName: this.table, Key: { pk: imagePk(id) }, ConsistentRead: true })),
    );
    return result.Item ? fromItem(result.Item) : undefined;
  }

  async addView(id: number): Promise<ImageRecord | undefined> {
    try {
      const result = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: imagePk(id) },
          UpdateExpression: 'ADD #views :one',
          ConditionExpression: 'attribute_exists(pk) AND #status = :active',
          ExpressionAttributeNames: { '#views': 'views', '#status': 'status' },
          ExpressionAttributeValues: { ':one': 1, ':active': 'active' },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return result.Attributes ? fromItem(result.Attributes) : undefined;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw new DependencyError('add view', error);
    }
  }

  async remove(id: number): Promise<void> {
    await this.call('delete record', () => this.db.send(new DeleteCommand({ TableName: this.table, Key: { pk: imagePk(id) } })));
  }

  private async call<T>(what: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw new DependencyError(what, error);
    }
  }

  /** True when the conditional write took place, false when its condition failed. */
  private async conditional(what: string, send: () => Promise<unknown>): Promise<boolean> {
    try {
      await send();
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw new DependencyError(what, error);
    }
  }
}

function toItem(record: ImageRecord): Record<string, unknown> {
  const { exif, ...rest } = record;
  return {
    pk: imagePk(record.id),
    ...rest,
    exifJson: exif === null ? null : JSON.stringify(exif),
    ...(record.expiresAtMs === null ? {} : { ttl: Math.ceil(record.expiresAtMs / 1000) + TTL_BACKSTOP_SECONDS }),
  };
}

function fromItem(item: Record<string, unknown>): ImageRecord {
  const read = readItem(item);
  const exifJson = read.optionalString('exifJson');
  const status = read.string('status');
  if (status !== 'pending' && status !== 'active') throw new Error(`unknown image status ${status}`);
  return {
    id: read.number('id'),
    status,
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
  };
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
