import type { Holds, ImageRecord, ImageRecords } from '../ports';

/**
 * An image's holds (`Holds`): it lives while any does, its end the latest of theirs, none while any has none. A record
 * that never had a second hold keeps no map: its one hold ends with it.
 */

/** The holds of a record: its map, or, for a hold it does not name (a record of one hold), the image's own end. */
export function holdsOf(record: Pick<ImageRecord, 'deleteTokenHashes' | 'holdEnds' | 'expiresAtMs'>): Holds {
  const holds: Holds = {};
  for (const hash of record.deleteTokenHashes) {
    const end = record.holdEnds?.[hash];
    holds[hash] = end === undefined ? record.expiresAtMs : end;
  }
  return holds;
}

/** The image's end: the latest of its holds', none while any hold has none. */
export function endOf(holds: Holds): number | null {
  let latest = 0;
  for (const end of Object.values(holds)) {
    if (end === null) return null;
    latest = Math.max(latest, end);
  }
  return latest;
}

/** Rounds of read and conditional write before a burst of holds coming and going at once is taken for a failure. */
const MAX_ROUNDS = 8;

/**
 * Changes an active image's holds from what was read, again from a fresh read while another change of them wins the
 * write: `change` answers the holds after, or undefined to write nothing (then this answers the record as read).
 * Answers the record after; undefined when there is no active record.
 */
export async function changeHolds(
  images: Pick<ImageRecords, 'find' | 'writeHolds'>,
  read: ImageRecord,
  change: (holds: Holds) => Holds | undefined,
): Promise<ImageRecord | undefined> {
  let record: ImageRecord | undefined = read;
  for (let round = 0; round < MAX_ROUNDS && record?.status === 'active'; round += 1) {
    const holds = change(holdsOf(record));
    if (holds === undefined) return record;
    const written = await images.writeHolds(record.id, record.deleteTokenHashes, holds, endOf(holds));
    if (written) return written;
    record = await images.find(read.id);
  }
  if (record?.status !== 'active') return undefined;
  throw new Error(`no change of the holds of image ${read.id} held after ${MAX_ROUNDS} rounds`);
}
