/** Counters: the clients' windows with their ceilings, and the daily figures. */

/** The windows a client's uploads are counted in (`docs/api.md`, section 12). */
export const FLOOD_WINDOWS = ['minute', 'hour', 'day', 'week', 'month'] as const;

export type FloodWindow = (typeof FLOOD_WINDOWS)[number];

/** What a guard counts (each its own counters: `adapters/dynamo-counter-store.ts`). */
export type GuardRuleName =
  'uploads' | 'fetch-failures' | 'url-fetches' | 'url-megabytes' | 'url-fetches-at-once' | 'upload-urls' | 'reports';

/** One window of a subject's counters: which one, where it starts, and how many it holds at most. */
export interface CountWindow {
  window: FloodWindow;
  startMs: number;
  endMs: number;
  limit: number;
}

/** What a guard counts (uploads, or URL fetches that failed) and for whom (a client). */
export interface CounterSubject {
  rule: GuardRuleName;
  client: string;
}

/**
 * Counters with ceilings, every window of a subject kept together (one DynamoDB item per subject and rule), changed
 * all or none, exactly under concurrency.
 */
export interface CounterStore {
  /** Adds one to every window when each is below its limit; otherwise adds nothing and answers the full ones. */
  take(subject: CounterSubject, windows: readonly CountWindow[]): Promise<CounterTake>;
  /** Takes one off every window that still is the one taken from (a window over since is left alone). */
  giveBack(subject: CounterSubject, windows: readonly CountWindow[]): Promise<void>;
  /** Adds `amount` to every window, whatever its limit: work done already, counted after it (a window over is begun anew). */
  add(subject: CounterSubject, windows: readonly CountWindow[], amount: number): Promise<void>;
}

/** A take of the counters: the slot taken in every window, or the windows that were full. */
export type CounterTake = { taken: true } | { taken: false; full: FloodWindow[] };

/**
 * Figures per day (UTC) for `npm run admin -- stats`, kept as counters so that reading a day's figures reads one item,
 * and written in batches so that they cost next to nothing per upload: stored uploads and their bytes by the sweep
 * (once per run and day, from the uploads whose name claims it settles, about 15 minutes after they were stored),
 * refusals by each function instance (once a minute at most).
 */
export interface DayFigures {
  uploads: number;
  bytes: number;
  /** Refused uploads that carried the key: what the service's users met. */
  refusals: number;
  /** Refused requests without the key (or with a wrong one): anyone can send them, so they are counted apart. */
  unauthenticated: number;
  /** Viewers' reports of images received (one per client and image). */
  reports: number;
}

export interface DailyStats {
  add(day: string, figures: Partial<DayFigures>): Promise<void>;
  read(days: readonly string[]): Promise<Map<string, DayFigures>>;
}
