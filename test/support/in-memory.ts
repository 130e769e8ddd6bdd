import type { CounterStore, CounterSubject, CounterTake, CountWindow, FloodWindow } from '../../functions/core/ports';
import type { Ban, BanList, BlockList } from '../../functions/core/moderation/moderation';
import {
  NO_PICTURE_BLOCKS,
  withBatch,
  type PictureBlockList,
  type PictureBlockStore,
} from '../../functions/core/moderation/picture-blocks';
import type {
  BlockedBytes,
  Clock,
  DuplicateClaim,
  DuplicateFingerprint,
  DuplicateIndex,
  Holds,
  ImageRecord,
  ImageTable,
  ObjectStore,
  PendingUpload,
  DueRef,
  SettingsStore,
  StagedObject,
  StagedObjectStore,
  StagedUsage,
  StoredObject,
  Report,
  ReportList,
  TokenLedger,
} from '../../functions/core/ports';

/** Flood counters in memory, with the same all-or-none rule as the DynamoDB store. */
export class InMemoryCounterStore implements CounterStore {
  readonly counts = new Map<string, { startMs: number; count: number }>();
  /** Awaited between a take's read and its write, to let a test put another upload in between. */
  beforeWrite: (() => Promise<void>) | undefined;

  async take(subject: CounterSubject, windows: readonly CountWindow[]): Promise<CounterTake> {
    const full = this.full(subject, windows);
    if (full.length > 0) return { taken: false, full };
    // the write that takes the slot is a store call of its own: another take may come in between
    await this.beforeWrite?.();
    const raced = this.full(subject, windows);
    if (raced.length > 0) return { taken: false, full: raced };
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

  add(subject: CounterSubject, windows: readonly CountWindow[], amount: number): Promise<void> {
    for (const { window, startMs } of windows) {
      const entry = this.counts.get(this.key(subject, window));
      this.counts.set(this.key(subject, window), { startMs, count: (entry?.startMs === startMs ? entry.count : 0) + amount });
    }
    return Promise.resolve();
  }

  private full(subject: CounterSubject, windows: readonly CountWindow[]): FloodWindow[] {
    return windows
      .filter(({ window, startMs, limit }) => {
        const entry = this.counts.get(this.key(subject, window));
        return entry?.startMs === startMs && entry.count >= limit;
      })
      .map(({ window }) => window);
  }

  /** The count of one window of a subject; 0 when none. */
  count(rule: CounterSubject['rule'], client: string, window: FloodWindow): number {
    return this.counts.get(this.key({ rule, client }, window))?.count ?? 0;
  }

  private key(subject: CounterSubject, window: FloodWindow): string {
    return `${subject.rule} ${subject.client} ${window}`;
  }
}

/** The real clock read `ms` later, for a sweep that must see things due while the stores' signatures keep real time. */
export function clockAheadBy(ms: number): Clock {
  return { nowMs: () => Date.now() + ms, sleep: (wait) => new Promise((resolve) => setTimeout(resolve, wait)) };
}

/**
 * Waits, if needed, until at least `marginMs` are left in the current UTC minute: for steps against the real clock that
 * must fall in one flood window (the windows are fixed minutes, `functions/core/flood.ts`).
 */
export async function clearOfMinuteEnd(marginMs: number): Promise<void> {
  const intoMinuteMs = Date.now() % 60_000;
  if (intoMinuteMs > 60_000 - marginMs) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinuteMs));
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

/** Every call the fakes got, in order, as `Port.method`. */
export class CallLog {
  readonly calls: string[] = [];

  record(call: string): void {
    this.calls.push(call);
  }

  /** The calls made after a mark (`mark` is recorded in the log by the test). */
  after(mark: string): string[] {
    return this.calls.slice(this.calls.indexOf(mark) + 1);
  }
}

/** Image records and name claims in memory, with the same conditions as the DynamoDB repository. */
export class InMemoryImageRepository implements ImageTable {
  readonly records = new Map<number, ImageRecord>();
  /** Name claims: the image id they were made for, and the upload while it is pending. */
  readonly claims = new Map<string, { imageId: number; pending: PendingUpload | undefined; sweepAtMs: number }>();
  /** When each record was marked deleting: it is due for the sweep from then on, as the table's index has it. */
  private readonly deletingSinceMs = new Map<number, number>();
  private counter = 0;

