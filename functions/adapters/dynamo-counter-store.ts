import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { sendIfCondition } from './dynamo-calls';
import type { CounterStore } from '../core/flood';
import { TABLE_SCHEMA } from './table-schema';

/** Counters kept a day past their window, then left to DynamoDB TTL: nothing reads a past window's key again. */
const COUNTER_TTL_GRACE_SECONDS = 86400;

/** Flood counters: one item per client, window and window start, changed only by conditional atomic ADDs. */
export class DynamoCounterStore implements CounterStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async increment(key: string, limit: number, expiresAtMs: number): Promise<boolean> {
    return sendIfCondition('flood counter increment', () =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: key },
          UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :ttl)',
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
          ExpressionAttributeNames: { '#count': 'count', '#ttl': TABLE_SCHEMA.ttlAttribute },
          ExpressionAttributeValues: {
            ':one': 1,
            ':limit': limit,
            ':ttl': Math.ceil(expiresAtMs / 1000) + COUNTER_TTL_GRACE_SECONDS,
          },
        }),
      ),
    );
  }

  async decrement(key: string): Promise<void> {
    // A counter already at zero (or gone with its window) has nothing to give back.
    await sendIfCondition('flood counter decrement', () =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: key },
          UpdateExpression: 'ADD #count :minusOne',
          ConditionExpression: '#count > :zero',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
        }),
      ),
    );
  }
}
