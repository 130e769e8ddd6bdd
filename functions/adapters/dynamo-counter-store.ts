import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DependencyError } from '../core/errors';
import type { CounterStore, CounterSubject, CounterTake, CountWindow, GuardRuleName } from '../core/ports';
import type { FloodWindow } from '../core/ports';
import { sendIfCondition, sendOrFail } from './dynamo-calls';
import { ITEM_PREFIX, TABLE_SCHEMA } from './table-schema';

const PREFIX: Record<GuardRuleName, string> = {
  uploads: ITEM_PREFIX.uploads,
  'fetch-failures': ITEM_PREFIX.fetchFailures,
  'url-fetches': ITEM_PREFIX.urlFetches,
  'url-megabytes': ITEM_PREFIX.urlMegabytes,
  'url-fetches-at-once': ITEM_PREFIX.urlFetchesAtOnce,
  'upload-urls': ITEM_PREFIX.uploadUrls,
  reports: ITEM_PREFIX.reportsByClient,
};
/** The item outlives its longest window (a month) by a day, then DynamoDB TTL removes it. */
const ITEM_TTL_SECONDS = 32 * 86_400;
/** Rounds of read and conditional write before a burst of one client's own uploads is taken for a failure. */
const MAX_ROUNDS = 8;

type Stored = Partial<Record<FloodWindow, { s: number; c: number }>> & {
  /** The mark of the last take written, of the last giving back, and of the last addition. */
  take?: string;
  back?: string;
  add?: string;
};

const itemKey = (subject: CounterSubject): Record<string, string> => ({ pk: `${PREFIX[subject.rule]}${subject.client}` });

/**
 * Flood counters: one item per client and rule, holding every window as `{window: {s: start, c: count}}`. A take reads
 * the item (strongly consistent), then writes with conditions on what it read: a window still in the same period is
 * incremented relatively (`c = c + 1` while `c < limit`), a window whose period is over is started anew (only if no one
 * else did). A condition that fails means another upload of the same client came in between: read again. So the limits
 * hold exactly under concurrency, the item stays small (one entry per window), and one upload costs one write.
 */
export class DynamoCounterStore implements CounterStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Reads the counters and writes them if every window has room, again while another take wins the write. */
  async take(subject: CounterSubject, windows: readonly CountWindow[]): Promise<CounterTake> {
    const mark = randomUUID();
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const stored = await this.read(subject);
      // this take written already, and its retry refused (see `marked`)
      if (stored.take === mark) return { taken: true };
      const full = windows.filter(({ window, startMs, limit }) => {
        const entry = stored[window];
        return entry !== undefined && entry.s === startMs && entry.c >= limit;
      });
      if (full.length > 0) return { taken: false, full: full.map(({ window }) => window) };
      const update = counting(stored, windows, 1, true);
      if (await this.setIf('flood counters', subject, marked('take', mark, update))) return { taken: true };
    }
    throw new DependencyError('flood counters', new Error(`no write of the counters held after ${MAX_ROUNDS} rounds`));
  }

  async add(subject: CounterSubject, windows: readonly CountWindow[], amount: number): Promise<void> {
    const mark = randomUUID();
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const stored = await this.read(subject);
      if (stored.add === mark) return;
      if (await this.setIf('flood counters add', subject, marked('add', mark, counting(stored, windows, amount, false)))) return;
    }
    throw new DependencyError('flood counters', new Error(`no addition to the counters held after ${MAX_ROUNDS} rounds`));
  }

  async giveBack(subject: CounterSubject, windows: readonly CountWindow[]): Promise<void> {
    const mark = randomUUID();
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const stored = await this.read(subject);
      if (stored.back === mark) return;
      // only the windows still in the period they were taken in, and above zero
      const current = windows.filter(({ window, startMs }) => {
        const entry = stored[window];
        return entry !== undefined && entry.s === startMs && entry.c > 0;
      });
      if (current.length === 0) return;
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = { ':one': 1, ':zero': 0 };
      const sets: string[] = [];
      const conditions: string[] = [];
      current.forEach(({ window, startMs }, index) => {
        names[`#w${index}`] = window;
        values[`:s${index}`] = startMs;
        sets.push(`#w${index}.c = #w${index}.c - :one`);
        conditions.push(`#w${index}.s = :s${index} AND #w${index}.c > :zero`);
      });
      if (await this.setIf('flood counters give back', subject, marked('back', mark, { sets, conditions, names, values })))
        return;
    }
  }

  /** One conditional write of a subject's item: true when it took place, false when its conditions failed. */
  private setIf(
    what: string,
    subject: CounterSubject,
    update: { sets: string[]; conditions: string[]; names: Record<string, string>; values: Record<string, unknown> },
  ): Promise<boolean> {
    return sendIfCondition(what, () =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: itemKey(subject),
          UpdateExpression: `SET ${update.sets.join(', ')}`,
          ConditionExpression: update.conditions.join(' AND '),
          ExpressionAttributeNames: update.names,
          ExpressionAttributeValues: update.values,
        }),
      ),
    );
  }

  private async read(subject: CounterSubject): Promise<Stored> {
    const { Item } = await sendOrFail('read flood counters', () =>
      this.db.send(new GetCommand({ TableName: this.table, Key: itemKey(subject), ConsistentRead: true })),
    );
    const stored: Stored = {};
    if (typeof Item?.['take'] === 'string') stored.take = Item['take'];
    if (typeof Item?.['back'] === 'string') stored.back = Item['back'];
    if (typeof Item?.['add'] === 'string') stored.add = Item['add'];
    for (const [name, entry] of Object.entries(Item ?? {})) {
      const value = entry as { s?: unknown; c?: unknown } | undefined;
      if (typeof value?.s === 'number' && typeof value.c === 'number') stored[name as FloodWindow] = { s: value.s, c: value.c };
    }
    return stored;
  }
}

