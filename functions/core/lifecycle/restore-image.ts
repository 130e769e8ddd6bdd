import { AdminError } from '../admin/admin-error';
import { ServiceError, VersionsNotKept } from '../errors';
import { isDue } from './lifecycle';
import { comparableHashes, UploadGate } from '../moderation/moderation';
import { turnedOfHash } from '../moderation/pdq-hash';
import type { PictureBlockStore } from '../moderation/picture-blocks';
import type { BlockList, Clock, ImageRecord, ImageRemovals, NameClaims, ObjectStore } from '../ports';
import { fileKeys } from './remove-image';

export interface RestoreDeps {
  images: Pick<ImageRemovals, 'revive'> & Pick<NameClaims, 'imageIdOfName'>;
  objects: Pick<ObjectStore, 'restore' | 'deleteMany'>;
  moderation: Pick<BlockList, 'anyBlocked'>;
  pictureBlocks: Pick<PictureBlockStore, 'hashes'>;
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
  if (record.takenDown) throw new AdminError(`${reference} was taken down: nothing of it is restored`);
  // the table's TTL may remove a record days after its time
  if (record.restorableUntilMs !== undefined && record.restorableUntilMs <= nowMs)
    throw new AdminError(`${reference} was removed too long ago: its files are no longer kept (KEEP_DELETED_DAYS)`);
  // a name is never given again (its claim stays), so this only holds should a claim have been lost
  if ((await deps.images.imageIdOfName(record.original.key)) !== record.id)
    throw new AdminError(`${reference} cannot be restored: its file name ${record.original.key} is another image's`);
  await refuseBlocked(deps, record, reference);
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
  let revived: boolean;
  try {
    revived = await deps.images.revive(record.id, expiresAtMs);
  } catch (cause) {
    // the files go again rather than stay served without a record (the sweep would never see them)
    await deps.objects.deleteMany(files);
    throw new AdminError(`${reference} was not restored (${String(cause)}): run restore again`, { cause });
  }
  if (!revived) {
    await deps.objects.deleteMany(files);
    throw new AdminError(`${reference} was not restored: its record changed meanwhile (restored, or gone)`);
  }
  return { files, expiresAtMs };
}

/** A restore must not bring back what is blocked since: its bytes, or its picture (a takedown, an imported list). */
async function refuseBlocked(deps: RestoreDeps, record: ImageRecord, reference: string): Promise<void> {
  const gate = new UploadGate({ all: () => Promise.resolve([]) }, deps.moderation, deps.pictureBlocks, deps.clock, 0);
  try {
    await gate.checkBytes([record.sourceMd5, record.original.md5]);
    await gate.checkPicture({ perceptual: { queries: [comparableHashes(record.perceptual).flatMap(turnedOfHash)] } });
  } catch (error) {
    if (!(error instanceof ServiceError) || error.kind !== 'Blocked') throw error;
    throw new AdminError(`${reference} cannot be restored: its bytes or its picture are blocked (admin blocks, unblock)`);
  }
}
