import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TokenLedger } from '../core/ports';
import { retrySafe, sendIfCondition, sendOrFail } from './dynamo-calls';
import { ITEM_PREFIX, TABLE_SCHEMA } from './table-schema';

const tokenPk = (id: string): string => `${ITEM_PREFIX.uploadToken}${id}`;
/** A used token is remembered a day past its expiry (it is refused as expired by then anyway); TTL removes it. */
const KEPT_SECONDS = 86_400;

/** The uses of two-step upload tokens: one conditional item per used token. */
export class DynamoTokenLedger implements TokenLedger {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  use(id: string, expiresAtMs: number): Promise<boolean> {
    // this use's own mark: its retry is not a second use
    const use = randomUUID();
    return sendIfCondition('use upload token', () =>
      this.db.send(
        new PutCommand(
          retrySafe(
            {
              TableName: this.table,
              Item: { pk: tokenPk(id), use, [TABLE_SCHEMA.ttlAttribute]: Math.ceil(expiresAtMs / 1000) + KEPT_SECONDS },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
            { use },
          ),
        ),
      ),
    );
  }

  async forget(id: string): Promise<void> {
    await sendOrFail('forget upload token', () =>
      this.db.send(new DeleteCommand({ TableName: this.table, Key: { pk: tokenPk(id) } })),
    );
  }
}
