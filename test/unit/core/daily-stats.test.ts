import { dayOf, DayTally, RefusalCounter, type DailyStats, type DayFigures } from '../../../functions/core/daily-stats';
import { FakeClock } from '../../support/in-memory';

class RecordedStats implements DailyStats {
  readonly writes: Array<{ day: string; figures: Partial<DayFigures> }> = [];
  failing = false;

  async add(day: string, figures: Partial<DayFigures>): Promise<void> {
    if (this.failing) throw new Error('throttled');
    this.writes.push({ day, figures });
  }

  async read(): Promise<Map<string, DayFigures>> {
    return new Map();
  }
}

const logger = { info: jest.fn(), warn: jest.fn(), error: jest.fn() };

describe('dayOf', () => {
  it('names the UTC day', () => {
    expect(dayOf(Date.UTC(2026, 10, 23, 23, 59, 59, 999))).toBe('2026-11-23');
    expect(dayOf(Date.UTC(2026, 10, 24, 0, 0, 0))).toBe('2026-11-24');
  });
});

describe('DayTally', () => {
  it('sums figures per day and writes each day once', async () => {
    const tally = new DayTally();
    tally.add('2026-11-23', { uploads: 1, bytes: 100 });
    tally.add('2026-11-23', { uploads: 2, bytes: 50 });
    tally.add('2026-11-24', { refusals: 1 });
    const stats = new RecordedStats();
    await tally.writeTo(stats, logger);
    expect(stats.writes).toEqual([
      { day: '2026-11-23', figures: { uploads: 3, bytes: 150 } },
      { day: '2026-11-24', figures: { refusals: 1 } },
    ]);
    expect(tally.size).toBe(0);
  });

  it('logs and drops what cannot be written', async () => {
    const tally = new DayTally();
    tally.add('2026-11-23', { uploads: 1 });
    const stats = new RecordedStats();
    stats.failing = true;
    await tally.writeTo(stats, logger);
    expect(logger.warn).toHaveBeenCalledWith('daily figures not written', expect.objectContaining({ day: '2026-11-23' }));
    expect(tally.size).toBe(0);
  });
});

describe('RefusalCounter', () => {
  it('writes the refusals counted at most once per period, on the day they happened', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 23, 23, 59, 30));
    const stats = new RecordedStats();
    const counter = new RefusalCounter(stats, clock, logger, 60_000);
    counter.count(true);
    counter.count(true);
    counter.count(false);
    await counter.writeIfDue();
    expect(stats.writes).toEqual([]);
    clock.advance(40_000); // past midnight
    counter.count(true);
    clock.advance(20_000);
    await counter.writeIfDue();
    // refusals of requests without the key apart
    expect(stats.writes).toEqual([
      { day: '2026-11-23', figures: { refusals: 2, unauthenticated: 1 } },
      { day: '2026-11-24', figures: { refusals: 1 } },
    ]);
    // nothing counted: nothing written, however long it has been
    clock.advance(120_000);
    await counter.writeIfDue();
    expect(stats.writes).toHaveLength(2);
  });
});