  constructor(private readonly log = new CallLog()) {}

  async allocateId(): Promise<number> {
    this.log.record('images.allocateId');
    this.counter += 1;
    return this.counter;
  }

  async claimName(upload: PendingUpload, sweepAtMs: number): Promise<boolean> {
    this.log.record('images.claimName');
    const held = this.claims.get(upload.name);
    // this upload's own claim (a retried write) counts as claimed
    if (held && !(held.pending && held.imageId === upload.imageId)) return false;
    this.claims.set(upload.name, { imageId: upload.imageId, pending: structuredClone(upload), sweepAtMs });
    return true;
  }

  async saveActive(record: ImageRecord): Promise<boolean> {
    this.log.record('images.saveActive');
    const held = this.records.get(record.id);
    // this upload's own record (a retried write) counts as written
    if (held && held.original.key !== record.original.key) return false;
    this.records.set(record.id, structuredClone(record));
    return true;
  }

  async settleName(name: string): Promise<boolean> {
    this.log.record('images.settleName');
    const claim = this.claims.get(name);
    if (!claim?.pending) return false;
    claim.pending = undefined;
    return true;
  }

  async find(id: number): Promise<ImageRecord | undefined> {
    this.log.record('images.find');
    const record = this.records.get(id);
    return record && structuredClone(record);
  }

  async findPending(name: string): Promise<PendingUpload | undefined> {
    const pending = this.claims.get(name)?.pending;
    return pending && structuredClone(pending);
  }

  async addView(id: number): Promise<ImageRecord | undefined> {
    const record = this.records.get(id);
    if (record?.status !== 'active') return undefined;
    record.views += 1;
    return structuredClone(record);
  }

  async writeHolds(
    id: number,
    readTokens: readonly string[],
    holds: Holds,
    expiresAtMs: number | null,
  ): Promise<ImageRecord | undefined> {
    this.log.record('images.writeHolds');
    const record = this.records.get(id);
    const tokens = record?.deleteTokenHashes ?? [];
    const same = tokens.length === readTokens.length && readTokens.every((hash) => tokens.includes(hash));
    if (record?.status !== 'active' || !same) return undefined;
    if (Object.keys(holds).length === 0) throw new Error('an image holds at least one delete token');
    record.deleteTokenHashes = Object.keys(holds);
    record.holdEnds = { ...holds };
    record.expiresAtMs = expiresAtMs;
    return structuredClone(record);
  }

  async markDeleting(id: number, tokenHash: string, nowMs: number): Promise<boolean> {
    const record = this.records.get(id);
    if (record?.status === 'deleting' && record.deleteTokenHashes.includes(tokenHash)) return true;
    if (record?.status !== 'active' || !record.deleteTokenHashes.includes(tokenHash)) return false;
    return this.markDue(record, nowMs);
  }

  readonly duePartitions = 1;

  async *dueRefs(nowMs: number): AsyncIterable<DueRef[]> {
    const refs = this.due(nowMs).map(({ ref }) => ref);
    if (refs.length > 0) yield refs;
  }

  async imageIdOfName(objectKey: string): Promise<number | undefined> {
    return this.claims.get(objectKey)?.imageId;
  }

  async markTakenDown(id: number, nowMs: number): Promise<boolean> {
    const record = this.records.get(id);
    if (record) record.takenDown = true;
    return record ? this.markDue(record, nowMs) : false;
  }

  async retire(id: number, nowMs: number, untilMs: number): Promise<boolean> {
    this.log.record('images.retire');
    const record = this.records.get(id);
    const expired = record?.status === 'active' && record.expiresAtMs !== null && record.expiresAtMs <= nowMs;
    if (!record || record.takenDown || (record.status !== 'deleting' && !expired)) return false;
    record.status = 'removed';
    record.restorableUntilMs = untilMs;
    this.deletingSinceMs.delete(id);
    return true;
  }

