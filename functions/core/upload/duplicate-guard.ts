import { ServiceError } from '../errors';
import { isLive, PENDING_GRACE_MS } from '../lifecycle/lifecycle';
import type { Clock, DuplicateFingerprint, DuplicateIndex, ImageRecord, ImageRecords, ObjectStore, RandomSource } from '../ports';
import { fileKeys } from '../lifecycle/remove-image';

export type DuplicatePolicy = 'return-existing' | 'reject' | 'allow';

/** Same bytes, width and client within this time is a duplicate (`docs/api.md`, section 11). */
export const DUPLICATE_WINDOW_MS = 24 * 3600_000;
/** A claim whose image is not stored after this long belongs to an upload that died; it may be taken over. */
export const STALE_CLAIM_MS = 5 * 60_000;
/** How long an upload waits for an identical one in flight before storing its own copy. */
export const IN_FLIGHT_WAIT_MS = 10_000;
const IN_FLIGHT_POLL_MS = 100;
const MAX_CHECKS = 200;

/** This upload's hold on its fingerprint: released if the upload fails, kept (with the image) if it is stored. */
export interface HeldClaim {
  fingerprint: DuplicateFingerprint;
  claimId: string;
}

export type DuplicateCheck = { existing: ImageRecord } | { claim: HeldClaim | undefined };

export interface DuplicateGuardDeps {
  duplicates: DuplicateIndex;
  images: Pick<ImageRecords, 'find'>;
  objects: Pick<ObjectStore, 'exist'>;
  clock: Clock;
  random: RandomSource;
  policy: DuplicatePolicy;
}

/**
 * The duplicate rule (`docs/api.md`, section 11): one claim per fingerprint, made with the id of the image this upload
 * is about to store, so that a second identical upload finds the first: answered with it once it is stored, waiting for
 * it while it is being stored, taking the fingerprint over when its image is gone or its upload died.
 */
export class DuplicateGuard {
  constructor(private readonly deps: DuplicateGuardDeps) {}

  /**
   * An earlier live upload of the same fingerprint, or a claim on the fingerprint for `imageId` (none when duplicates
   * are allowed, or when an identical upload in flight takes too long: this one is then stored unclaimed).
   */
  async check(fingerprint: DuplicateFingerprint, imageId: number): Promise<DuplicateCheck> {
    const { duplicates, images, clock, policy } = this.deps;
    if (policy === 'allow') return { claim: undefined };
    const claimId = this.deps.random.hex(16);
    const startedMs = clock.nowMs();
    for (let attempt = 0; attempt < MAX_CHECKS; attempt += 1) {
      const nowMs = clock.nowMs();
      const claim = { claimId, imageId, claimedAtMs: nowMs };
      const answer = await duplicates.claim(fingerprint, claim, DUPLICATE_WINDOW_MS);
      if (answer.claimed) return { claim: { fingerprint, claimId } };
      const record = await images.find(answer.held.imageId);
      const live = record !== undefined && isLive(record, nowMs);
      if (live && (await this.filesStored(record, nowMs))) {
        if (policy === 'reject') throw new ServiceError('Duplicate', 'Duplicated upload');
        return { existing: record };
      }
      // no record yet, or a record whose files are still being put, for a claim made lately: its upload is storing the
      // image right now
      const inFlight = (record === undefined || live) && answer.held.claimedAtMs > nowMs - STALE_CLAIM_MS;
      if (inFlight) {
        // Another request is storing the same bytes right now.
        if (nowMs - startedMs >= IN_FLIGHT_WAIT_MS) return { claim: undefined }; // it is taking long: store this one too
        await clock.sleep(IN_FLIGHT_POLL_MS);
        continue;
      }
      // The claim's image is gone (deleted, expired) or its upload died: this upload takes the fingerprint over.
      if (await duplicates.takeOver(fingerprint, answer.held.claimId, claim, DUPLICATE_WINDOW_MS)) {
        return { claim: { fingerprint, claimId } };
      }
    }
    return { claim: undefined }; // the fingerprint kept changing hands: store this one, unclaimed
  }

  /**
   * Whether a live record's files are all stored. An upload writes its record alongside its renditions' puts, so a
   * record may be there a moment before its files (or, if its upload died then, until the sweep removes it, once its
   * name claim's grace is over): only then is it looked at.
   */
  private async filesStored(record: ImageRecord, nowMs: number): Promise<boolean> {
    return record.createdAtMs + PENDING_GRACE_MS <= nowMs || this.deps.objects.exist(fileKeys(record));
  }

  /** Points this upload's claim at the id it stores under after all (the first one drawn was taken). */
  rebind(claim: HeldClaim, imageId: number): Promise<void> {
    return this.deps.duplicates.rebind(claim.fingerprint, claim.claimId, imageId);
  }

  /** Gives up the claim of an upload that did not store its image. */
  release(claim: HeldClaim): Promise<void> {
    return this.deps.duplicates.releaseClaim(claim.fingerprint, claim.claimId);
  }
}
