import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Ban, BanList, BlockList } from '../core/moderation';
import { DynamoTable, sendOrFail } from './dynamo-calls';
import { ITEM_PREFIX, SINGLE_ITEM } from './table-schema';

const BANS_PK = SINGLE_ITEM.bans;
const blockPk = (md5: string): string => `${ITEM_PREFIX.block}${md5}`;
/** The 16 items of blocked pictures, one per first hex digit of their hashes. */
const PICTURE_CHUNKS = [...'0123456789abcdef'].map((digit) => `${ITEM_PREFIX.pictureBlocks}${digit}`);
/** Hashes set by one update: its expression stays far under DynamoDB's 4 KB. */
const PICTURES_PER_UPDATE = 50;

/** Bans in one DynamoDB item (a map of range to end), blocked fingerprints one item each. */
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

  async pictures(): Promise<string[]> {
    const chunks = await this.getMany('read blocked pictures', PICTURE_CHUNKS);
    return chunks.flatMap((chunk) => Object.keys((chunk['hashes'] ?? {}) as Record<string, unknown>));
  }

  /** Each hash into its chunk's map (hash to reason and time), the map made first where missing, as the bans' is. */
  async blockPictures(entries: ReadonlyArray<{ hash: string; reason: string }>, nowMs: number): Promise<void> {
    // one entry per hash: an update that sets one path twice fails whole ("document paths overlap")
    const byHash = new Map(entries.map((entry) => [entry.hash.toLowerCase(), entry.reason]));
    for (const pk of PICTURE_CHUNKS) {
      const digit = pk.slice(-1);
      const mine = [...byHash].filter(([hash]) => hash.startsWith(digit)).map(([hash, reason]) => ({ hash, reason }));
      if (mine.length === 0) continue;
      await this.update('block pictures', pk, {
        UpdateExpression: 'SET #hashes = if_not_exists(#hashes, :empty)',
        ExpressionAttributeNames: { '#hashes': 'hashes' },
        ExpressionAttributeValues: { ':empty': {} },
      });
      for (let at = 0; at < mine.length; at += PICTURES_PER_UPDATE) {
        const batch = mine.slice(at, at + PICTURES_PER_UPDATE);
        await this.update('block pictures', pk, {
          UpdateExpression: `SET ${batch.map((_, index) => `#hashes.#h${index} = :r${index}`).join(', ')}`,
          ExpressionAttributeNames: {
            '#hashes': 'hashes',
            ...Object.fromEntries(batch.map((entry, index) => [`#h${index}`, entry.hash.toLowerCase()])),
          },
          ExpressionAttributeValues: Object.fromEntries(
            batch.map((entry, index) => [`:r${index}`, { reason: entry.reason.slice(0, 200), blockedAtMs: nowMs }]),
          ),
        });
      }
    }
  }
}
