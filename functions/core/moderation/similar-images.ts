import { AdminError } from '../admin/admin-error';
import { comparableHashes } from './moderation';
import { pdqDistance, turnedOfHash } from './pdq-hash';
import type { ImageRecord, ImageScan } from '../ports';

/** A stored image whose picture is near another's. */
export interface SimilarImage {
  idEncoded: string;
  viewerUrl: string;
  /** PDQ bits apart (0: the same picture), its turned and mirrored forms counted. */
  distance: number;
  clientIp: string;
  createdAtMs: number;
}

/** How near `admin similar` looks by default: a review band past the block's 31 bits (`docs/moderation.md`). */
export const SIMILAR_DISTANCE = 63;

/**
 * The records whose hashes come within `withinBits` of this record's, turned or mirrored, nearest first: the active
 * ones, or, for a takedown, any (one removed and kept for a restore goes too).
 */
export async function nearRecords(
  images: Pick<ImageScan, 'recent'>,
  record: ImageRecord,
  withinBits: number,
  statuses: 'active' | 'any' = 'active',
): Promise<Array<{ record: ImageRecord; distance: number }>> {
  const turned = comparableHashes(record.perceptual).flatMap(turnedOfHash);
  if (turned.length === 0) throw new AdminError('no picture hash to compare (animated, flat, or stored before hashing)');
  const near: Array<{ record: ImageRecord; distance: number }> = [];
  for await (const page of images.recent(0)) {
    for (const other of page) {
      const theirs = comparableHashes(other.perceptual);
      if (other.id === record.id || (statuses === 'active' && other.status !== 'active') || theirs.length === 0) continue;
      const distance = Math.min(...theirs.flatMap((hash) => turned.map((form) => pdqDistance(hash, form))));
      if (distance <= withinBits) near.push({ record: other, distance });
    }
  }
  return near.sort((a, b) => a.distance - b.distance);
}
