import { deleteTokens } from '../image/delete-tokens';
import type { DuplicateGuard, HeldClaim } from './duplicate-guard';
import { formatDateFolder } from '../image/formatting';
import type { IdCodecs, IdScheme } from '../image/id-codec';
import { changeHolds } from '../lifecycle/holds';
import type { NameClaimer } from './name-claimer';
import { baseNameOf } from './naming';
import type {
  DuplicateFingerprint,
  ImageKeys,
  ImageRecord,
  ImageRecords,
  Logger,
  NameClaims,
  ObjectStore,
  RandomSource,
} from '../ports';
import type { Claims } from './upload-record';
import type { UploadOptions } from './upload-source';

const NAME_SUFFIX_HEX_CHARS = 16;
/** Random ids drawn before giving up: a second draw is needed once in 2^53 / (images stored) uploads. */
const ID_ATTEMPTS = 3;

export interface UploadClaimsDeps {
  images: Pick<ImageRecords, 'allocateId' | 'writeHolds' | 'saveActive' | 'find'> & Pick<NameClaims, 'settleName'>;
  objects: ObjectStore;
  duplicateGuard: Pick<DuplicateGuard, 'check' | 'rebind' | 'release'>;
  names: NameClaimer;
  codecs: IdCodecs;
  random: RandomSource;
  rules: { timeZone: string; idScheme: IdScheme };
  logger: Logger;
}

/** An image as a request is answered with it: a delete link of its own included. */
export interface AnsweredImage {
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

/** The name claimed, recording the upload as pending and naming its three files. */
export interface PendingName {
  name: string;
  keys: ImageKeys;
}

/**
 * What an upload claims before it writes a file (step 2 of `UploadAttempt`'s protocol): its id, its duplicate
 * fingerprint and its name, the record saved under the id, and how the fingerprint and the name are given back.
 */
export class UploadClaims {
  private claim: HeldClaim | undefined;
  /** The name claimed, while the upload is not stored: what a take-back removes. */
  pending: PendingName | undefined;

  constructor(
    private readonly deps: UploadClaimsDeps,
    private readonly clientIp: string,
    private readonly nowMs: number,
  ) {}

  /** Whether the upload holds its duplicate fingerprint (none when duplicates are allowed, or one in flight took long). */
  get holdsFingerprint(): boolean {
    return this.claim !== undefined;
  }

  /**
   * Claims the id, the duplicate fingerprint and the name at once; answers the earlier image instead when the upload is
   * a duplicate of it, the name claimed then settled unused.
   */
  async claimAll(bytes: ClaimedBytes, options: UploadOptions): Promise<Claims | { duplicate: AnsweredImage }> {
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

  /**
   * Writes the image's record. A random id that an image holds already (one chance in 2^53 per image) is drawn again
   * (the files do not depend on it, unless they are named after it: that upload fails and the client tries again).
   */
  async save(record: ImageRecord): Promise<void> {
    for (let attempt = 1; !(await this.deps.images.saveActive(record)); attempt += 1) {
      if (attempt >= ID_ATTEMPTS || this.deps.names.followsId) throw new Error(`the id ${record.id} is taken`);
      record.id = await this.newId();
      if (this.claim) await this.deps.duplicateGuard.rebind(this.claim, record.id);
    }
  }

  /** Gives the duplicate fingerprint back, if the upload holds it. */
  async releaseFingerprint(): Promise<void> {
    if (this.claim) await this.deps.duplicateGuard.release(this.claim);
  }

  /** Whether this record is in the table (under its id, naming its original: no other upload's can). */
  async isSaved(record: ImageRecord): Promise<boolean> {
    return (await this.deps.images.find(record.id))?.original.key === record.original.key;
  }

  /** Removes the files a name claim names, and settles the claim (the name stays taken); logged if it cannot. */
  async discard({ name, keys }: PendingName): Promise<void> {
    try {
      await this.deps.objects.deleteMany([keys.original, keys.thumb, keys.medium]);
      await this.deps.images.settleName(name);
    } catch (cleanupError) {
      this.deps.logger.warn('cleanup of a failed upload left a pending name claim for the sweep', { name, cleanupError });
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
}
