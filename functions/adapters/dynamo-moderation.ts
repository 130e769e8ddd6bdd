import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Ban, BanList, BlockList } from '../core/moderation/moderation';
import type { BlockedBytes } from '../core/ports';
import { DynamoTable, sendOrFail } from './dynamo-calls';
import { ITEM_PREFIX, SINGLE_ITEM } from './table-schema';

const BANS_PK = SINGLE_ITEM.bans;
const blockPk = (md5: string): string => `${ITEM_PREFIX.block}${md5}`;

/**
 * Bans in one DynamoDB item (a map of range to end), blocked fingerprints one item each (the blocked pictures are a
 * list of their own: `s3-picture-blocks.ts`).
 */
export class DynamoModeration extends DynamoTable implements BanList, BlockList {
  async all(): Promise<Ban[]> {
    const result = await sendOrFail('read bans', () =>
      this.db.send(new GetCommand({ TableName: this.table, Key: { pk: BANS_PK }, ConsistentRead: true })),
    );
    const ranges = (result.Item?.['ranges'] ?? {}) as Record<string, unknown>;
    return Object.entries(ranges).map(([range, until]) => ({ range, untilMs: typeof until === 'number' ? until : null }));
  }

  async add(ban: Ban): Promise<void> {
    // the map first (a nested SET needs its parent), then the range in it
    await this.update('add ban', BANS_PK, {
      UpdateExpression: 'SET #ranges = if_not_exists(#ranges, :empty)',
      ExpressionAttributeNames: { '#ranges': 'ranges' },
      ExpressionAttributeValues: { ':empty': {} },
    });
    await this.update('add ban', BANS_PK, {
      UpdateExpression: 'SET #ranges.#range = :until',
      ExpressionAttributeNames: { '#ranges': 'ranges', '#range': ban.range },
      ExpressionAttributeValues: { ':until': ban.untilMs },
    });
  }

  remove(range: string): Promise<boolean> {
    return this.updateIf('remove ban', BANS_PK, {
      UpdateExpression: 'REMOVE #ranges.#range',
      ConditionExpression: 'attribute_exists(#ranges.#range)',
      ExpressionAttributeNames: { '#ranges': 'ranges', '#range': range },
    });
  }

  async anyBlocked(md5s: readonly string[]): Promise<boolean> {
    return (await this.getMany('read blocks', [...new Set(md5s)].map(blockPk))).length > 0;
  }

  async block(md5: string, reason: string, nowMs: number): Promise<void> {
    await sendOrFail('block', () =>
      this.db.send(new PutCommand({ TableName: this.table, Item: { pk: blockPk(md5), reason, blockedAtMs: nowMs } })),
    );
  }

  unblock(md5: string): Promise<boolean> {
    return this.deleteIf('unblock', blockPk(md5), { ConditionExpression: 'attribute_exists(pk)' });
  }

  async blockedBytes(): Promise<BlockedBytes[]> {
    const found: BlockedBytes[] = [];
    for await (const page of this.scanPrefix('read blocks', ITEM_PREFIX.block))
      for (const item of page)
        found.push({
          md5: String(item['pk']).slice(ITEM_PREFIX.block.length),
          reason: typeof item['reason'] === 'string' ? item['reason'] : '',
          blockedAtMs: Number(item['blockedAtMs'] ?? 0),
        });
    return found.sort((a, b) => a.blockedAtMs - b.blockedAtMs);
  }
}
