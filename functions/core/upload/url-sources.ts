import { ServiceError } from '../errors';
import type { FloodGuard } from '../flood';
import { cleanOriginalFilename } from './naming';
import type { Clock, SourceFetcher } from '../ports';
import type { SourceBytes } from './upload-source';

export interface UrlSourcesDeps {
  fetcher: SourceFetcher;
  /** URL sources that could not be fetched, per client. */
  fetchFailures: Pick<FloodGuard, 'reserve'>;
  /** URL sources fetched, and their megabytes, per client, whatever came of them. */
  urlFetches: Pick<FloodGuard, 'reserve'>;
  urlMegabytes: Pick<FloodGuard, 'reserve'>;
  /** URL sources a client has fetched at once. */
  urlFetchesAtOnce: Pick<FloodGuard, 'reserve'>;
  clock: Clock;
  /** URL sources do not pass through the gateway and may be larger than direct uploads. */
  maxBytes: number;
}

/** URL sources fetched within their client's budgets (`docs/rules.md`, "URL sources"). */
export class UrlSources {
  constructor(private readonly deps: UrlSourcesDeps) {}

  /**
   * The client's budgets are taken first: a slot of its fetches at once, given back when the fetch ends; a fetch, and
   * its first megabyte, counted whatever comes of it; and a slot of its fetch-failure budget, given back when the fetch
   * succeeds. Once fetched, the rest of its megabytes are counted (a body cut at the limit counts the limit).
   */
  async fetch(url: string, clientIp: string): Promise<SourceBytes> {
    const nowMs = this.deps.clock.nowMs();
    const atOnce = await this.deps.urlFetchesAtOnce.reserve(clientIp, nowMs);
    try {
      return await this.fetchCounted(url, clientIp, nowMs);
    } finally {
      await atOnce.release();
    }
  }

  private async fetchCounted(url: string, clientIp: string, nowMs: number): Promise<SourceBytes> {
    const [, megabytes] = await Promise.all([
      this.deps.urlFetches.reserve(clientIp, nowMs),
      this.deps.urlMegabytes.reserve(clientIp, nowMs),
    ]);
    const failureSlot = await this.deps.fetchFailures.reserve(clientIp, nowMs);
    const maxBytes = this.deps.maxBytes;
    const fetched = await this.deps.fetcher.fetch(url, maxBytes).catch(async (error: unknown) => {
      if (error instanceof ServiceError && error.kind === 'FileTooBig') await megabytes.add(megabytesOf(maxBytes) - 1);
      throw error;
    });
    await Promise.all([failureSlot.release(), megabytes.add(megabytesOf(fetched.bytes.length) - 1)]);
    if (fetched.bytes.length === 0) throw new ServiceError('EmptySource', 'Empty source');
    return { bytes: fetched.bytes, filename: cleanOriginalFilename(fetched.filename) || undefined };
  }
}

/** Megabytes (10^6 bytes) begun: what a fetch counts against its client's megabytes an hour; at least one. */
function megabytesOf(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1_000_000));
}