  async revive(id: number, expiresAtMs: number | null): Promise<boolean> {
    const record = this.records.get(id);
    if (record?.status !== 'removed') return false;
    record.status = 'active';
    record.expiresAtMs = expiresAtMs;
    delete record.restorableUntilMs;
    return true;
  }

  private markDue(record: ImageRecord, nowMs: number): true {
    record.status = 'deleting';
    this.deletingSinceMs.set(record.id, nowMs);
    return true;
  }

  recent(sinceMs: number): AsyncIterable<ImageRecord[]> {
    return this.matching((record) => record.createdAtMs >= sinceMs);
  }

  withContent(md5s: string[]): AsyncIterable<ImageRecord[]> {
    return this.matching((record) => md5s.includes(record.sourceMd5) || md5s.includes(record.original.md5));
  }

  private async *matching(test: (record: ImageRecord) => boolean): AsyncIterable<ImageRecord[]> {
    const records = [...this.records.values()].filter(test).map((record) => structuredClone(record));
    if (records.length > 0) yield records;
  }

  async oldestDueAtMs(nowMs: number): Promise<number | undefined> {
    const due = this.due(nowMs).map(({ atMs }) => atMs);
    return due.length === 0 ? undefined : Math.min(...due);
  }

  /** What the sweep index would hold by `nowMs`: unfinished deletes (due at once), expired images, pending claims. */
  private due(nowMs: number): Array<{ ref: DueRef; atMs: number }> {
    const images = [...this.records.values()].flatMap((record) => {
      if (record.status === 'removed') return [];
      const atMs = record.status === 'deleting' ? (this.deletingSinceMs.get(record.id) ?? 0) : record.expiresAtMs;
      return atMs !== null && atMs <= nowMs ? [{ ref: { id: record.id }, atMs }] : [];
    });
    const names = [...this.claims].flatMap(([name, claim]) =>
      claim.pending && claim.sweepAtMs <= nowMs ? [{ ref: { name }, atMs: claim.sweepAtMs }] : [],
    );
    return [...images, ...names];
  }

  async remove(id: number): Promise<boolean> {
    this.log.record('images.remove');
    this.deletingSinceMs.delete(id);
    return this.records.delete(id);
  }
}

/** Duplicate fingerprints in memory, with the same conditional rules as the DynamoDB index. */
export class InMemoryDuplicateIndex implements DuplicateIndex {
  readonly entries = new Map<string, DuplicateClaim & { expiresAtMs: number }>();

  constructor(private readonly log = new CallLog()) {}

  async claim(fingerprint: DuplicateFingerprint, claim: DuplicateClaim, windowMs: number) {
    this.log.record('duplicates.claim');
    const key = this.key(fingerprint);
    const held = this.entries.get(key);
    if (!held || held.expiresAtMs < claim.claimedAtMs || held.claimId === claim.claimId) {
      this.entries.set(key, { ...claim, expiresAtMs: claim.claimedAtMs + windowMs });
      return { claimed: true as const };
    }
    return { claimed: false as const, held: { claimId: held.claimId, imageId: held.imageId, claimedAtMs: held.claimedAtMs } };
  }

  async takeOver(fingerprint: DuplicateFingerprint, previousClaimId: string, claim: DuplicateClaim, windowMs: number) {
    this.log.record('duplicates.takeOver');
    const key = this.key(fingerprint);
    if (this.entries.get(key)?.claimId !== previousClaimId) return false;
    this.entries.set(key, { ...claim, expiresAtMs: claim.claimedAtMs + windowMs });
    return true;
  }

  async rebind(fingerprint: DuplicateFingerprint, claimId: string, imageId: number): Promise<void> {
    this.log.record('duplicates.rebind');
    const entry = this.entries.get(this.key(fingerprint));
    if (entry?.claimId === claimId) entry.imageId = imageId;
  }

  async releaseClaim(fingerprint: DuplicateFingerprint, claimId: string): Promise<void> {
    this.log.record('duplicates.releaseClaim');
    if (this.entries.get(this.key(fingerprint))?.claimId === claimId) this.entries.delete(this.key(fingerprint));
  }

