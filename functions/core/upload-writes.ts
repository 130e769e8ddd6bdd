import type { DuplicateGuard, HeldClaim } from './duplicate-guard';
import type { FloodGuard, FloodReservation } from './flood';
import type {
  EncodedImage,
  ImageKeys,
  ImageRecord,
  ImageRecords,
  ImageRemovals,
  Logger,
  NameClaims,
  ObjectStore,
  ProcessedImage,
} from './ports';
import { md5Hex } from './hashes';
import { fileKeys } from './remove-image';
import { awaitedLater, settled } from './settle';

const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

export interface UploadWritesDeps {
  images: Pick<ImageRecords, 'saveActive' | 'find'> & Pick<ImageRemovals, 'remove'> & Pick<NameClaims, 'settleName'>;
  objects: ObjectStore;
  duplicateGuard: Pick<DuplicateGuard, 'release'>;
  logger: Logger;
}

/**
 * What one upload takes and writes in the stores, in the order of the write protocol, and how it is given back when
 * the upload fails (`docs/reliability.md`). The name claim records the upload as pending, naming its three files, before
 * any file is written; then the original (as soon as its bytes are known, while the renditions are being made), and the
 * image's record alongside the renditions' puts. A failure leaves either nothing or a pending name claim naming every
 * file that may exist (and maybe the record), which `undo` or the sweep removes: never a file without a record or a
 * claim naming it. A record whose files are not all there is answered to no one: its upload answers once everything
 * is written, and a duplicate waits for the files. The claim of a stored image is settled by the sweep.
 */
export class UploadWrites {
  private reserving: Promise<FloodReservation> | undefined;
  private claim: HeldClaim | undefined;
  /** The name claimed, recording the upload as pending. */
  private pending: { name: string; keys: ImageKeys } | undefined;
  /** The original's put, started before the renditions: waited for before anything is taken back. */
  private originalPut: Promise<void> | undefined;
  /** The renditions' puts, started before the record is made (while the classifier runs); waited for as the original's. */
  private renditionPuts: [Promise<void>, Promise<void>] | undefined;
  /** The image's record, once its write was tried. */
  private saved: ImageRecord | undefined;
  /**
   * The record's write failed without saying whether DynamoDB carried it out (`docs/reliability.md`, "Lost answers"):
   * a take-back reads it first, and removes it only if it is there and this upload's.
   */
  private saveUnknown = false;

  constructor(private readonly deps: UploadWritesDeps) {}

  /**
   * Takes the client's flood slot. Answers as soon as the counters read show room, which is enough to start the
   * original's put: should the slot still go to another upload of the same client, the put is taken back with the rest.
   */
  reserveSlot(flood: Pick<FloodGuard, 'reserve'>, clientIp: string, nowMs: number): Promise<void> {
    return awaitedLater(
      new Promise<void>((resolve, reject) => {
        this.reserving = flood.reserve(clientIp, nowMs, resolve);
        this.reserving.then(() => resolve(), reject);
      }),
    );
  }

  /** The flood slot, once taken. */
  get reserved(): Promise<FloodReservation> {
    if (!this.reserving) throw new Error('no flood slot is being taken');
    return this.reserving;
  }

  holdClaim(claim: HeldClaim | undefined): void {
    if (claim) this.claim = claim;
  }

  /** The duplicate fingerprint this upload claimed, if any. */
  get heldClaim(): HeldClaim | undefined {
    return this.claim;
  }

  holdName(name: string, keys: ImageKeys): void {
    this.pending = { name, keys };
  }

  /** The name claimed goes unused (a duplicate answered): it stays taken, its claim settled. */
  async discardName(): Promise<void> {
    if (!this.pending) return;
    await this.discard(this.pending);
    this.pending = undefined;
  }

  /** Starts the original's put once its bytes (and their md5) are known and the slot has room; the rest waits for it. */
  putOriginal(key: string, original: Promise<EncodedImage>, md5: Promise<string>, room: Promise<void>): void {
    this.originalPut = awaitedLater(Promise.all([original, md5, room]).then(([bytes, sum]) => this.put(key, bytes, sum)));
  }

