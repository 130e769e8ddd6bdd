import type { ImageRecord, PendingUpload } from '../ports';

/**
 * The life of an image: `pending` while its upload stores it (recorded on the claim of its name), `active` once its
 * record is written (until it expires), `deleting` once a delete link was used, `removed` once its files are gone
 * (restorable for a while, unless taken down). Reads show only live records; the sweep removes due ones, and settles
 * the name claims of uploads that are over.
 */

/** An upload still pending this long after it began has died (Lambda stops one after 28 s): the sweep cleans up. */
export const PENDING_GRACE_MS = 15 * 60_000;

/** Shown to viewers: active and not expired. */
export function isLive(record: ImageRecord, nowMs: number): boolean {
  return record.status === 'active' && (record.expiresAtMs === null || record.expiresAtMs > nowMs);
}

/** Due for the sweep: an unfinished delete, an expired image, an upload's name claim past its grace. */
export function isDue(record: ImageRecord | PendingUpload, nowMs: number): boolean {
  switch (record.status) {
    case 'deleting':
      return true;
    case 'pending':
      return record.createdAtMs + PENDING_GRACE_MS <= nowMs;
    case 'active':
      return record.expiresAtMs !== null && record.expiresAtMs <= nowMs;
    case 'removed':
      return false;
  }
}
