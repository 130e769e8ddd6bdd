import { DayTally, dayOf, type DailyStats } from '../daily-stats';
import { isDue, isLive } from './lifecycle';
import { METRIC, type Metrics } from '../metrics';
import type { Clock, ImageRecord, ImageRecords, ImageRemovals, NameClaims, StagedObjectStore, SweepQueue } from '../ports';
import { planPurge, PURGE_PATHS_PER_RUN } from './purge-plan';
import { fileKeys, removeFiles, type RemovalDeps } from './remove-image';
import { STAGED_KEEP_MS } from '../upload/staged-uploads';

export interface SweeperDeps extends RemovalDeps {
  images: SweepQueue & ImageRecords & ImageRemovals & Pick<NameClaims, 'findPending' | 'settleName'>;
  /** The daily figures of stored uploads, added once per run and day. */
  stats?: DailyStats;
  /** The two-step upload's staging place: what no token can use any more goes (`STAGED_KEEP_MS`). */
  staged?: Pick<StagedObjectStore, 'removeOlderThan'>;
  clock: Clock;
  metrics: Metrics;
  /**
   * How long a removed image's record is kept, restorable, as the bucket keeps its files (`KEEP_DELETED_DAYS`); 0: it
   * goes with them.
   */
  keepDeletedMs: number;
}

export interface SweepOptions {
  /** A run takes no new page of due records after this long (the function's timeout leaves room for the last one). */
  budgetMs: number;
  /** Records removed at once, in each part read at once. */
  concurrency: number;
  /** Parts of what is due (the sweep index's shards) read at once. */
  partitions: number;
  /** Due records read per query. */
  pageSize: number;
}

export interface SweepResult {
  removed: number;
  failed: number;
  /** CDN paths invalidated (a folder counts as one). */
  purgedPaths: number;
}

/** A purge is sent, and its records forgotten, once this many removed files wait (a run may remove hundreds of thousands). */
const PURGE_BATCH_KEYS = 2_400;

export const DEFAULT_SWEEP_OPTIONS: SweepOptions = { budgetMs: 180_000, concurrency: 16, partitions: 8, pageSize: 100 };

/**
 * Removes what is due: expired images, uploads that died half way (their name claims still pending past their grace),
 * and deletes that stopped half way or whose CDN purge was refused; and settles the name claims of stored uploads.
 * Runs every few minutes (EventBridge in AWS, a timer locally); DynamoDB TTL is only a backstop. It pages through
 * everything due until its time budget ends, several parts of the sweep index at once. The files of served images are
 * purged from the CDN in batches, and a record goes only once its purge is sent, so a throttled purge is sent again by
 * a later run. Two runs may overlap: every step is idempotent, and a record is counted by the run whose delete (or
 * settle) removed it.
 */
export class Sweeper {
  constructor(private readonly deps: SweeperDeps) {}

  async sweep(options: SweepOptions = DEFAULT_SWEEP_OPTIONS): Promise<SweepResult> {
    const { clock, images, logger, metrics } = this.deps;
    const startedMs = clock.nowMs();
    const result: SweepResult = { removed: 0, failed: 0, purgedPaths: 0 };
    const stored = new DayTally();
    /** Served images whose files are gone, waiting for their purge before their records go. */
    let toPurge: ImageRecord[] = [];
    let purgeRefused = false;

    const purgeThenForget = async (): Promise<void> => {
      const batch = toPurge;
      toPurge = [];
      if (batch.length === 0 || purgeRefused) return;
      let paths: number;
      try {
        // every purge of a run together within the run's paths: the last ones may merge into coarser folders
        paths = await this.deps.purger.purge(planPurge(batch.flatMap(fileKeys), PURGE_PATHS_PER_RUN - result.purgedPaths));
      } catch (error) {
        // throttled (too many paths in progress) or refused: the records stay due, and a later run purges them
        purgeRefused = true;
        metrics.add(METRIC.purgeFailures, 'Count', 1);
        logger.warn('CDN purge refused; the records stay for the next sweep', { images: batch.length, error });
        return;
      }
      result.purgedPaths += paths;
      metrics.add(METRIC.purgedPaths, 'Count', paths);
      await eachAtOnce(batch, options.concurrency, (record) => this.forget(record, startedMs, result));
    };

    const partitions = Array.from({ length: images.duePartitions }, (_, partition) => partition);
    /** Set once a page ends past the budget: parts under way stop after their page, the others are not begun. */
    let outOfTime = false;
    await eachAtOnce(partitions, options.partitions, async (partition) => {
      if (outOfTime) return;
      for await (const page of images.dueRefs(startedMs, options.pageSize, partition)) {
        await eachAtOnce(page, options.concurrency, async (ref) => {
          if ('name' in ref) return this.settleUpload(ref.name, startedMs, result, stored);
          const record = await this.removeFilesOf(ref.id, startedMs, result);
          if (record) toPurge.push(record);
        });
        if (toPurge.length * 3 >= PURGE_BATCH_KEYS) await purgeThenForget();
        if (clock.nowMs() - startedMs >= options.budgetMs) outOfTime = true;
        if (outOfTime) break;
      }
    });
    await purgeThenForget();
    if (this.deps.stats) await stored.writeTo(this.deps.stats, logger);
    await this.removeStaleStaged(startedMs);

    const oldestDueAtMs = await images.oldestDueAtMs(startedMs);
    metrics.add(METRIC.sweepRemoved, 'Count', result.removed);
    metrics.add(METRIC.sweepFailed, 'Count', result.failed);
    metrics.add(METRIC.sweepBacklogAge, 'Seconds', oldestDueAtMs === undefined ? 0 : (startedMs - oldestDueAtMs) / 1000);
    if (result.removed > 0 || result.failed > 0) logger.info('sweep', { ...result, oldestDueAtMs });
    return result;
  }

