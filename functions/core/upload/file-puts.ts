import { md5Hex } from '../hashes';
import { fileKeys } from '../lifecycle/remove-image';
import type { EncodedImage, ImageKeys, ImageRecord, Logger, ObjectStore, ProcessedImage } from '../ports';
import { awaitedLater, settled } from '../settle';

const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * An upload's three files as they are put (step 3 of `UploadAttempt`'s protocol): the original's put, then the
 * renditions', each under way at once and waited for before the record is answered or anything taken back.
 */
export class FilePuts {
  private readonly puts: Array<Promise<void>> = [];

  constructor(private readonly deps: { objects: ObjectStore; logger: Logger }) {}

  /** Puts the original once its bytes and md5 are known and the flood slot is taken. */
  original(key: string, original: Promise<{ image: EncodedImage; md5: string }>, slot: Promise<unknown>): void {
    this.puts.push(awaitedLater(Promise.all([original, slot]).then(([{ image, md5 }]) => this.put(key, image, md5))));
  }

  /** Puts the renditions. */
  renditions(keys: ImageKeys, files: Pick<ProcessedImage, 'thumb' | 'medium'>): void {
    this.puts.push(awaitedLater(this.put(keys.thumb, files.thumb)), awaitedLater(this.put(keys.medium, files.medium)));
  }

  /** Settles once every put under way has ended, failed or not. */
  async ended(): Promise<void> {
    await Promise.all(this.puts.map(settled));
  }

  /** Waits for the three files' puts, all under way by now; fails as the first that failed did. */
  async done(record: ImageRecord): Promise<void> {
    if (this.puts.length !== 3) throw new Error('the files are put before the record is written');
    // Every put is waited for, failed or not: a take-back that ran while a put was still in flight would leave the
    // object that put wrote afterwards behind.
    const puts = await Promise.allSettled(this.puts);
    // in the order of the puts: the original's, then the renditions'
    const failedKeys = fileKeys(record).filter((_key, index) => puts[index]?.status === 'rejected');
    const failed = puts.find((put): put is PromiseRejectedResult => put.status === 'rejected');
    if (!failed) return;
    // A put answered as failed may have stored its file all the same (`docs/reliability.md`, "Lost answers"), and a
    // waiting duplicate may have seen it there and answered this image already. S3 stores an object whole or not at
    // all, so a file that is there is written: the upload goes on instead of taking it back.
    if (await this.deps.objects.exist(failedKeys).catch(() => false)) {
      this.deps.logger.warn('a put answered as failed had stored its file; the upload goes on', {
        keys: failedKeys,
        error: failed.reason,
      });
      return;
    }
    throw failed.reason;
  }

  /** Puts a file; the md5 of a rendition (tens of kilobytes) is computed here, the original's is known. */
  private put(key: string, image: EncodedImage, md5 = md5Hex(image.bytes)): Promise<void> {
    const object = { key, body: image.bytes, contentType: image.mime, cacheControl: IMMUTABLE_CACHE_CONTROL, md5 };
    return this.deps.objects.put(object);
  }
}
