import { deleteTokens } from '../delete-tokens';
import { DependencyError, ServiceError } from '../errors';
import type { DuplicateGuard, HeldClaim } from './duplicate-guard';
import { FilePuts } from './file-puts';
import type { FloodGuard, FloodReservation } from '../flood';
import { formatDateFolder } from '../formatting';
import type { IdCodecs, IdScheme } from '../id-codec';
import type { NameClaimer } from './name-claimer';
import { baseNameOf } from './naming';
import type {
  DuplicateFingerprint,
  EncodedImage,
  ImageKeys,
  ImageRecord,
  ImageRecords,
  ImageRemovals,
  Logger,
  NameClaims,
  ObjectStore,
  ProcessedImage,
  RandomSource,
} from '../ports';
import { changeHolds } from '../lifecycle/holds';
import type { Claims } from './upload-record';
import type { UploadOptions } from './upload-source';

const NAME_SUFFIX_HEX_CHARS = 16;
/** Random ids drawn before giving up: a second draw is needed once in 2^53 / (images stored) uploads. */
const ID_ATTEMPTS = 3;

export interface UploadAttemptDeps {
  images: Pick<ImageRecords, 'allocateId' | 'writeHolds' | 'saveActive' | 'find'> &
    Pick<ImageRemovals, 'remove'> &
    Pick<NameClaims, 'settleName'>;
  objects: ObjectStore;
  flood: Pick<FloodGuard, 'reserveSlot'>;
  duplicateGuard: Pick<DuplicateGuard, 'check' | 'rebind' | 'release'>;
  names: NameClaimer;
  codecs: IdCodecs;
  random: RandomSource;
  rules: { timeZone: string; idScheme: IdScheme };
  logger: Logger;
}

/** An earlier image of the same bytes, as this request is answered with it: a delete link of its own included. */
export interface DuplicateAnswer {
  record: ImageRecord;
  idEncoded: string;
  deleteToken: string;
}

/** The bytes an upload claims by: their md5 (the duplicate fingerprint), the stored extension, the name sent. */
export interface ClaimedBytes {
  md5: string;
  extension: string;
  filename: string | undefined;
}

/**
 * One upload's hold on the stores: what it takes, what it writes, in the order of the write protocol, and how it is
 * all given back when the upload fails. This is the one place the protocol is told (`docs/reliability.md` shows what
 * each failure leaves):
 *
 * 1. The client's flood slot is taken; the counters' read showing room is enough to start putting the original.
 * 2. The id, the duplicate fingerprint and the name are claimed at once. The name's claim records the upload as
 *    pending and names its three files, before any file is written.
 * 3. The original is put as soon as its bytes are final, while the renditions are made; the renditions once made.
 * 4. The record is written alongside the last puts: one round trip after the imaging. A record whose files are not all
 *    there is answered to no one: the upload answers once every write is done, and a duplicate waits for the files.
 * 5. Once all is written the upload is stored; its name claim, still pending, is settled by the sweep.
 *
 * A failure leaves either nothing or a pending name claim naming every file that may exist (and maybe the record),
 * which `undo` or, should it fail too, the sweep removes: never a file without a record or a claim naming it.
 */