type Update = { sets: string[]; conditions: string[]; names: Record<string, string>; values: Record<string, unknown> };

/**
 * The write that adds `amount` to every window, on conditions on what was read: a window still in the same period is
 * added to relatively (while below its limit, when `limited`), a window whose period is over is started anew (only
 * if no one else did).
 */
function counting(stored: Stored, windows: readonly CountWindow[], amount: number, limited: boolean): Update {
  const names: Record<string, string> = { '#ttl': TABLE_SCHEMA.ttlAttribute };
  const values: Record<string, unknown> = { ':ttl': Math.ceil(Date.now() / 1000) + ITEM_TTL_SECONDS };
  const sets: string[] = ['#ttl = :ttl'];
  const conditions: string[] = [];
  windows.forEach(({ window, startMs, limit }, index) => {
    const entry = stored[window];
    names[`#w${index}`] = window;
    if (entry?.s === startMs) {
      // set only where used: DynamoDB refuses a value the expressions do not name
      values[':n'] = amount;
      values[`:s${index}`] = startMs;
      sets.push(`#w${index}.c = #w${index}.c + :n`);
      if (limited) {
        values[`:l${index}`] = limit;
        conditions.push(`#w${index}.s = :s${index} AND #w${index}.c < :l${index}`);
      } else conditions.push(`#w${index}.s = :s${index}`);
    } else {
      values[`:fresh${index}`] = { s: startMs, c: amount };
      sets.push(`#w${index} = :fresh${index}`);
      if (entry === undefined) conditions.push(`attribute_not_exists(#w${index})`);
      else {
        values[`:old${index}`] = entry.s;
        conditions.push(`#w${index}.s = :old${index}`);
      }
    }
  });
  return { sets, conditions, names, values };
}

/**
 * An update that also writes its mark, on the condition that the mark is not there yet: an addition cannot be
 * `retrySafe` (carried out twice, it counts twice), so its retry is refused instead, and the next read finds the mark
 * (`docs/reliability.md`, "Lost answers").
 */
function marked(attribute: 'take' | 'back' | 'add', mark: string, update: Update): Update {
  return {
    sets: [...update.sets, '#mark = :mark'],
    conditions: [...update.conditions, '(attribute_not_exists(#mark) OR #mark <> :mark)'],
    names: { ...update.names, '#mark': attribute },
    values: { ...update.values, ':mark': mark },
  };
}
