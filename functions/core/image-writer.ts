import type { EncodedImage, ImageKeys, ImageRecord, ImageRepository, Logger, ObjectStore } from './ports';
import { fileKeys } from './remove-image';

const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

export interface ImageWriterDeps {
  images: Pick<ImageRepository, 'saveActive' | 'settleName'>;
  objects: ObjectStore;
  logger: Logger;
}

/**
 * The write protocol of an image, after its name claim recorded it as pending (naming its three files): the files
 * (the original as soon as its bytes are known, while the renditions are still being made), and the image's record
 * alongside the renditions' puts. A failure leaves either nothing or a pending name claim naming every file that may
 * exist (and maybe the record), which the clean-up or the sweep removes, so there is never a file without a record or
 * a pending claim naming it. A record whose files are not all there is answered to no one: its upload answers once
 * everything is written, and a duplicate waits for the files. The claim of a stored image is settled by the sweep, off
 * the upload's path.
 */
export class ImageWriter {
  constructor(private readonly deps: ImageWriterDeps) {}

  /** Writes the stored original (its name claim names it already). */
  putOriginal(key: string, original: EncodedImage): Promise<void> {
    return this.put(key, original);
  }

  /** Writes the renditions, and the original unless `originalPut` is its put already under way (`save` alongside). */
  async finish(
    record: ImageRecord,
    files: { original: EncodedImage; thumb: EncodedImage; medium: EncodedImage },
    originalPut?: Promise<void>,
  ): Promise<void> {
    // Every put is waited for, failed or not: a clean-up that ran while a put was still in flight would leave the
    // object that put wrote afterwards behind.
    const puts = await Promise.allSettled([
      originalPut ?? this.put(record.original.key, files.original),
      this.put(record.thumb.key, files.thumb),
      this.put(record.medium.key, files.medium),
    ]);
    // in the order of the puts above
    const failedKeys = fileKeys(record).filter((_key, index) => puts[index]?.status === 'rejected');
    const failed = puts.find((put): put is PromiseRejectedResult => put.status === 'rejected');
    if (!failed) return;
    // A put answered as failed may have stored its file all the same (its answer lost: a timeout, a broken
    // connection), and a waiting duplicate may have seen it there and answered this image already. S3 stores an
    // object whole or not at all, so a file that is there is written: the upload goes on instead of taking it back.
    if (await this.deps.objects.exist(failedKeys).catch(() => false)) {
      this.deps.logger.warn('a put answered as failed had stored its file; the upload goes on', {
        keys: failedKeys,
        error: failed.reason,
      });
      return;
    }
    throw failed.reason;
  }

  /** Writes the image's record; false when another image holds its id (a random id drawn twice). */
  save(record: ImageRecord): Promise<boolean> {
    return this.deps.images.saveActive(record);
  }

  /** Removes the files of an upload that failed after its name claim, and settles the claim (the name stays taken). */
  async discard(name: string, keys: ImageKeys): Promise<void> {
    try {
      await this.deps.objects.deleteMany([keys.original, keys.thumb, keys.medium]);
      await this.deps.images.settleName(name);
    } catch (cleanupError) {
      this.deps.logger.warn('cleanup of a failed upload left a pending name claim for the sweep', { name, cleanupError });
    }
  }

  private put(key: string, image: EncodedImage): Promise<void> {
    return this.deps.objects.put({ key, body: image.bytes, contentType: image.mime, cacheControl: IMMUTABLE_CACHE_CONTROL });
  }
}
