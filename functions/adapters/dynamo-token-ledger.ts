import { randomUUID } from 'node:crypto';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import type { TokenLedger } from '../core/ports';
import { DynamoTable, retrySafe, sendOrFail } from './dynamo-calls';
import { ITEM_PREFIX, TABLE_SCHEMA } from './table-schema';

const tokenPk = (id: string): string => `${ITEM_PREFIX.uploadToken}${id}`;
/** A used token is remembered a day past its expiry (it is refused as expired by then anyway); TTL removes it. */
const KEPT_SECONDS = 86_400;

/** The uses of two-step upload tokens: one conditional item per used token. */
export class DynamoTokenLedger extends DynamoTable implements TokenLedger {
  use(id: string, expiresAtMs: number): Promise<boolean> {
    // this use's own mark: its retry is not a second use
    const use = randomUUID();
    const item = { pk: tokenPk(id), use, [TABLE_SCHEMA.ttlAttribute]: Math.ceil(expiresAtMs / 1000) + KEPT_SECONDS };
    return this.putIf('use upload token', retrySafe({ Item: item, ConditionExpression: 'attribute_not_exists(pk)' }, { use }));
  }

  async forget(id: string): Promise<void> {
    await sendOrFail('forget upload token', () =>
      this.db.send(new DeleteCommand({ TableName: this.table, Key: { pk: tokenPk(id) } })),
    );
  }
}
