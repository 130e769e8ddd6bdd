import { deleteTokens } from './delete-tokens';
import type { DuplicateGuard } from './duplicate-guard';
import { formatDateFolder } from './formatting';
import type { IdCodecs } from './id-codec';
import type { ImageObject } from './image-object';
import type { NameClaimer } from './name-claimer';
import { baseNameOf, titleFromFilename } from './naming';
import type {
  DuplicateFingerprint,
  EncodedImage,
  ImageKeys,
  ImageRecord,
  ImageRecords,
  ProcessedImage,
  RandomSource,
  StoredFile,
} from './ports';
import type { IdScheme } from './id-codec';
import type { SourceBytes, UploadOptions } from './upload-source';
import type { UploadWrites } from './upload-writes';

const NAME_SUFFIX_HEX_CHARS = 16;
/** Random ids drawn before giving up: a second draw is needed once in 2^53 / (images stored) uploads. */
const ID_ATTEMPTS = 3;

/** What an upload has claimed: the image's id, its name (recorded pending, naming its files), its fingerprint. */
export interface Claims {
  id: number;
  name: string;
  keys: ImageKeys;
  originalFilename: string;
  fingerprint: DuplicateFingerprint;
}

export interface UploadClaimsDeps {
  images: Pick<ImageRecords, 'allocateId' | 'addDeleteToken' | 'tighten'>;
  duplicateGuard: DuplicateGuard;
  names: NameClaimer;
  codecs: IdCodecs;
  random: RandomSource;
  rules: { timeZone: string; idScheme: IdScheme };
  /** The Image object of a record, with a delete link of its token. */
  show(record: ImageRecord, idEncoded: string, deleteToken: string): ImageObject;
}

/**
 * What makes an upload this one and no other (contract, sections 4, 5, 11): its id, its name, and its duplicate
 * fingerprint, claimed at once while the pixels decode, and the record written under them.
 */
export class UploadClaims {
  constructor(private readonly deps: UploadClaimsDeps) {}

  /**
   * Claims the duplicate fingerprint and the name at once, while the flood slot is taken; answers the earlier image
   * instead when this upload is a duplicate of it. What is claimed is held by `writes`, to be given back on failure.
   */
  async claim(
    upload: { clientIp: string; nowMs: number; md5: string; extension: string },
    source: SourceBytes,
    options: UploadOptions,
    writes: UploadWrites,
  ): Promise<Claims | { answer: ImageObject }> {
    const { clientIp, nowMs, md5, extension } = upload;
    const fingerprint: DuplicateFingerprint = { clientIp, md5, width: options.targetWidth };
    const originalFilename = source.filename ?? `${this.deps.random.hex(NAME_SUFFIX_HEX_CHARS)}.${extension}`;
    const id = await this.newId();
    const codec = await this.deps.codecs.codec();
    const [checked, named] = await Promise.allSettled([
      this.deps.duplicateGuard.check(fingerprint, id),
      this.deps.names.claim({
        baseName: baseNameOf(originalFilename),
        extension,
        folder: formatDateFolder(nowMs, this.deps.rules.timeZone),
        imageId: id,
        idEncoded: codec.encode(id),
        nowMs,
      }),
    ]);
    if (checked.status === 'fulfilled' && 'claim' in checked.value) writes.holdClaim(checked.value.claim);
    if (named.status === 'fulfilled') writes.holdName(named.value.keys.original, named.value.keys);
    if (checked.status === 'rejected') throw checked.reason;
    if (named.status === 'rejected') throw named.reason;
    let check = checked.value;
    while ('existing' in check) {
      const answer = await this.answerDuplicate(check.existing, codec.encode(check.existing.id), {
        nsfw: options.nsfw,
        expiresAtMs: options.expirationSeconds === undefined ? null : nowMs + options.expirationSeconds * 1000,
      });
      if (answer) {
        await writes.discardName();
        return { answer };
      }
      // the image was deleted since it was found: this upload is stored after all
      check = await this.deps.duplicateGuard.check(fingerprint, id);
      if ('claim' in check) writes.holdClaim(check.claim);
    }
    return { id, name: named.value.name, keys: named.value.keys, originalFilename, fingerprint };
  }

