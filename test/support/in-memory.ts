import type { CounterStore, CounterSubject, CountWindow, FloodWindow } from '../../functions/core/flood';
import type { Clock } from '../../functions/core/ports';

/** Flood counters in memory, with the same all-or-none rule as the DynamoDB store. */
export class InMemoryCounterStore implements CounterStore {
  readonly counts = new Map<string, { startMs: number; count: number }>();

  async take(
    subject: CounterSubject,
    windows: readonly CountWindow[],
  ): Promise<{ taken: true } | { taken: false; full: FloodWindow[] }> {
    const full = windows.filter(({ window, startMs, limit }) => {
      const entry = this.counts.get(this.key(subject, window));
      return entry?.startMs === startMs && entry.count >= limit;
    });
    if (full.length > 0) return { taken: false, full: full.map(({ window }) => window) };
    for (const { window, startMs } of windows) {
      const entry = this.counts.get(this.key(subject, window));
      this.counts.set(this.key(subject, window), { startMs, count: entry?.startMs === startMs ? entry.count + 1 : 1 });
    }
    return { taken: true };
  }

  async giveBack(subject: CounterSubject, windows: readonly CountWindow[]): Promise<void> {
    for (const { window, startMs } of windows) {
      const entry = this.counts.get(this.key(subject, window));
      if (entry?.startMs === startMs && entry.count > 0) entry.count -= 1;
    }
  }

  /** The count of one window of a subject; 0 when none. */
  count(rule: CounterSubject['rule'], client: string, window: FloodWindow): number {
    return this.counts.get(this.key({ rule, client }, window))?.count ?? 0;
  }

  private key(subject: CounterSubject, window: FloodWindow): string {
    return `${subject.rule} ${subject.client} ${window}`;
  }
}

/** A clock that moves only when told to; sleeping moves it. */
export class FakeClock implements Clock {
  constructor(private now = Date.UTC(2026, 10, 23, 12, 0, 0)) {}

  nowMs(): number {
    return this.now;
  }

  async sleep(ms: number): Promise<void> {
    this.now += ms;
  }

  advance(ms: number): void {
    this.now += ms;
  }
}
