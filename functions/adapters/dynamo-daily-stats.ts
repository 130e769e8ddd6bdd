import { NO_FIGURES, type DailyStats, type DayFigures } from '../core/daily-stats';
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
    const figures = new Map<string, DayFigures>(days.map((day) => [day, { ...NO_FIGURES }]));
    const items = await this.getMany(
      'read daily figures',
      days.map((day) => dayPk(day)),
    );
    for (const item of items) {
      const day = { ...NO_FIGURES };
      for (const name of Object.keys(NO_FIGURES) as Array<keyof DayFigures>) day[name] = Number(item[name] ?? 0);
      figures.set(String(item['pk']).slice(PREFIX.length), day);
    }
    return figures;
  }
}
