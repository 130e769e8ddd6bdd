import ipaddr from 'ipaddr.js';
import { ServiceError } from './errors';
import type { CounterStore, CounterTake, CountWindow, CounterSubject } from './ports';
import { FLOOD_WINDOWS, type FloodWindow, type GuardRuleName } from './ports';
/** Uploads allowed per client and window; 0 turns a window off. */
export type FloodLimits = Record<FloodWindow, number>;

/** The defaults of `docs/api.md`, section 12. */
export const DEFAULT_FLOOD_LIMITS: Readonly<FloodLimits> = { minute: 50, hour: 500, day: 1000, week: 5000, month: 10000 };

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The fixed window (UTC) an instant falls in: minutes, hours, days, weeks from Monday, calendar months. */
export function windowBounds(window: FloodWindow, nowMs: number): { startMs: number; endMs: number } {
  const within = (size: number): { startMs: number; endMs: number } => {
    const startMs = Math.floor(nowMs / size) * size;
    return { startMs, endMs: startMs + size };
  };
  switch (window) {
    case 'minute':
      return within(MINUTE_MS);
    case 'hour':
      return within(HOUR_MS);
    case 'day':
      return within(DAY_MS);
    case 'week': {
      const day = Math.floor(nowMs / DAY_MS);
      const sinceMonday = (day + 3) % 7; // 1970-01-01 was a Thursday
      const startMs = (day - sinceMonday) * DAY_MS;
      return { startMs, endMs: startMs + 7 * DAY_MS };
    }
    case 'month': {
      const date = new Date(nowMs);
      return {
        startMs: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1),
        endMs: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1),
      };
    }
  }
}

/** Chevereto's message: `Flooding detected. You can only upload 50 images per minute`. */
export function floodMessage(limit: number, window: FloodWindow): string {
  return `Flooding detected. You can only upload ${limit} ${limit === 1 ? 'image' : 'images'} per ${window}`;
}

/**
 * Who a flood limit counts: the IPv4 address, or the /64 network of an IPv6 address (one subscriber usually holds a
 * whole /64, so counting single IPv6 addresses would let one client rotate through billions).
 */