  /** Removes the files of a due image; answers its record, which waits for the files' purge from the CDN. */
  private async removeFilesOf(id: number, nowMs: number, result: SweepResult): Promise<ImageRecord | undefined> {
    try {
      // The index is read eventually consistent; the record itself decides.
      const record = await this.deps.images.find(id);
      if (!record || !isDue(record, nowMs)) return undefined;
      await removeFiles(this.deps, record);
      return record;
    } catch (error) {
      this.failed(result, 'sweep could not remove an image; the next sweep tries again', { id, error });
      return undefined;
    }
  }

  /**
   * Settles the name claim of an upload past its grace. Stored (its image's record holds the claimed files, all there):
   * the claim only leaves the sweep's sight. Dead half way (no record, or a live record with a file missing, written
   * while the files were put): the record and the files it may have written go first (never answered, so there is
   * nothing to purge), and the claim counts as removed.
   */
  private async settleUpload(name: string, nowMs: number, result: SweepResult, stored: DayTally): Promise<void> {
    try {
      const upload = await this.deps.images.findPending(name);
      if (!upload || !isDue(upload, nowMs)) return;
      let record = await this.deps.images.find(upload.imageId);
      // A record of another image under that id (the upload drew a taken id and saved under a new one) may mean
      // either; its files are left rather than risk removing a stored image's.
      const ours = record?.original.key === upload.keys.original;
      if (record && ours && isLive(record, nowMs) && !(await this.deps.objects.exist(fileKeys(record)))) {
        // The record is written alongside the files' puts: this upload died in between, and was never answered.
        await removeFiles(this.deps, record);
        await this.deps.images.remove(record.id);
        record = undefined;
      } else if (!record) {
        await this.deps.objects.deleteMany([upload.keys.original, upload.keys.thumb, upload.keys.medium]);
      }
      const settled = await this.deps.images.settleName(name);
      if (settled && !record) result.removed += 1;
      // counted once, by the run that settled it; an image removed by then is not (docs/operations.md, "stats")
      if (settled && record && ours && record.status !== 'removed') {
        const bytes = record.original.size + record.thumb.size + record.medium.size;
        stored.add(dayOf(upload.createdAtMs), { uploads: 1, bytes });
      }
    } catch (error) {
      this.failed(result, 'sweep could not settle an upload; the next sweep tries again', { name, error });
    }
  }

  /** Staged bytes no token can use any more: left by a PUT after its upload, or a token never used or refused. */
  private async removeStaleStaged(nowMs: number): Promise<void> {
    if (!this.deps.staged) return;
    try {
      const removed = await this.deps.staged.removeOlderThan(nowMs - STAGED_KEEP_MS);
      this.deps.metrics.add(METRIC.stagedRemoved, 'Count', removed.files);
      if (removed.files > 0) this.deps.logger.info('stale staged uploads removed', { ...removed });
    } catch (error) {
      this.deps.logger.warn('stale staged uploads not removed; the next sweep tries again', { error });
    }
  }

  private failed(result: SweepResult, message: string, details: Record<string, unknown>): void {
    result.failed += 1;
    this.deps.logger.warn(message, details);
  }

  /** Its files gone and purged: a removed image's record is kept, restorable, unless it was taken down. */
  private async forget(record: ImageRecord, nowMs: number, result: SweepResult): Promise<void> {
    const { images, keepDeletedMs } = this.deps;
    try {
      const keep = !record.takenDown && keepDeletedMs > 0;
      let done = keep && (await images.retire(record.id, nowMs, nowMs + keepDeletedMs));
      // not kept: nothing is, or it was taken down (maybe since this run read it); one restored meanwhile stays
      if (!done && (!keep || (await images.find(record.id))?.takenDown)) done = await images.remove(record.id);
      if (done) result.removed += 1;
    } catch (error) {
      this.failed(result, 'sweep could not remove a record; the next sweep tries again', { id: record.id, error });
    }
  }
}

/** Runs `work` on every item, at most `limit` at a time. */
async function eachAtOnce<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
