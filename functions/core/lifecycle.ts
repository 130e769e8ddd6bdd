import type { ImageRecord, StoredRecord } from './ports';

/**
 * The life of an image record: `pending` while its upload stores it, `active` once answered (until it expires),
 * `deleting` once a delete link was used. Reads show only live records; the sweep removes due ones.
 */

/** A pending record older than this is an upload that died; the sweep removes it. */
export const PENDING_GRACE_MS = 15 * 60_000;

/** Shown to viewers: active and not expired. */
export function isLive(record: ImageRecord, nowMs: number): boolean {
  return record.status === 'active' && (record.expiresAtMs === null || record.expiresAtMs > nowMs);
}

/** Due for the sweep: an unfinished delete, an upload that died, an expired image. */
export function isDue(record: StoredRecord, nowMs: number): boolean {
  switch (record.status) {
    case 'deleting':
      return true;
    case 'pending':
      return record.createdAtMs + PENDING_GRACE_MS <= nowMs;
    case 'active':
      return record.expiresAtMs !== null && record.expiresAtMs <= nowMs;
  }
}

/** Whether anyone was ever given the image's URLs: a pending upload never answered, so no CDN holds its files. */
export function wasServed(record: StoredRecord): boolean {
  return record.status !== 'pending';
}
