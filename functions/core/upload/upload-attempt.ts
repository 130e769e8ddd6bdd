import { deleteTokens } from '../image/delete-tokens';
import { DependencyError, ServiceError } from '../errors';
import { FilePuts } from './file-puts';
import type { FloodGuard, FloodReservation } from '../flood';
import { md5HexInTurns } from '../hashes';
import { METRIC, type Metrics } from '../metrics';
import type { UploadGate } from '../moderation/moderation';
import type { Clock, ImageProcessor, ImageRecord, ImageRemovals, ImagingRun, ProcessedImage, ProcessOptions } from '../ports';
import { awaitedLater, settled } from '../settle';
import { UploadClaims, type AnsweredImage, type UploadClaimsDeps } from './upload-claims';
import { newRecord } from './upload-record';
import type { SourceBytes, UploadOptions } from './upload-source';

export interface UploadAttemptDeps extends UploadClaimsDeps {
  images: UploadClaimsDeps['images'] & Pick<ImageRemovals, 'remove'>;
  flood: Pick<FloodGuard, 'reserve'>;
  processor: ImageProcessor;
  /** The operator's blocks, and the classifier's verdict. */
  gate: Pick<UploadGate, 'checkBytes' | 'pictureCheck' | 'checkContent'>;
  clock: Clock;
  metrics: Metrics;
}

/**
 * One upload once its source is known: the order of its work and of its writes, and how it is all given back when the
 * upload fails. This is the one place the write protocol is told (`docs/reliability.md` shows what each failure leaves):
 *
 * 1. The client's flood slot is taken, while the picture decodes.
 * 2. The id, the duplicate fingerprint and the name are claimed at once (`UploadClaims`). The name's claim records the
 *    upload as pending and names its three files, before any file is written.
 * 3. The original is put as soon as its bytes are final, while the renditions are made; the renditions once made.
 * 4. The record is written alongside the last puts: one round trip after the imaging. A record whose files are not all
 *    there is answered to no one: the upload answers once every write is done, and a duplicate waits for the files.
 * 5. Once all is written the upload is stored; its name claim, still pending, is settled by the sweep.
 *
 * A failure leaves either nothing or a pending name claim naming every file that may exist (and maybe the record),
 * which `undo` or, should it fail too, the sweep removes: never a file without a record or a claim naming it.
 */
export class UploadAttempt {
  private readonly slot: Promise<FloodReservation>;
  /** Real imaging work was done for the upload: a refusal keeps its slot (`undo`). */
  private spent = false;
  private readonly claims: UploadClaims;
  /** The original's put, then the renditions': each waited for before anything is taken back. */
  private readonly files: FilePuts;
  /** The image's record, once its write was tried. */
  private saved: ImageRecord | undefined;
  /**
   * The record's write failed without saying whether DynamoDB carried it out (`docs/reliability.md`, "Lost answers"):
   * a take-back reads it first, and removes it only if it is there and this upload's.
   */
  private saveUnknown = false;

  constructor(
    private readonly deps: UploadAttemptDeps,
    clientIp: string,
    /** When the upload came: its record's creation time, its folder's date, its flood windows. */
    private readonly nowMs: number,
  ) {
    this.files = new FilePuts(deps);
    this.claims = new UploadClaims(deps, clientIp, nowMs);
    this.slot = awaitedLater(deps.flood.reserve(clientIp, nowMs));
  }

  /** The client's flood slot, once taken (step 1, started with the attempt). */
  get reserved(): Promise<FloodReservation> {
    return this.slot;
  }

  /** Stores the upload once its source is there, or gives everything back should it fail: the image to answer with. */
  async store(source: Promise<SourceBytes>, options: UploadOptions): Promise<AnsweredImage> {
    try {
      return await this.storeSource(await source, options);
    } catch (error) {
      await this.undo(error);
      throw error;
    }
  }