  async releaseImage(fingerprint: DuplicateFingerprint, imageId: number): Promise<void> {
    if (this.entries.get(this.key(fingerprint))?.imageId === imageId) this.entries.delete(this.key(fingerprint));
  }

  key(fingerprint: DuplicateFingerprint): string {
    return `${fingerprint.clientIp} ${fingerprint.md5} ${fingerprint.width ?? '-'}`;
  }
}

/** Objects in memory, with the versions a removal keeps (as a bucket with versioning); `failing` makes every put fail. */
export class InMemoryObjectStore implements ObjectStore {
  readonly objects = new Map<string, StoredObject>();
  /** Earlier versions of each key, kept by a removal and dropped by a purge. */
  readonly versions = new Map<string, StoredObject[]>();
  failing = false;

  constructor(private readonly log = new CallLog()) {}

  async put(object: StoredObject): Promise<void> {
    this.log.record('objects.put');
    if (this.failing) throw new Error('injected: the object store is down');
    this.objects.set(object.key, object);
  }

  async exist(keys: readonly string[]): Promise<boolean> {
    this.log.record('objects.exist');
    if (this.failing) throw new Error('injected: the object store is down');
    return keys.every((key) => this.objects.has(key));
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    this.log.record('objects.deleteMany');
    for (const key of keys) {
      const current = this.objects.get(key);
      if (current) this.versions.set(key, [...(this.versions.get(key) ?? []), current]);
      this.objects.delete(key);
    }
  }

  async purge(keys: readonly string[]): Promise<void> {
    this.log.record('objects.purge');
    for (const key of keys) {
      this.objects.delete(key);
      this.versions.delete(key);
    }
  }

  async restore(keys: readonly string[]): Promise<string[]> {
    this.log.record('objects.restore');
    const lost = keys.filter((key) => !this.objects.has(key) && !this.versions.get(key)?.length);
    if (lost.length > 0) return lost;
    for (const key of keys) {
      const kept = this.versions.get(key) ?? [];
      const newest = this.objects.has(key) ? undefined : kept.pop();
      if (newest) this.objects.set(key, newest);
    }
    return [];
  }

  async read(key: string): Promise<Uint8Array | undefined> {
    return this.objects.get(key)?.body;
  }

  async readKept(key: string): Promise<Uint8Array | undefined> {
    return this.objects.get(key)?.body ?? this.versions.get(key)?.at(-1)?.body;
  }
}

/** Settings in memory. */
export class InMemorySettings implements SettingsStore {
  constructor(readonly values: { apiKey?: string; floodLimits?: string; idSalt?: string } = {}) {}

  async apiKey(): Promise<string | undefined> {
    return this.values.apiKey;
  }

  async floodLimits(): Promise<string | undefined> {
    return this.values.floodLimits;
  }

  async idSalt(): Promise<string> {
    return this.values.idSalt ?? 'salt';
  }

  async publicUrl(): Promise<string | undefined> {
    return undefined;
  }

  async originSecrets(): Promise<readonly string[]> {
    return [];
  }

  async distributionId(): Promise<string | undefined> {
    return undefined;
  }
}

/** The staging place in memory: `put` stands for the client's PUT to the upload URL. */
export class InMemoryStagedStore implements StagedObjectStore {
  readonly objects = new Map<string, Uint8Array>();
  /** When each object was put (`put`'s `atMs`, default 0). */
  readonly putAtMs = new Map<string, number>();
  readonly urls: Array<{ id: string; size: number }> = [];

  async uploadUrl(id: string, size: number): Promise<{ url: string; headers: Record<string, string> }> {
    this.urls.push({ id, size });
    return { url: `memory://staging/${id}`, headers: { 'Content-Length': String(size) } };
  }

  put(id: string, bytes: Uint8Array, atMs = 0): void {
    this.objects.set(id, bytes);
    this.putAtMs.set(id, atMs);
  }

