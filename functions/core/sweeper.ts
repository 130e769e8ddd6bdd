import type { CachePurger, Clock, DuplicateIndex, ImageRecord, ImageRepository, Logger, ObjectStore } from './ports';
import { removeImage } from './remove-image';
import { PENDING_GRACE_MS } from './upload-service';

export interface SweeperDeps {
  images: ImageRepository;
  objects: ObjectStore;
  duplicates: DuplicateIndex;
  purger: CachePurger;
  clock: Clock;
  logger: Logger;
}

export interface SweepResult {
  removed: number;
  failed: number;
}

/**
 * Removes what is due: expired images, uploads that died half way (pending past their grace), and deletes that
 * stopped half way. Runs every few minutes (EventBridge in AWS, a timer locally); DynamoDB TTL is only a backstop.
 */
export class Sweeper {
  constructor(private readonly deps: SweeperDeps) {}

  async sweep(maxRecords = 200): Promise<SweepResult> {
    const nowMs = this.deps.clock.nowMs();
    const result: SweepResult = { removed: 0, failed: 0 };
    for (const id of await this.deps.images.listDue(nowMs, maxRecords)) {
      // The index is read eventually consistent; the record itself decides.
      const record = await this.deps.images.find(id);
      if (!record || !isDue(record, nowMs)) continue;
      try {
        await removeImage(this.deps, record);
        result.removed += 1;
      } catch (error) {
        result.failed += 1;
        this.deps.logger.warn('sweep could not remove an image; the next sweep tries again', { id, error });
      }
    }
    if (result.removed > 0 || result.failed > 0) this.deps.logger.info('sweep', { ...result });
    return result;
  }
}

function isDue(record: ImageRecord, nowMs: number): boolean {
  switch (record.status) {
    case 'deleting':
      return true;
    case 'pending':
      return record.createdAtMs + PENDING_GRACE_MS <= nowMs;
    case 'active':
      return record.expiresAtMs !== null && record.expiresAtMs <= nowMs;
  }
}
