import type { DuplicateIndex, ImageRecord, ImageRepository, ObjectStore } from './ports';

export interface RemovalDeps {
  images: ImageRepository;
  objects: ObjectStore;
  duplicates: DuplicateIndex;
}

/**
 * Removes an image whole: its three objects, its duplicate-index entry, then its record. The record goes last, so a
 * removal that stops half way leaves a record that still names what is left, for the sweep to finish.
 */
export async function removeImage(deps: RemovalDeps, record: ImageRecord): Promise<void> {
  await deps.objects.deleteMany([record.original.key, record.thumb.key, record.medium.key]);
  if (record.duplicateKey !== null) await deps.duplicates.releaseImage(record.duplicateKey, record.id);
  await deps.images.remove(record.id);
}