  async open(id: string): Promise<StagedObject | undefined> {
    const bytes = this.objects.get(id);
    return bytes && { size: bytes.length, read: async () => bytes, discard: () => undefined };
  }

  async remove(id: string): Promise<void> {
    this.objects.delete(id);
  }

  async removeOlderThan(cutoffMs: number): Promise<StagedUsage> {
    const old = [...this.objects].filter(([id]) => (this.putAtMs.get(id) ?? 0) < cutoffMs);
    for (const [id] of old) this.objects.delete(id);
    return { files: old.length, bytes: old.reduce((sum, [, bytes]) => sum + bytes.length, 0) };
  }

  async usage(): Promise<StagedUsage> {
    return { files: this.objects.size, bytes: [...this.objects.values()].reduce((sum, bytes) => sum + bytes.length, 0) };
  }
}

export class InMemoryTokenLedger implements TokenLedger {
  readonly used = new Set<string>();

  async use(id: string): Promise<boolean> {
    if (this.used.has(id)) return false;
    this.used.add(id);
    return true;
  }

  async forget(id: string): Promise<void> {
    this.used.delete(id);
  }
}

/** Bans and blocks in memory. */
export class InMemoryModeration implements BanList, BlockList {
  readonly bans = new Map<string, number | null>();
  readonly blocked = new Map<string, { reason: string; blockedAtMs: number }>();

  async all(): Promise<Ban[]> {
    return [...this.bans].map(([range, untilMs]) => ({ range, untilMs }));
  }

  async add(ban: Ban): Promise<void> {
    this.bans.set(ban.range, ban.untilMs);
  }

  async remove(range: string): Promise<boolean> {
    return this.bans.delete(range);
  }

  async anyBlocked(md5s: readonly string[]): Promise<boolean> {
    return md5s.some((md5) => this.blocked.has(md5));
  }

  async block(md5: string, reason = 'test', blockedAtMs = 0): Promise<void> {
    this.blocked.set(md5, { reason, blockedAtMs });
  }

  async unblock(md5: string): Promise<boolean> {
    return this.blocked.delete(md5);
  }

  async blockedBytes(): Promise<BlockedBytes[]> {
    return [...this.blocked].map(([md5, entry]) => ({ md5, ...entry })).sort((a, b) => a.blockedAtMs - b.blockedAtMs);
  }
}

/** The blocked pictures' list in memory, replaced whole under a new version as the S3 adapter does. */
export class InMemoryPictureBlocks implements PictureBlockStore {
  list: PictureBlockList = NO_PICTURE_BLOCKS;
  private versions = 0;

  async hashes(known: string | undefined): Promise<{ version: string; hashes?: Uint8Array }> {
    return known === this.list.version ? { version: known } : { version: this.list.version, hashes: this.list.hashes };
  }

  async read(): Promise<PictureBlockList> {
    return this.list;
  }

  async replace(next: PictureBlockList): Promise<boolean> {
    if (next.version !== this.list.version) return false;
    this.versions += 1;
    this.list = { ...next, version: `v${this.versions}` };
    return true;
  }

  /** Blocks these hashes at once, as a takedown does (a test's shortcut). */
  async block(hexes: readonly string[], reason = 'test'): Promise<void> {
    await this.replace(withBatch(this.list, hexes, reason, 0).list);
  }
}

/** Viewers' reports in memory, one per client and image, as the DynamoDB adapter keeps them. */
export class InMemoryReports implements ReportList {
  readonly kept = new Map<string, Report>();

  async add(report: Report): Promise<boolean> {
    const key = `${report.imageId}#${report.clientIp}`;
    if (this.kept.has(key)) return false;
    this.kept.set(key, { ...report });
    return true;
  }

  async *all(): AsyncIterable<Report[]> {
    const reports = [...this.kept.values()].map((report) => ({ ...report }));
    if (reports.length > 0) yield reports;
  }

  async resolve(imageId: number): Promise<number> {
    let removed = 0;
    for (const [key, report] of this.kept) {
      if (report.imageId !== imageId) continue;
      this.kept.delete(key);
      removed += 1;
    }
    return removed;
  }
}
