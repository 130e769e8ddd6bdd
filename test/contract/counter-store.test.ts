import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoCounterStore } from '../../functions/adapters/dynamo-counter-store';
import { windowBounds } from '../../functions/core/flood';
import type { CounterStore, CounterSubject } from '../../functions/core/ports';
import { InMemoryCounterStore } from '../support/in-memory';
import { createTestService } from '../support/test-service';

/** The counter store (flood windows and the other per-client budgets) against the fake and DynamoDB alike. */
const implementations: Array<[string, () => Promise<CounterStore>]> = [
  ['the in-memory fake', () => Promise.resolve(new InMemoryCounterStore())],
  [
    'DynamoDB (dynalite)',
    async () => new DynamoCounterStore(DynamoDBDocumentClient.from(new DynamoDBClient({})), (await createTestService()).table),
  ],
];

const now = Date.UTC(2026, 10, 27, 10, 15, 0);
const hour = (atMs: number, limit: number) => ({ window: 'hour' as const, limit, ...windowBounds('hour', atMs) });
const subject: CounterSubject = { rule: 'url-megabytes', client: '203.0.113.9' };

describe.each(implementations)('the counter store, on %s', (_name, open) => {
  let store: CounterStore;

  beforeEach(async () => {
    store = await open();
  });

  it('adds an amount past the limit (work already done), and then takes nothing more in that window', async () => {
    expect(await store.take(subject, [hour(now, 10)])).toEqual({ taken: true });
    await store.add(subject, [hour(now, 10)], 4);
    await store.add(subject, [hour(now, 10)], 6);
    // 11 counted against 10: the next take is refused
    expect(await store.take(subject, [hour(now, 10)])).toEqual({ taken: false, full: ['hour'] });
    // one given back leaves 10, still full
    await store.giveBack(subject, [hour(now, 10)]);
    expect(await store.take(subject, [hour(now, 10)])).toEqual({ taken: false, full: ['hour'] });
    // the next hour begins anew
    const later = now + 3_600_000;
    expect(await store.take(subject, [hour(later, 10)])).toEqual({ taken: true });
  });

  it('begins a window with an addition, and keeps subjects apart', async () => {
    await store.add(subject, [hour(now, 3)], 3);
    expect(await store.take(subject, [hour(now, 3)])).toEqual({ taken: false, full: ['hour'] });
    const other: CounterSubject = { rule: 'url-fetches', client: subject.client };
    expect(await store.take(other, [hour(now, 3)])).toEqual({ taken: true });
  });
});