export function floodSubject(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/64`);
  return `${network.toString()}/64`;
}

/** Reads the flood-limits parameter: missing or invalid windows get the defaults. */
export function parseFloodLimits(
  text: string | undefined,
  defaults: Readonly<FloodLimits> = DEFAULT_FLOOD_LIMITS,
): { limits: FloodLimits; problems: string[] } {
  const limits: FloodLimits = { ...defaults };
  const problems: string[] = [];
  if (text === undefined || text.trim() === '') return { limits, problems: ['the flood-limits parameter is missing'] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { limits, problems: ['the flood-limits parameter is not JSON'] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { limits, problems: ['the flood-limits parameter is not a JSON object'] };
  for (const window of FLOOD_WINDOWS) {
    const value: unknown = (parsed as Record<string, unknown>)[window];
    if (value === undefined) continue;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) limits[window] = value;
    else problems.push(`flood limit ${window} must be a whole number >= 0`);
  }
  return { limits, problems };
}

/** Slots taken for one upload; given back when the upload fails, kept when it is stored. */
export interface FloodReservation {
  release(): Promise<void>;
  /** Counts `amount` more in the windows the slot was taken in, whatever their limits (work already done). */
  add(amount: number): Promise<void>;
}

/** What a guard counts, and the refusal once a window is full. */
export interface GuardRule {
  name: GuardRuleName;
  refusal(limit: number, window: FloodWindow, retryAfterSeconds: number): ServiceError;
}

/** The flood limits (`docs/api.md`, section 12): successful uploads per client. */
export const UPLOAD_FLOOD_RULE: GuardRule = {
  name: 'uploads',
  refusal: (limit, window, retryAfterSeconds) => new ServiceError('Flooding', floodMessage(limit, window), { retryAfterSeconds }),
};

/**
 * URL sources that could not be fetched, per client: a client whose URLs keep failing is refused before the service
 * fetches more for it (the key must not turn the service into a download amplifier).
 */
export const FETCH_FAILURE_RULE: GuardRule = {
  name: 'fetch-failures',
  refusal: (limit, window, retryAfterSeconds) =>
    new ServiceError('FetchFailuresExceeded', `Too many URL sources that could not be fetched - max ${limit} per ${window}`, {
      retryAfterSeconds,
    }),
};

/**
 * URL sources fetched per client, whatever came of the fetch (an image, a non-image, a duplicate, an error): the key
 * must not make the service download on a client's behalf without bound (`docs/rules.md`).
 */
export const URL_FETCH_RULE: GuardRule = {
  name: 'url-fetches',
  refusal: (limit, window, retryAfterSeconds) =>
    new ServiceError('UrlFetchesExceeded', `Too many URL sources - max ${limit} per ${window}`, { retryAfterSeconds }),
};

/** Megabytes fetched from URL sources per client (a megabyte begun counts whole), whatever came of the fetch. */
export const URL_MEGABYTE_RULE: GuardRule = {
  name: 'url-megabytes',
  refusal: (limit, window, retryAfterSeconds) =>
    new ServiceError('UrlFetchesExceeded', `Too much fetched from URL sources - max ${limit} MB per ${window}`, {
      retryAfterSeconds,
    }),
};

/**
 * URL sources a client has fetched at once: counted in the minute's window and given back when the fetch ends, so at
 * most the limit start in one minute and run together (twice that across a minute's turn); a slot a crash kept goes
 * with its minute. A slow source cannot have one client hold every instance (`docs/rules.md`).
 */
export const URL_FETCHES_AT_ONCE_RULE: GuardRule = {
  name: 'url-fetches-at-once',
  refusal: (limit) =>
    new ServiceError('UrlFetchesExceeded', `Too many URL sources at once - max ${limit} at a time`, { retryAfterSeconds: 10 }),
};

/** Upload URLs of the two-step upload handed out per client: each lets a client stage up to the staged limit. */
export const UPLOAD_URL_RULE: GuardRule = {
  name: 'upload-urls',
  refusal: (limit, window, retryAfterSeconds) =>
    new ServiceError('UploadUrlsExceeded', `Too many upload URLs - max ${limit} per ${window}`, { retryAfterSeconds }),
};

/** Viewers' reports per client: a report costs the operator's attention, and anyone can send one. */
export const REPORT_RULE: GuardRule = {
  name: 'reports',
  refusal: (limit, window, retryAfterSeconds) =>
    new ServiceError('ReportsExceeded', `Too many reports - max ${limit} per ${window}`, { retryAfterSeconds }),
};

/**
 * Limits per client that hold under concurrency: every window's counter is incremented, all or none, only while each
 * is below its limit, before the work is committed, and decremented again when the work does not end in what is
 * counted (a stored image; for fetch failures, a fetch that failed).
 */
export class FloodGuard {
  constructor(
    private readonly counters: CounterStore,
    private readonly limits: () => Promise<FloodLimits>,
    private readonly rule: GuardRule = UPLOAD_FLOOD_RULE,
  ) {}

  /** Takes a slot in every window of the client, or refuses with the rule's error. */
  async reserve(ip: string, nowMs: number): Promise<FloodReservation> {
    const limits = await this.limits();
    const subject: CounterSubject = { rule: this.rule.name, client: floodSubject(ip) };
    const windows: CountWindow[] = FLOOD_WINDOWS.filter((window) => limits[window] > 0).map((window) => ({
      window,
      limit: limits[window],
      ...windowBounds(window, nowMs),
    }));
    if (windows.length === 0) return { release: () => Promise.resolve(), add: () => Promise.resolve() };
    return this.reservationOf(await this.counters.take(subject, windows), subject, windows, nowMs);
  }

  /** The reservation a take won, or the refusal naming the shortest window that was full. */
  private reservationOf(answer: CounterTake, subject: CounterSubject, windows: CountWindow[], nowMs: number): FloodReservation {
    if (!answer.taken) {
      const tripped = windows.filter(({ window }) => answer.full.includes(window));
      const [first] = tripped;
      if (!first) throw new Error('the counters refused without naming a full window');
      // Named like Chevereto (the shortest window that tripped); retry only helps once every tripped window is over.
      const lastEndMs = Math.max(...tripped.map(({ endMs }) => endMs));
      throw this.rule.refusal(first.limit, first.window, Math.max(1, Math.ceil((lastEndMs - nowMs) / 1000)));
    }
    // Given back at most once: an upload's error path may reach it after its success path did.
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        await this.counters.giveBack(subject, windows);
      },
      add: (amount) => (amount > 0 ? this.counters.add(subject, windows, amount) : Promise.resolve()),
    };
  }
}