  /**
   * The decode, and meanwhile the md5s, the claims and the original's put; once the pixels are ready, the checks of
   * the picture, the renditions and the record written at once.
   */
  private async storeSource(source: SourceBytes, options: UploadOptions): Promise<AnsweredImage> {
    const extension = this.deps.processor.storedExtension(source.bytes);
    // the blocked pictures, read once: whether the fingerprint makes the views only compared, and the check itself
    const pictures = this.deps.gate.pictureCheck();
    const imaging = this.startImaging(source.bytes, {
      targetWidth: options.targetWidth,
      cleared: this.reserved,
      compared: pictures.compared,
    });
    try {
      // the md5s and the claims run on this thread once the decode is under way, not before it
      // (`docs/performance.md`, "The handler's own CPU")
      await imaging.decoding;
      // A refusal from here on comes after real imaging work (too slow to decode, a picture cut short, a blocked
      // picture) and keeps its flood slot, as an answer would (`docs/rules.md`): otherwise the costliest uploads
      // would be the ones that never count.
      this.spent = true;
      const sourceMd5 = await md5HexInTurns(source.bytes);
      const original = awaitedLater(
        imaging.original.then(async ({ image, asSent }) => ({
          image,
          md5: asSent ? sourceMd5 : await md5HexInTurns(image.bytes),
        })),
      );
      // bytes the operator took down with --block may not come back, as sent or as stored: one read, during the decode
      const bytesAllowed = awaitedLater(original.then(({ md5 }) => this.deps.gate.checkBytes([sourceMd5, md5])));
      const claims = await this.claims.claimAll({ md5: sourceMd5, extension, filename: source.filename }, options);
      if ('duplicate' in claims) return await this.answeredAsDuplicate(claims.duplicate, imaging.counted);
      this.files.original(claims.keys.original, original, this.slot);
      const processed = await imaging.processed;
      // nor its picture, however re-encoded (`docs/moderation.md`)
      await bytesAllowed;
      await pictures.check(processed);
      await this.reserved;
      // the renditions are put while the classifier scores the picture: its verdict is needed by the record only
      this.files.renditions(claims.keys, processed);
      const nsfw = await processed.nsfwScoring;
      const { flag } = this.deps.gate.checkContent(nsfw?.score);
      const token = deleteTokens.make(this.deps.random);
      const record = newRecord(claims, { ...options, nsfw: options.nsfw || flag }, processed, {
        originalMd5: (await original).md5,
        tokenHash: token.hash,
        nowMs: this.nowMs,
        claimed: this.claims.holdsFingerprint,
        nsfwScore: nsfw?.score,
      });
      await this.write(record);
      this.countStored(processed);
      return { record, idEncoded: (await this.deps.codecs.codec()).encode(record.id), deleteToken: token.token };
    } catch (error) {
      await settled(imaging.counted);
      throw error;
    }
  }

  /**
   * Gives back the flood slot (unless the upload was refused after its imaging began) and the duplicate claim, and
   * removes what was written, of an upload that failed with `error`.
   */
  private async undo(error: unknown): Promise<void> {
    const refused = error instanceof ServiceError && !(error instanceof DependencyError) && error.kind !== 'KeyNotConfigured';
    const steps: Array<Promise<void>> = [this.claims.releaseFingerprint()];
    if (!(this.spent && refused))
      steps.push(
        this.slot.then(
          (reservation) => reservation.release(),
          () => undefined,
        ),
      );
    const { saved, saveUnknown } = this;
    const pending = this.claims.pending;
    if (pending) {
      steps.push(
        this.files.ended().then(async () => {
          // A record written alongside files that failed goes first. Should that fail, the name claim stays pending
          // (naming the files): the sweep then finds the record with a file missing and removes them both.
          if (saved && (!saveUnknown || (await this.claims.isSaved(saved)))) await this.deps.images.remove(saved.id);
          await this.claims.discard(pending);
        }),
      );
    }
    for (const result of await Promise.allSettled(steps)) {
      if (result.status === 'rejected')
        this.deps.logger.warn('undo of a failed upload did not finish', { error: result.reason as unknown });
    }
  }

  /**
   * The imaging, started at once, timed to its end (`ImagingTime`), and the classifier's own time (`ClassifierTime`)
   * once its score is in; `counted` settles when both are counted, which a duplicate's or a refusal's answer waits for:
   * the work it started is billed to it, and its figures flushed with it.
   */
  private startImaging(bytes: Uint8Array, options: ProcessOptions): ImagingRun & { counted: Promise<void> } {
    const startedMs = this.deps.clock.nowMs();
    const imaging = this.deps.processor.start(bytes, options);
    const { metrics } = this.deps;
    const counted = imaging.processed.then(async (processed) => {
      metrics.add(METRIC.imagingTime, 'Milliseconds', this.deps.clock.nowMs() - startedMs);
      const nsfw = await processed.nsfwScoring;
      if (nsfw) metrics.add(METRIC.classifierTime, 'Milliseconds', nsfw.runMs);
    });
    return { ...imaging, counted: awaitedLater(counted) };
  }

  /** Writes the record while the files' puts end (step 4); once both are done, the upload is stored (step 5). */
  private async write(record: ImageRecord): Promise<void> {
    const [put, saved] = await Promise.allSettled([this.files.done(record), this.claims.save(record)]);
    this.saved = record;
    if (saved.status === 'rejected') this.saveUnknown = true;
    if (put.status === 'rejected') throw put.reason;
    if (saved.status === 'rejected') throw saved.reason;
    this.claims.pending = undefined;
  }

  /**
   * Nothing is stored, and the decode and scoring already started are let finish unused; the flood slot is kept, as
   * for any upload answered (`docs/rules.md`: otherwise a client could have the service fetch and decode without
   * limit).
   */
  private async answeredAsDuplicate(answer: AnsweredImage, imagingCounted: Promise<void>): Promise<AnsweredImage> {
    await settled(imagingCounted);
    this.deps.metrics.add(METRIC.uploadDuplicate, 'Count', 1);
    return answer;
  }

  private countStored(processed: ProcessedImage): void {
    this.deps.metrics.add(METRIC.uploadStored, 'Count', 1);
    const { original, thumb, medium } = processed;
    this.deps.metrics.add(METRIC.bytesStored, 'Bytes', original.bytes.length + thumb.bytes.length + medium.bytes.length);
  }
}