export class UploadAttempt {
  private slot: { room: Promise<void>; reservation: Promise<FloodReservation> } | undefined;
  /** Real imaging work was done for the upload: a refusal keeps its slot (`spend`). */
  private spent = false;
  private claim: HeldClaim | undefined;
  /** The name claimed, recording the upload as pending. */
  private pending: { name: string; keys: ImageKeys } | undefined;
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
    private readonly clientIp: string,
    /** When the upload came: its record's creation time, its folder's date, its flood windows. */
    readonly nowMs: number,
  ) {
    this.files = new FilePuts(deps);
  }

  /** Starts taking the client's flood slot (step 1). */
  takeSlot(): void {
    this.slot = this.deps.flood.reserveSlot(this.clientIp, this.nowMs);
  }

  /** The flood slot, once taken. */
  get reserved(): Promise<FloodReservation> {
    if (!this.slot) throw new Error('no flood slot is being taken');
    return this.slot.reservation;
  }

  /**
   * Marks the imaging's work as begun: from now on a refusal of the upload (too slow to decode, a picture cut short, a
   * blocked picture) keeps its flood slot, as an answer would, and only a failure of ours gives it back
   * (`docs/rules.md`): otherwise the costliest uploads would be the ones that never count.
   */
  spend(): void {
    this.spent = true;
  }

  /** Whether the upload holds its duplicate fingerprint (none when duplicates are allowed, or one in flight took long). */
  get holdsFingerprint(): boolean {
    return this.claim !== undefined;
  }

  /**
   * Claims the id, the duplicate fingerprint and the name at once (step 2); answers the earlier image instead when the
   * upload is a duplicate of it, the name claimed then settled unused.
   */
  async claimAll(bytes: ClaimedBytes, options: UploadOptions): Promise<Claims | { duplicate: DuplicateAnswer }> {
    const fingerprint: DuplicateFingerprint = { clientIp: this.clientIp, md5: bytes.md5, width: options.targetWidth };
    const originalFilename = bytes.filename ?? `${this.deps.random.hex(NAME_SUFFIX_HEX_CHARS)}.${bytes.extension}`;
    const id = await this.newId();
    const codec = await this.deps.codecs.codec();
    const [checked, named] = await Promise.allSettled([
      this.deps.duplicateGuard.check(fingerprint, id),
      this.deps.names.claim({
        baseName: baseNameOf(originalFilename),
        extension: bytes.extension,
        folder: formatDateFolder(this.nowMs, this.deps.rules.timeZone),
        imageId: id,
        idEncoded: codec.encode(id),
        nowMs: this.nowMs,
      }),
    ]);
    if (checked.status === 'fulfilled' && 'claim' in checked.value) this.claim = checked.value.claim;
    if (named.status === 'fulfilled') this.pending = { name: named.value.keys.original, keys: named.value.keys };
    if (checked.status === 'rejected') throw checked.reason;
    if (named.status === 'rejected') throw named.reason;
    let check = checked.value;
    while ('existing' in check) {
      const answer = await this.answerDuplicate(check.existing, options);
      if (answer) {
        await this.discardName();
        return { duplicate: { ...answer, idEncoded: codec.encode(check.existing.id) } };
      }
      // the image was deleted since it was found: this upload is stored after all
      check = await this.deps.duplicateGuard.check(fingerprint, id);
      if ('claim' in check) this.claim = check.claim;
    }
    return { id, name: named.value.name, keys: named.value.keys, originalFilename, fingerprint };
  }

  /** Puts the original once its bytes and md5 are known and the slot has room (step 3). */
  putOriginal(key: string, original: Promise<{ image: EncodedImage; md5: string }>): void {
    const room = this.slot?.room ?? Promise.reject(new Error('no flood slot is being taken'));
    this.files.original(key, original, room);
  }

  /** Puts the renditions (step 3), before the record is made; `write` waits for them. The name claim names them. */
  putRenditions(keys: ImageKeys, files: Pick<ProcessedImage, 'thumb' | 'medium'>): void {
    this.files.renditions(keys, files);
  }

  /** Writes the record while the files' puts end (step 4); once both are done, the upload is stored (step 5). */
  async write(record: ImageRecord): Promise<void> {
    const [put, saved] = await Promise.allSettled([this.files.done(record), this.save(record)]);
    this.saved = record;
    if (saved.status === 'rejected') this.saveUnknown = true;
    if (put.status === 'rejected') throw put.reason;
    if (saved.status === 'rejected') throw saved.reason;
    this.pending = undefined;
  }

  /**
   * Gives back the flood slot (unless the upload was refused after its imaging began) and the duplicate claim, and
   * removes what was written, of an upload that failed with `error`.
   */
  async undo(error: unknown): Promise<void> {
    const steps: Array<Promise<void>> = [];
    const refused = error instanceof ServiceError && !(error instanceof DependencyError) && error.kind !== 'KeyNotConfigured';
    // a slot never taken is nothing to give back
    if (this.slot && !(this.spent && refused))
      steps.push(
        this.slot.reservation.then(
          (reservation) => reservation.release(),
          () => undefined,
        ),
      );
    if (this.claim) steps.push(this.deps.duplicateGuard.release(this.claim));
    const { pending, saved, saveUnknown } = this;
    if (pending) {
      steps.push(
        this.files.ended().then(async () => {
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

  /**
   * Writes the image's record. A random id that an image holds already (one chance in 2^53 per image) is drawn again
   * (the files do not depend on it, unless they are named after it: that upload fails and the client tries again).
   */
  private async save(record: ImageRecord): Promise<void> {
    for (let attempt = 1; !(await this.deps.images.saveActive(record)); attempt += 1) {
      if (attempt >= ID_ATTEMPTS || this.deps.names.followsId) throw new Error(`the id ${record.id} is taken`);
      record.id = await this.newId();
      if (this.claim) await this.deps.duplicateGuard.rebind(this.claim, record.id);
    }
  }

  /** A new id: drawn at random (default), or the next of Chevereto's counter (ID_SCHEME=sequential). */
  private newId(): Promise<number> {
    return this.deps.rules.idScheme === 'sequential'
      ? this.deps.images.allocateId()
      : Promise.resolve(this.deps.random.safeInteger());
  }

  /**
   * The existing image with a hold of its own for this request (`holds.ts`): a delete link, and the end this upload
   * asks for, which keeps the image at least that long (and no longer: its other holds have their own ends); undefined
   * when it was deleted in the meantime. Its title, description and sensitive mark stay the first upload's: they are
   * the image's, and only an operator changes another's picture (`docs/rules.md`).
   */
  private async answerDuplicate(
    existing: ImageRecord,
    options: UploadOptions,
  ): Promise<{ record: ImageRecord; deleteToken: string } | undefined> {
    const token = deleteTokens.make(this.deps.random);
    const endsAtMs = options.expirationSeconds === undefined ? null : this.nowMs + options.expirationSeconds * 1000;
    const shown = await changeHolds(this.deps.images, existing, (holds) => ({ ...holds, [token.hash]: endsAtMs }));
    return shown ? { record: shown, deleteToken: token.token } : undefined;
  }

  /** The name claimed goes unused (a duplicate answered): it stays taken, its claim settled. */
  private async discardName(): Promise<void> {
    if (!this.pending) return;
    await this.discard(this.pending);
    this.pending = undefined;
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
}
