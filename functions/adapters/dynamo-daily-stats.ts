import { BatchGetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DailyStats, DayFigures } from '../core/daily-stats';
import { sendOrFail } from './dynamo-calls';
import { ITEM_PREFIX } from './table-schema';

const PREFIX = ITEM_PREFIX.dayStats;
const dayPk = (day: string): string => `${PREFIX}${day}`;
/** Tries of a batch read whose keys DynamoDB left unprocessed (throttled), before the command gives up. */
const BATCH_TRIES = 5;

/** One counter item per day (`STATS#2026-11-23`), added to with ADD (concurrent writers never lose a count). */
export class DynamoDailyStats implements DailyStats {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async add(day: string, figures: Partial<DayFigures>): Promise<void> {
    const entries = Object.entries(figures).filter(([, value]) => value !== undefined && value !== 0);
    if (entries.length === 0) return;
    await sendOrFail('add daily figures', () =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: dayPk(day) },
          UpdateExpression: `ADD ${entries.map((_, index) => `#n${index} :v${index}`).join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(entries.map(([name], index) => [`#n${index}`, name])),
          ExpressionAttributeValues: Object.fromEntries(entries.map(([, value], index) => [`:v${index}`, value])),
        }),
      ),
    );
  }

  async read(days: readonly string[]): Promise<Map<string, DayFigures>> {
    const figures = new Map<string, DayFigures>(
      days.map((day) => [day, { uploads: 0, bytes: 0, refusals: 0, unauthenticated: 0 }]),
    );
    for (let start = 0; start < days.length; start += 100) {
      let keys: Array<Record<string, unknown>> = days.slice(start, start + 100).map((day) => ({ pk: dayPk(day) }));
      for (let attempt = 1; keys.length > 0; attempt += 1) {
        if (attempt > BATCH_TRIES) throw new Error(`daily figures: ${keys.length} days left unread after ${BATCH_TRIES} tries`);
        if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
        const request = { [this.table]: { Keys: keys, ConsistentRead: true } };
        const result = await sendOrFail('read daily figures', () => this.db.send(new BatchGetCommand({ RequestItems: request })));
        for (const item of result.Responses?.[this.table] ?? []) {
          figures.set(String(item['pk']).slice(PREFIX.length), {
            uploads: Number(item['uploads'] ?? 0),
            bytes: Number(item['bytes'] ?? 0),
            refusals: Number(item['refusals'] ?? 0),
            unauthenticated: Number(item['unauthenticated'] ?? 0),
          });
        }
        keys = result.UnprocessedKeys?.[this.table]?.Keys ?? [];
      }
    }
    return figures;
  }
}
