import {
  FETCH_FAILURE_RULE,
  FloodGuard,
  floodMessage,
  floodSubject,
  parseFloodLimits,
  windowBounds,
  type FloodLimits,
} from '../../../functions/core/flood';
import { InMemoryCounterStore } from '../../support/in-memory';

describe('flood rules', () => {
  const at = Date.UTC(2026, 10, 22, 13, 45, 30, 500); // a Sunday

  it.each([
    ['minute', Date.UTC(2026, 10, 22, 13, 45), Date.UTC(2026, 10, 22, 13, 46)],
    ['hour', Date.UTC(2026, 10, 22, 13), Date.UTC(2026, 10, 22, 14)],
    ['day', Date.UTC(2026, 10, 22), Date.UTC(2026, 10, 23)],
    ['week', Date.UTC(2026, 10, 16), Date.UTC(2026, 10, 23)],
    ['month', Date.UTC(2026, 10, 1), Date.UTC(2026, 11, 1)],
  ] as const)('puts an instant in its %s window (UTC, weeks from Monday)', (window, startMs, endMs) => {
    expect(windowBounds(window, at)).toEqual({ startMs, endMs });
  });

  it('rolls the month over at the year end', () => {
    expect(windowBounds('month', Date.UTC(2026, 11, 31, 23))).toEqual({
      startMs: Date.UTC(2026, 11, 1),
      endMs: Date.UTC(2027, 0, 1),
    });
  });

  it('writes Chevereto messages', () => {
    expect(floodMessage(50, 'minute')).toBe('Flooding detected. You can only upload 50 images per minute');
    expect(floodMessage(1, 'week')).toBe('Flooding detected. You can only upload 1 image per week');
  });

  it('counts IPv4 addresses alone and IPv6 addresses by /64', () => {
    expect(floodSubject('203.0.113.9')).toBe('203.0.113.9');
    expect(floodSubject('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(floodSubject('2001:db8:aa:bb:1:2:3:4')).toBe('2001:db8:aa:bb::/64');
  });

  it('reads the parameter, keeping defaults for what is missing or wrong', () => {
    expect(parseFloodLimits('{"minute":3,"hour":0}').limits).toEqual({ minute: 3, hour: 0, day: 1000, week: 5000, month: 10000 });
    const bad = parseFloodLimits('{"minute":-1,"day":"many"}');
    expect(bad.limits).toMatchObject({ minute: 50, day: 1000 });
    expect(bad.problems).toHaveLength(2);
    expect(parseFloodLimits('not json').problems).toEqual(['the flood-limits parameter is not JSON']);
  });
});

describe('FloodGuard', () => {
  const limits = async (): Promise<FloodLimits> => ({ minute: 5, hour: 10, day: 0, week: 0, month: 0 });
  const now = Date.UTC(2026, 10, 22, 10, 0, 30);

  it('takes one slot in every window that is on, and gives each back once however often release is called', async () => {
    const store = new InMemoryCounterStore();
    const reservation = await new FloodGuard(store, limits).reserve('203.0.113.1', now);
    expect([store.count('uploads', '203.0.113.1', 'minute'), store.count('uploads', '203.0.113.1', 'hour')]).toEqual([1, 1]);
    expect(store.counts.size).toBe(2);
    await reservation.release();
    await reservation.release();
    expect([store.count('uploads', '203.0.113.1', 'minute'), store.count('uploads', '203.0.113.1', 'hour')]).toEqual([0, 0]);
  });

  it('takes nothing when a window is full, naming it, with Retry-After until it ends', async () => {
    const store = new InMemoryCounterStore();
    const guard = new FloodGuard(store, async () => ({ minute: 50, hour: 2, day: 0, week: 0, month: 0 }));
    await guard.reserve('203.0.113.1', now);
    await guard.reserve('203.0.113.1', now + 61_000);
    const error: unknown = await guard.reserve('203.0.113.1', now + 122_000).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      kind: 'Flooding',
      message: 'Flooding detected. You can only upload 2 images per hour',
      retryAfterSeconds: 3570 - 122,
    });
    expect(store.count('uploads', '203.0.113.1', 'minute')).toBe(1);
  });

  it('counts URL fetch failures apart from uploads, refusing with their own message', async () => {
    const store = new InMemoryCounterStore();
    const hourly = async (): Promise<FloodLimits> => ({ minute: 0, hour: 1, day: 0, week: 0, month: 0 });
    await new FloodGuard(store, hourly).reserve('203.0.113.1', now);
    const failures = new FloodGuard(store, hourly, FETCH_FAILURE_RULE);
    await failures.reserve('203.0.113.1', now);
    await expect(failures.reserve('203.0.113.1', now)).rejects.toMatchObject({
      kind: 'FetchFailuresExceeded',
      message: 'Too many URL sources that could not be fetched - max 1 per hour',
    });
  });

  it('gives a slot without a store call when every window is off', async () => {
    const store = new InMemoryCounterStore();
    store.beforeWrite = () => Promise.reject(new Error('no write expected'));
    const guard = new FloodGuard(store, async () => ({ minute: 0, hour: 0, day: 0, week: 0, month: 0 }));
    await (await guard.reserve('203.0.113.1', now)).release();
    expect(store.counts.size).toBe(0);
  });
});
