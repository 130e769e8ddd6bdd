import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  PutCommand,
  ScanCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type DynamoDBDocumentClient,
  type PutCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { DependencyError } from '../core/errors';

/** Sends a store's request (DynamoDB's, or S3's); any failure becomes a DependencyError (503), never a 4xx. */
export async function sendOrFail<T>(what: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    throw new DependencyError(what, error);
  }
}

/** Sends a conditional write: its output when it took place, undefined when its condition failed. */
export async function sendConditional<T extends object>(what: string, send: () => Promise<T>): Promise<T | undefined> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw new DependencyError(what, error);
  }
}

/** Sends a conditional write: true when it took place, false when its condition failed. */
export async function sendIfCondition(what: string, send: () => Promise<object>): Promise<boolean> {
  return (await sendConditional(what, send)) !== undefined;
}

/** A conditional write's condition, with its names and values. */
interface Conditional {
  ConditionExpression: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/**
 * A conditional write made safe to be sent twice (`docs/reliability.md`, "Lost answers"): its condition also holds
 * where the item already bears `own`, values only this write puts there (a mark, a claim id, its original's name;
 * dotted paths reach into maps), so the SDK's retry of a write that was carried out counts as written, not refused.
 * For writes that set values; one that adds would count twice (the flood counters refuse their retry instead).
 */
export function retrySafe<T extends Conditional>(write: T, own: Readonly<Record<string, unknown>>): T {
  const names: Record<string, string> = { ...write.ExpressionAttributeNames };
  const values: Record<string, unknown> = { ...write.ExpressionAttributeValues };
  const checks = Object.entries(own).map(([path, value], index) => {
    const parts = path.split('.').map((part, depth) => {
      names[`#own${index}_${depth}`] = part;
      return `#own${index}_${depth}`;
    });
    values[`:own${index}`] = value;
    return `${parts.join('.')} = :own${index}`;
  });
  return {
    ...write,
    ConditionExpression: `(${write.ConditionExpression}) OR (${checks.join(' AND ')})`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

type UpdateParams = Omit<UpdateCommandInput, 'TableName' | 'Key'>;

/** Tries of a batch read whose keys DynamoDB left unprocessed (throttled), before it gives up. */
const BATCH_TRIES = 5;

/**
 * An adapter of the one table: its writes by partition key, each named for the log. A failure is a DependencyError
 * (503), and a conditional write answers whether it took place.
 */
export abstract class DynamoTable {
  constructor(
    protected readonly db: DynamoDBDocumentClient,
    protected readonly table: string,
  ) {}

  protected async update(what: string, pk: string, params: UpdateParams): Promise<void> {
    await sendOrFail(what, () => this.db.send(new UpdateCommand({ ...params, TableName: this.table, Key: { pk } })));
  }

  protected updateIf(what: string, pk: string, params: UpdateParams): Promise<boolean> {
    return sendIfCondition(what, () => this.db.send(new UpdateCommand({ ...params, TableName: this.table, Key: { pk } })));
  }

  protected putIf(what: string, params: Omit<PutCommandInput, 'TableName'>): Promise<boolean> {
    return sendIfCondition(what, () => this.db.send(new PutCommand({ ...params, TableName: this.table })));
  }

  /**
   * The items under these keys, read by batches of 100 (BatchGetItem's most), strongly consistent; keys DynamoDB
   * leaves unprocessed (throttled) are asked again, a few times, after a growing pause.
   */
  protected async getMany(what: string, pks: readonly string[]): Promise<Array<Record<string, unknown>>> {
    const items: Array<Record<string, unknown>> = [];
    for (let start = 0; start < pks.length; start += 100) {
      let keys: Array<Record<string, unknown>> = pks.slice(start, start + 100).map((pk) => ({ pk }));
      for (let attempt = 1; keys.length > 0; attempt += 1) {
        if (attempt > BATCH_TRIES)
          throw new DependencyError(what, new Error(`${keys.length} items left unread after ${BATCH_TRIES} tries`));
        if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
        const request = { [this.table]: { Keys: keys, ConsistentRead: true } };
        const result = await sendOrFail(what, () => this.db.send(new BatchGetCommand({ RequestItems: request })));
        items.push(...(result.Responses?.[this.table] ?? []));
        keys = result.UnprocessedKeys?.[this.table]?.Keys ?? [];
      }
    }
    return items;
  }

  /**
   * The items whose key starts with `prefix` (and match `filter`), page by page, pages without one left out: the
   * whole table is read (an operator's tool, never a request's).
   */
  protected async *scanPrefix(
    what: string,
    prefix: string,
    match: { filter?: string; values?: Record<string, unknown>; names?: Record<string, string> | undefined } = {},
  ): AsyncIterable<Array<Record<string, unknown>>> {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await sendOrFail(what, () =>
        this.db.send(
          new ScanCommand({
            TableName: this.table,
            FilterExpression: `begins_with(pk, :prefix)${match.filter ? ` AND ${match.filter}` : ''}`,
            ExpressionAttributeValues: { ':prefix': prefix, ...match.values },
            ExpressionAttributeNames: match.names,
            ExclusiveStartKey: start,
          }),
        ),
      );
      start = page.LastEvaluatedKey;
      if (page.Items && page.Items.length > 0) yield page.Items;
    } while (start);
  }

  protected deleteIf(what: string, pk: string, params: Omit<DeleteCommandInput, 'TableName' | 'Key'>): Promise<boolean> {
    return sendIfCondition(what, () => this.db.send(new DeleteCommand({ ...params, TableName: this.table, Key: { pk } })));
  }
}
