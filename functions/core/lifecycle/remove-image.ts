import type { CachePurger, DuplicateIndex, ImageRecord, ImageRemovals, Logger, ObjectStore } from '../ports';

export interface RemovalDeps {
  images: Pick<ImageRemovals, 'remove'>;
  objects: ObjectStore;
  duplicates: DuplicateIndex;
  purger: CachePurger;
  logger: Logger;
}

/** The three stored files of an image. */
export function fileKeys(record: ImageRecord): string[] {
  return [record.original.key, record.thumb.key, record.medium.key];
}

/** Removes what an image holds in the stores but its record: its three objects and its duplicate-index entry. */
export async function removeFiles(deps: Pick<RemovalDeps, 'objects' | 'duplicates'>, record: ImageRecord): Promise<void> {
  await deps.objects.deleteMany(fileKeys(record));
  if (record.fingerprint !== null) await deps.duplicates.releaseImage(record.fingerprint, record.id);
}

/**
 * Removes an image whole, as its delete link asks: its files, its duplicate entry, its cached copies at the CDN, then
 * its record. The record goes last: a removal that stops half way, or a purge the CDN refuses (throttled), leaves the
 * record (deleting, due) that still names everything, and the sweep finishes the removal, purge included.
 */
export async function removeImage(deps: RemovalDeps, record: ImageRecord): Promise<void> {
  await removeFiles(deps, record);
  try {
    await deps.purger.purge({ keys: fileKeys(record), folders: [] });
  } catch (error) {
    deps.logger.warn('CDN purge of a removed image failed; the sweep purges it again', { id: record.id, error });
    return;
  }
  await deps.images.remove(record.id);
}
