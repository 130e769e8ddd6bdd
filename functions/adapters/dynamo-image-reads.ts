import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoTable, sendOrFail } from './dynamo-calls';
import type { DueRef, ImageRecord, ImageScan, SweepQueue } from '../core/ports';
import { dueRefOfPk, fromItem } from './image-items';
import { ITEM_PREFIX, SWEEP_SHARDS, sweepShardKey, TABLE_SCHEMA } from './table-schema';

/**
 * The reads of many records of the table: what is due for the sweep (its index, shard by shard), and the operator's
 * scans of every record. `DynamoImageRepository` adds the single records' reads and writes.
 */
export class DynamoImageReads extends DynamoTable implements SweepQueue, ImageScan {
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
}
