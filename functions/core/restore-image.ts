import { AdminError } from './admin-error';
import { VersionsNotKept } from './errors';
import { isDue } from './lifecycle';
import type { Clock, ImageRecord, ImageRemovals, NameClaims, ObjectStore } from './ports';
import { fileKeys } from './remove-image';

export interface RestoreDeps {
  images: Pick<ImageRemovals, 'revive'> & Pick<NameClaims, 'imageIdOfName'>;
  objects: Pick<ObjectStore, 'restore'>;
  clock: Clock;
}

/** What a restore brought back: the files made current again, and the expiry the image has now. */
export interface Restored {
  files: string[];
  expiresAtMs: number | null;
}

/**
 * Brings back a removed image (its delete link used, or expired): its files' newest versions current again, then its
 * record active, so that its viewer, files and delete links work as before. An expiry already past is dropped (the
 * image would go again at the next sweep). A takedown keeps nothing to restore (`docs/operations.md`).
 */
export async function restoreImage(deps: RestoreDeps, record: ImageRecord, reference: string): Promise<Restored> {
  const nowMs = deps.clock.nowMs();
  if (isDue(record, nowMs))
    throw new AdminError(`${reference} is being removed: restore it once the sweep has run (every 5 minutes)`);
  if (record.status === 'active') throw new AdminError(`${reference} is not removed: it is online`);
  // the table's TTL may remove a record days after its time
  if (record.restorableUntilMs !== undefined && record.restorableUntilMs <= nowMs)
    throw new AdminError(`${reference} was removed too long ago: its files are no longer kept (KEEP_DELETED_DAYS)`);
  // a name is never given again (its claim stays), so this only holds should a claim have been lost
  if ((await deps.images.imageIdOfName(record.original.key)) !== record.id)
    throw new AdminError(`${reference} cannot be restored: its file name ${record.original.key} is another image's`);
  const files = fileKeys(record);
  let lost: string[];
  try {
    lost = await deps.objects.restore(files);
  } catch (cause) {
    if (cause instanceof VersionsNotKept) throw new AdminError(`${reference} cannot be restored: ${cause.message}`, { cause });
    throw cause;
  }
  if (lost.length > 0)
    throw new AdminError(`${reference} cannot be restored: no earlier version of ${lost.join(', ')} is kept any more`);
  const expiresAtMs = record.expiresAtMs !== null && record.expiresAtMs > nowMs ? record.expiresAtMs : null;
  if (!(await deps.images.revive(record.id, expiresAtMs)))
    throw new AdminError(`the files of ${reference} are back, but its record is no longer removed (restored or gone)`);
  return { files, expiresAtMs };
}
