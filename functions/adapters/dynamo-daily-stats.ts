import type { DailyStats, DayFigures } from '../core/daily-stats';
import { DynamoTable } from './dynamo-calls';
import { ITEM_PREFIX } from './table-schema';

const PREFIX = ITEM_PREFIX.dayStats;
const dayPk = (day: string): string => `${PREFIX}${day}`;

/** One counter item per day (`STATS#2026-11-23`), added to with ADD (concurrent writers never lose a count). */
export class DynamoDailyStats extends DynamoTable implements DailyStats {
  async add(day: string, figures: Partial<DayFigures>): Promise<void> {
    const entries = Object.entries(figures).filter(([, value]) => value !== undefined && value !== 0);
    if (entries.length === 0) return;
    await this.update('add daily figures', dayPk(day), {
      UpdateExpression: `ADD ${entries.map((_, index) => `#n${index} :v${index}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(entries.map(([name], index) => [`#n${index}`, name])),
      ExpressionAttributeValues: Object.fromEntries(entries.map(([, value], index) => [`:v${index}`, value])),
    });
  }

  async read(days: readonly string[]): Promise<Map<string, DayFigures>> {
    const figures = new Map<string, DayFigures>(
      days.map((day) => [day, { uploads: 0, bytes: 0, refusals: 0, unauthenticated: 0 }]),
    );
    const items = await this.getMany(
      'read daily figures',
      days.map((day) => dayPk(day)),
    );
    for (const item of items) {
      figures.set(String(item['pk']).slice(PREFIX.length), {
        uploads: Number(item['uploads'] ?? 0),
        bytes: Number(item['bytes'] ?? 0),
        refusals: Number(item['refusals'] ?? 0),
        unauthenticated: Number(item['unauthenticated'] ?? 0),
      });
    }
    return figures;
  }
}