  /** Starts the renditions' puts, before the record is made; `write` waits for them. The name claim names them. */
  putRenditions(keys: ImageKeys, files: Pick<ProcessedImage, 'thumb' | 'medium'>): void {
    this.renditionPuts = [awaitedLater(this.put(keys.thumb, files.thumb)), awaitedLater(this.put(keys.medium, files.medium))];
  }

  /**
   * Writes the record while the files' puts (started by `putOriginal` and `putRenditions`) end, `save` writing it.
   * Once both are done the upload is stored, and its name claim the sweep's to settle.
   */
  async write(record: ImageRecord, save: (record: ImageRecord) => Promise<void>): Promise<void> {
    const [put, saved] = await Promise.allSettled([this.putFiles(record), save(record)]);
    this.saved = record;
    if (saved.status === 'rejected') this.saveUnknown = true;
    if (put.status === 'rejected') throw put.reason;
    if (saved.status === 'rejected') throw saved.reason;
    this.pending = undefined;
  }

  /** Writes the image's record; false when another image holds its id (a random id drawn twice). */
  saveRecord(record: ImageRecord): Promise<boolean> {
    return this.deps.images.saveActive(record);
  }

  /** Gives back the flood slot and the duplicate claim, and removes what was written, of an upload that failed. */
  async undo(): Promise<void> {
    const steps: Array<Promise<void>> = [];
    // a slot never taken is nothing to give back
    if (this.reserving)
      steps.push(
        this.reserving.then(
          (reservation) => reservation.release(),
          () => undefined,
        ),
      );
    if (this.claim) steps.push(this.deps.duplicateGuard.release(this.claim));
    const { pending, saved, saveUnknown } = this;
    if (pending) {
      steps.push(
        Promise.all(this.startedPuts().map(settled)).then(async () => {
          // A record written alongside files that failed goes first. Should that fail, the name claim stays pending
          // (naming the files): the sweep then finds the record with a file missing and removes them both.
          if (saved && (!saveUnknown || (await this.isSaved(saved)))) await this.deps.images.remove(saved.id);
          await this.discard(pending);
        }),
      );
    }
    for (const result of await Promise.allSettled(steps)) {
      if (result.status === 'rejected')
        this.deps.logger.warn('undo of a failed upload did not finish', { error: result.reason as unknown });
    }
  }

  /** The files' puts started so far, in the order of `fileKeys`: the original's, then the renditions'. */
  private startedPuts(): Array<Promise<void>> {
    return [this.originalPut, ...(this.renditionPuts ?? [])].filter((put) => put !== undefined);
  }

  /** Waits for the three files' puts, all under way by now. */
  private async putFiles(record: ImageRecord): Promise<void> {
    const started = this.startedPuts();
    if (started.length !== 3) throw new Error('the files are put before the record is written');
    // Every put is waited for, failed or not: a take-back that ran while a put was still in flight would leave the
    // object that put wrote afterwards behind.
    const puts = await Promise.allSettled(started);
    // in the order of the puts above
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

  /** Whether this record is in the table (under its id, naming its original: no other upload's can). */
  private async isSaved(record: ImageRecord): Promise<boolean> {
    return (await this.deps.images.find(record.id))?.original.key === record.original.key;
  }

  /** Removes the files a name claim names, and settles the claim (the name stays taken); logged if it cannot. */
  private async discard({ name, keys }: { name: string; keys: ImageKeys }): Promise<void> {
    try {
      await this.deps.objects.deleteMany([keys.original, keys.thumb, keys.medium]);
      await this.deps.images.settleName(name);
    } catch (cleanupError) {
      this.deps.logger.warn('cleanup of a failed upload left a pending name claim for the sweep', { name, cleanupError });
    }
  }

  /** Puts a file; the md5 of a rendition (tens of kilobytes) is computed here, the original's is known. */
  private put(key: string, image: EncodedImage, md5 = md5Hex(image.bytes)): Promise<void> {
    const object = { key, body: image.bytes, contentType: image.mime, cacheControl: IMMUTABLE_CACHE_CONTROL, md5 };
    return this.deps.objects.put(object);
  }
}
