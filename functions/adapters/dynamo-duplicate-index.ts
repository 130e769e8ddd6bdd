import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DependencyError } from '../core/errors';
import { sendIfCondition, sendOrFail } from './dynamo-calls';
import type { DuplicateIndex } from '../core/ports';
import { TABLE_SCHEMA } from './table-schema';

type ClaimAnswer = Awaited<ReturnType<DuplicateIndex['claim']>>;

/** Duplicate fingerprints: one item per (client, md5, width), written only by conditional puts and deletes. */
export class DynamoDuplicateIndex implements DuplicateIndex {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async claim(key: string, claimId: string, nowMs: number, windowMs: number): Promise<ClaimAnswer> {
    // A claim that vanishes between the refused put and the read (its image was deleted) is simply tried again.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      if (await this.put(key, claimId, nowMs, windowMs, 'attribute_not_exists(pk) OR expiresAtMs < :now', { ':now': nowMs })) {
        return { claimed: true };
      }
      const held = await sendOrFail('read duplicate claim', () =>
        this.db.send(new GetCommand({ TableName: this.table, Key: { pk: key }, ConsistentRead: true })),
      );
      const item = held.Item;
      if (item && typeof item['claimId'] === 'string' && typeof item['claimedAtMs'] === 'number') {
        const imageId: unknown = item['imageId'];
        return {
          claimed: false,
          claimId: item['claimId'],
          imageId: typeof imageId === 'number' ? imageId : null,
          claimedAtMs: item['claimedAtMs'],
        };
      }
    }
    throw new DependencyError('claim duplicate', new Error(`the claim ${key} keeps changing`));
  }

  takeOver(key: string, previousClaimId: string, claimId: string, nowMs: number, windowMs: number): Promise<boolean> {
    return this.put(key, claimId, nowMs, windowMs, 'claimId = :previous', { ':previous': previousClaimId });
  }

  async bind(key: string, claimId: string, imageId: number): Promise<void> {
    await sendIfCondition('bind duplicate claim', () =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: key },
          UpdateExpression: 'SET imageId = :image',
          ConditionExpression: 'claimId = :claim',
          ExpressionAttributeValues: { ':image': imageId, ':claim': claimId },
        }),
      ),
    );
  }

  async releaseClaim(key: string, claimId: string): Promise<void> {
    await sendIfCondition('release duplicate claim', () =>
      this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { pk: key },
          ConditionExpression: 'claimId = :claim AND attribute_not_exists(imageId)',
          ExpressionAttributeValues: { ':claim': claimId },
        }),
      ),
    );
  }

  async releaseImage(key: string, imageId: number): Promise<void> {
    await sendIfCondition('release duplicate entry', () =>
      this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { pk: key },
          ConditionExpression: 'imageId = :image',
          ExpressionAttributeValues: { ':image': imageId },
        }),
      ),
    );
  }

  private put(
    key: string,
    claimId: string,
    nowMs: number,
    windowMs: number,
    condition: string,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    return sendIfCondition('claim duplicate', () =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            pk: key,
            claimId,
            claimedAtMs: nowMs,
            expiresAtMs: nowMs + windowMs,
            [TABLE_SCHEMA.ttlAttribute]: Math.ceil((nowMs + windowMs) / 1000) + 86400,
          },
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }
}