  /**
   * Writes the image's record. A random id that an image holds already (one chance in 2^53 per image) is drawn again
   * (the files do not depend on it, unless they are named after it: that upload fails and the client tries again).
   */
  async save(record: ImageRecord, writes: UploadWrites): Promise<void> {
    for (let attempt = 1; !(await writes.saveRecord(record)); attempt += 1) {
      if (attempt >= ID_ATTEMPTS || this.deps.names.followsId) throw new Error(`the id ${record.id} is taken`);
      record.id = await this.newId();
      if (writes.heldClaim) await this.deps.duplicateGuard.rebind(writes.heldClaim, record.id);
    }
  }

  /** A new id: drawn at random (default), or the next of Chevereto's counter (ID_SCHEME=sequential). */
  private newId(): Promise<number> {
    return this.deps.rules.idScheme === 'sequential'
      ? this.deps.images.allocateId()
      : Promise.resolve(this.deps.random.safeInteger());
  }

  /**
   * The existing image as a fresh upload would show it, with a delete link of its own for this request, marked
   * sensitive and ending sooner when this upload asks so (never the reverse); undefined when it was deleted in the
   * meantime. Its title and description stay the first upload's.
   */
  private async answerDuplicate(
    existing: ImageRecord,
    idEncoded: string,
    asked: { nsfw: boolean; expiresAtMs: number | null },
  ): Promise<ImageObject | undefined> {
    const token = deleteTokens.make(this.deps.random);
    if (!(await this.deps.images.addDeleteToken(existing.id, token.hash))) return undefined;
    // only what raises it is written: a flag it has, or an end no sooner than its own, costs no write
    const sooner = asked.expiresAtMs !== null && (existing.expiresAtMs === null || asked.expiresAtMs < existing.expiresAtMs);
    const raise = { nsfw: asked.nsfw && !existing.nsfw, expiresAtMs: sooner ? asked.expiresAtMs : null };
    const raises = raise.nsfw || raise.expiresAtMs !== null;
    const shown = raises ? await this.deps.images.tighten(existing.id, raise) : existing;
    if (!shown) return undefined;
    return this.deps.show(shown, idEncoded, token.token);
  }
}

/** The record of a new image: its claims, its options, its files as processed, its first delete link's hash. */
export function newRecord(
  claims: Claims,
  options: UploadOptions,
  processed: ProcessedImage,
  written: { tokenHash: string; nowMs: number; claimed: boolean; nsfwScore: number | undefined },
): ImageRecord {
  const { id, keys, name, originalFilename, fingerprint } = claims;
  const { tokenHash, nowMs, claimed } = written;
  return {
    id,
    status: 'active',
    name,
    extension: processed.original.extension,
    original: { ...storedFile(keys.original, processed.original), md5: processed.originalMd5 },
    thumb: storedFile(keys.thumb, processed.thumb),
    medium: storedFile(keys.medium, processed.medium),
    title: options.title ?? (titleFromFilename(originalFilename) || name),
    description: options.description,
    nsfw: options.nsfw,
    originalFilename,
    exif: processed.exif,
    animated: processed.animated,
    createdAtMs: nowMs,
    expiresAtMs: options.expirationSeconds === undefined ? null : nowMs + options.expirationSeconds * 1000,
    views: 0,
    sourceMd5: fingerprint.md5,
    clientIp: fingerprint.clientIp,
    fingerprint: claimed ? fingerprint : null,
    deleteTokenHashes: [tokenHash],
    ...(processed.perceptual
      ? { perceptual: { hashes: processed.perceptual.hashes, quality: processed.perceptual.quality } }
      : {}),
    ...(written.nsfwScore === undefined ? {} : { nsfwScore: Math.round(written.nsfwScore * 1000) / 1000 }),
  };
}

function storedFile(key: string, image: EncodedImage): StoredFile {
  return {
    key,
    width: image.width,
    height: image.height,
    size: image.bytes.length,
    mime: image.mime,
    extension: image.extension,
    bits: image.bits,
    channels: image.channels,
  };
}
