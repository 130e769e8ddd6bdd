import { PENDING_GRACE_MS } from './lifecycle';
import type { EncodedImage, ImageKeys, ImageRecord, ImageRepository, Logger, ObjectStore } from './ports';

const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

export interface ImageWriterDeps {
  images: Pick<ImageRepository, 'createPending' | 'saveActive' | 'remove'>;
  objects: ObjectStore;
  logger: Logger;
}

/**
 * The write protocol of an image: a pending record naming its three files first (written while the image is still
 * being decoded), then the files (the original as soon as its bytes are known), then the image's record in place of
 * the pending one. A failure leaves either nothing or a pending record naming every file that may exist, which the
 * clean-up here or the sweep removes, so there is never a file without a record, nor an image shown whose files are
 * missing.
 */
export class ImageWriter {
  constructor(private readonly deps: ImageWriterDeps) {}

  /** Writes the pending record; false, writing nothing, when another image holds the id. */
  begin(id: number, keys: ImageKeys, nowMs: number): Promise<boolean> {
    return this.deps.images.createPending({ id, status: 'pending', keys, createdAtMs: nowMs }, nowMs + PENDING_GRACE_MS);
  }

  /** Writes the stored original, once the pending record names it (while the renditions are still being made). */
  putOriginal(key: string, original: EncodedImage): Promise<void> {
    return this.put(key, original);
  }

  /**
   * Writes the renditions (and the original, unless `originalPut` is its put already under way), then the record:
   * from then on the image is shown.
   */
  async finish(
    record: ImageRecord,
    files: { original: EncodedImage; thumb: EncodedImage; medium: EncodedImage },
    originalPut?: Promise<void>,
  ): Promise<void> {
    try {
      // Every put is waited for, failed or not: a clean-up that ran while a put was still in flight would leave the
      // object that put wrote afterwards behind.
      const puts = await Promise.allSettled([
        originalPut ?? this.put(record.original.key, files.original),
        this.put(record.thumb.key, files.thumb),
        this.put(record.medium.key, files.medium),
      ]);
      const failed = puts.find((put): put is PromiseRejectedResult => put.status === 'rejected');
      if (failed) throw failed.reason;
      await this.deps.images.saveActive(record);
    } catch (error) {
      await this.discard(record.id, { original: record.original.key, thumb: record.thumb.key, medium: record.medium.key });
      throw error;
    }
  }

  /** Removes the files and the pending record of an upload that failed after `begin`. */
  async discard(id: number, keys: ImageKeys): Promise<void> {
    try {
      await this.deps.objects.deleteMany([keys.original, keys.thumb, keys.medium]);
      await this.deps.images.remove(id);
    } catch (cleanupError) {
      this.deps.logger.warn('cleanup of a failed upload left a pending record for the sweep', { id, cleanupError });
    }
  }

  private put(key: string, image: EncodedImage): Promise<void> {
    return this.deps.objects.put({ key, body: image.bytes, contentType: image.mime, cacheControl: IMMUTABLE_CACHE_CONTROL });
  }
}
