import type { Clock, Logger } from './ports';
import type { DailyStats, DayFigures } from './ports';

export type { DailyStats, DayFigures } from './ports';

/** A day without figures; its keys are every figure a day has. */
export const NO_FIGURES: Readonly<DayFigures> = { uploads: 0, bytes: 0, refusals: 0, unauthenticated: 0, reports: 0 };

/** `YYYY-MM-DD` of an instant, in UTC. */
export function dayOf(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** Sums figures per day, to be written at once. */
export class DayTally {
  private readonly days = new Map<string, Partial<DayFigures>>();

  add(day: string, figures: Partial<DayFigures>): void {
    const sum = this.days.get(day) ?? {};
    for (const [name, value] of Object.entries(figures) as Array<[keyof DayFigures, number]>)
      sum[name] = (sum[name] ?? 0) + value;
    this.days.set(day, sum);
  }

  get size(): number {
    return this.days.size;
  }

  /** Writes every day's sums and starts over; what cannot be written is logged and dropped (figures, not records). */
  async writeTo(stats: DailyStats, logger: Logger): Promise<void> {
    const days = [...this.days];
    this.days.clear();
    await Promise.all(
      days.map(([day, figures]) =>
        stats.add(day, figures).catch((error: unknown) => logger.warn('daily figures not written', { day, figures, error })),
      ),
    );
  }
}

/** Refused uploads counted in memory, written at most every `flushMs` (on a request after that much time passed). */
export class RefusalCounter {
  private readonly tally = new DayTally();
  private lastWriteMs: number;

  constructor(
    private readonly stats: DailyStats,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly flushMs: number,
  ) {
    this.lastWriteMs = clock.nowMs();
  }

  /** One refusal, of a request that carried the key or not. */
  count(authenticated: boolean): void {
    this.tally.add(dayOf(this.clock.nowMs()), authenticated ? { refusals: 1 } : { unauthenticated: 1 });
  }

  async writeIfDue(): Promise<void> {
    const nowMs = this.clock.nowMs();
    if (this.tally.size === 0 || nowMs - this.lastWriteMs < this.flushMs) return;
    this.lastWriteMs = nowMs;
    await this.tally.writeTo(this.stats, this.logger);
  }
}
