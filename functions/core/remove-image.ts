import type { CachePurger, DuplicateIndex, ImageRecord, ImageRepository, Logger, ObjectStore } from './ports';

export interface RemovalDeps {
  images: ImageRepository;
  objects: ObjectStore;
  duplicates: DuplicateIndex;
  purger: CachePurger;
  logger: Logger;
}

/**
 * Removes an image whole: its three objects, its duplicate-index entry, then its record. The record goes last, so a
 * removal that stops half way leaves a record that still names what is left, for the sweep to finish.
 */
export async function removeImage(deps: RemovalDeps, record: ImageRecord): Promise<void> {
  const keys = [record.original.key, record.thumb.key, record.medium.key];
  await deps.objects.deleteMany(keys);
  if (record.duplicateKey !== null) await deps.duplicates.releaseImage(record.duplicateKey, record.id);
  await deps.images.remove(record.id);
  // The files are gone; the CDN's copies go as well. A failed purge still leaves the copies to expire on their own.
  try {
    await deps.purger.purge(keys);
  } catch (error) {
    deps.logger.warn('CDN purge of a removed image failed; cached copies expire with the cache policy', { id: record.id, error });
  }
}
