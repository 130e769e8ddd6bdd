import { decodeBase64Source } from './base64-source';
import { constantTimeEquals, md5Hex, sha256Hex } from './hashes';
import { UploadError } from './errors';
import { FloodGuard, type FloodReservation } from './flood';
import { METRIC, type Metrics } from './metrics';
import { formatDateFolder, formatSize } from './formatting';
import { IdCodec } from './id-codec';
import { toImageObject, type ImageObject } from './image-object';
import { isLive, PENDING_GRACE_MS } from './lifecycle';
import { baseNameOf, cleanOriginalFilename, sanitizeName, titleFromFilename, type NamingMode } from './naming';
import type {
  CachePurger,
  Clock,
  DuplicateIndex,
  EncodedImage,
  ImageProcessor,
  ImageRecord,
  ImageRepository,
  Logger,
  ObjectStore,
  RandomSource,
  SettingsStore,
  ProcessedImage,
  SourceFetcher,
  StoredFile,
} from './ports';
import { removeImage } from './remove-image';
import {
  cleanDescription,
  cleanTitle,
  parseExpirationSeconds,
  parseNsfw,
  parseTargetWidth,
  type SourceInput,
  type UploadRequest,
} from './upload-request';

/** The operator's rules that shape an upload. */
export interface UploadRules {
  /** Base of every URL in responses, without a trailing slash. */
  publicUrl: string;
  timeZone: string;
  maxUploadBytes: number;
  /** URL sources do not pass through the gateway and may be larger. */
  maxUrlUploadBytes: number;
  naming: NamingMode;
  idPadding: number;
  /** Every guest upload expires after at most this many seconds. */
  forcedExpirationSeconds: number | undefined;
  duplicates: DuplicatePolicy;
  /** How ids are made: drawn at random (unguessable), or Chevereto's counter (for data migrated from it). */
  idScheme: IdScheme;
}

export type IdScheme = 'random' | 'sequential';

export type DuplicatePolicy = 'return-existing' | 'reject' | 'allow';

export interface UploadServiceDeps {
  rules: UploadRules;
  settings: SettingsStore;
  images: ImageRepository;
  objects: ObjectStore;
  processor: ImageProcessor;
  fetcher: SourceFetcher;
  flood: Pick<FloodGuard, 'reserve'>;
  /** URL sources that could not be fetched, per client. */
  fetchFailures: Pick<FloodGuard, 'reserve'>;
  duplicates: DuplicateIndex;
  purger: CachePurger;
  clock: Clock;
  random: RandomSource;
  logger: Logger;
  metrics: Metrics;
}

const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
const NAME_SUFFIX_HEX_CHARS = 16;
const RANDOM_NAME_HEX_CHARS = 32;
const DELETE_TOKEN_HEX_CHARS = 48;
const NAME_CLAIM_ATTEMPTS = 5;
/** Random ids drawn before giving up: a second draw is needed once in 2^53 / (images stored) uploads. */
const ID_ATTEMPTS = 3;
/** Same bytes, width and client within this time is a duplicate (contract, section 11). */
const DUPLICATE_WINDOW_MS = 24 * 3600_000;
/** A duplicate claim with no image after this long belongs to an upload that died; it may be taken over. */
const STALE_CLAIM_MS = 5 * 60_000;
/** How long an upload waits for an identical one in flight before storing its own copy. */
const IN_FLIGHT_WAIT_MS = 10_000;
const IN_FLIGHT_POLL_MS = 100;
const MAX_DUPLICATE_CHECKS = 200;
const TOKEN_PATTERN = /^[0-9a-f]{48}$/;

type DuplicateCheck = { existing: ImageRecord } | { claimId: string | undefined };

interface SourceBytes {
  bytes: Uint8Array;
  /** Client-given file name, already cleaned; undefined for base64. */
  filename: string | undefined;
}

/** The upload operation and the reads of stored images. */
export class UploadService {
  private codec: { salt: string; codec: IdCodec } | undefined;

  constructor(private readonly deps: UploadServiceDeps) {}

  /** Runs one upload from the raw request to the Image object of the response. */
  async upload(request: UploadRequest): Promise<ImageObject> {
    await this.authenticate(request.key);
    const title = cleanTitle(request.title);
    const description = cleanDescription(request.description);
    const nsfw = parseNsfw(request.nsfw);
    const expirationSeconds = this.effectiveExpiration(parseExpirationSeconds(request.expiration));
    const targetWidth = parseTargetWidth(request.width);
    const given = this.readSource(request.source);

    // the flood slot is taken before anything is fetched: a client past its limit makes the service download nothing
    const reservation = await this.deps.flood.reserve(request.clientIp, this.deps.clock.nowMs());
    let duplicateKey: string | null = null;
    let claimId: string | undefined;
    try {
      const source = 'url' in given ? await this.fetchSource(given.url, request.clientIp) : given;
      // libvips works on its own threads while this thread hashes and asks the duplicate index.
      const imagingStartedMs = this.deps.clock.nowMs();
      const processing = this.deps.processor.process(source.bytes, { targetWidth });
      processing.then(
        () => this.deps.metrics.add(METRIC.imagingTime, 'Milliseconds', this.deps.clock.nowMs() - imagingStartedMs),
        () => undefined,
      );
      const sourceMd5 = md5Hex(source.bytes);
      if (this.deps.rules.duplicates !== 'allow') {
        duplicateKey = `DUP#${request.clientIp}#${sourceMd5}#${targetWidth ?? '-'}`;
        const check = await this.checkDuplicate(duplicateKey);
        if ('existing' in check) {
          const answer = await this.answerDuplicate(check.existing);
          if (answer) {
            // nothing is stored: the slots go back, and the work already started is let finish unused
            await processing.catch(() => undefined);
            await reservation.release();
            this.deps.metrics.add(METRIC.uploadDuplicate, 'Count', 1);
            return answer;
          }
        } else {
          claimId = check.claimId;
        }
      }
      const processed = await processing;
      const image = await this.store(
        {
          title,
          description,
          nsfw,
          expirationSeconds,
          sourceMd5,
          clientIp: request.clientIp,
          duplicateKey: claimId ? duplicateKey : null,
        },
        source,
        processed,
      );
      if (claimId && duplicateKey) await this.bindDuplicate(duplicateKey, claimId, image.id);
      this.deps.metrics.add(METRIC.uploadStored, 'Count', 1);
      this.deps.metrics.add(
        METRIC.bytesStored,
        'Bytes',
        processed.original.bytes.length + processed.thumb.bytes.length + processed.medium.bytes.length,
      );
      return image.object;
    } catch (error) {
      await this.undo(reservation, duplicateKey, claimId);
      throw error;
    }
  }

  private async store(
    fields: Pick<ImageRecord, 'description' | 'nsfw' | 'sourceMd5' | 'clientIp' | 'duplicateKey'> & {
      title: string | undefined;
      expirationSeconds: number | undefined;
    },
    source: SourceBytes,
    processed: ProcessedImage,
  ): Promise<{ id: number; object: ImageObject }> {
    const nowMs = this.deps.clock.nowMs();
    const originalFilename = source.filename ?? `${this.deps.random.hex(NAME_SUFFIX_HEX_CHARS)}.${processed.original.extension}`;
    const codec = await this.idCodec();
    const folder = formatDateFolder(nowMs, this.deps.rules.timeZone);
    for (let attempt = 1; ; attempt += 1) {
      const id = await this.newId();
      const idEncoded = codec.encode(id);
      const name = await this.claimName(baseNameOf(originalFilename), processed.original.extension, folder, id, idEncoded);
      const keyOf = (suffix: string, image: EncodedImage): string => `images/${folder}/${name}${suffix}.${image.extension}`;
      const deleteToken = this.deps.random.hex(DELETE_TOKEN_HEX_CHARS);
      const record: ImageRecord = {
        id,
        status: 'pending',
        name,
        extension: processed.original.extension,
        original: { ...storedFile(keyOf('', processed.original), processed.original), md5: processed.originalMd5 },
        thumb: storedFile(keyOf('.th', processed.thumb), processed.thumb),
        medium: storedFile(keyOf('.md', processed.medium), processed.medium),
        title: fields.title ?? (titleFromFilename(originalFilename) || name),
        description: fields.description,
        nsfw: fields.nsfw,
        originalFilename,
        exif: processed.exif,
        animated: processed.animated,
        createdAtMs: nowMs,
        expiresAtMs: fields.expirationSeconds === undefined ? null : nowMs + fields.expirationSeconds * 1000,
        views: 0,
        sourceMd5: fields.sourceMd5,
        clientIp: fields.clientIp,
        duplicateKey: fields.duplicateKey,
        deleteTokenHashes: [hashDeleteToken(deleteToken)],
      };
      if (await this.write(record, [processed.original, processed.thumb, processed.medium])) {
        return { id, object: this.imageObject(record, idEncoded, deleteToken, nowMs) };
      }
      // A random id that an image holds already (one chance in 2^53 per image): draw again.
      if (attempt >= ID_ATTEMPTS) throw new Error(`no free id after ${ID_ATTEMPTS} draws`);
    }
  }

  /** A new id: drawn at random (default), or the next of Chevereto's counter (ID_SCHEME=sequential). */
  private newId(): Promise<number> {
    return this.deps.rules.idScheme === 'sequential'
      ? this.deps.images.allocateId()
      : Promise.resolve(this.deps.random.safeInteger());
  }

  /**
   * An earlier live upload of the same bytes by the same client, or a claim on the fingerprint for this one. When an
   * identical upload is still being stored, waits (briefly) for it to end, so that concurrent identical uploads store
   * one image, as sequential ones do.
   */
  private async checkDuplicate(key: string): Promise<DuplicateCheck> {
    const claimId = this.deps.random.hex(16);
    const startedMs = this.deps.clock.nowMs();
    for (let attempt = 0; attempt < MAX_DUPLICATE_CHECKS; attempt += 1) {
      const nowMs = this.deps.clock.nowMs();
      const answer = await this.deps.duplicates.claim(key, claimId, nowMs, DUPLICATE_WINDOW_MS);
      if (answer.claimed) return { claimId };
      if (answer.imageId !== null) {
        const existing = await this.deps.images.find(answer.imageId);
        if (existing && isLive(existing, this.deps.clock.nowMs())) {
          if (this.deps.rules.duplicates === 'reject') throw new UploadError('Duplicate', 'Duplicated upload');
          return { existing };
        }
      } else if (answer.claimedAtMs > nowMs - STALE_CLAIM_MS) {
        // Another request is storing the same bytes right now.
        if (nowMs - startedMs < IN_FLIGHT_WAIT_MS) {
          await this.deps.clock.sleep(IN_FLIGHT_POLL_MS);
          continue;
        }
        return { claimId: undefined }; // it is taking long: store this one too, unclaimed
      }
      // The claim's image is gone (deleted, expired) or its upload died: this upload takes the fingerprint over.
      if (await this.deps.duplicates.takeOver(key, answer.claimId, claimId, nowMs, DUPLICATE_WINDOW_MS)) return { claimId };
    }
    return { claimId: undefined }; // the fingerprint kept changing hands: store this one, unclaimed
  }

  /**
   * The existing image as a fresh upload would show it, with a delete link of its own for this request; undefined
   * when it was deleted in the meantime, and this upload is stored after all.
   */
  private async answerDuplicate(existing: ImageRecord): Promise<ImageObject | undefined> {
    const deleteToken = this.deps.random.hex(DELETE_TOKEN_HEX_CHARS);
    if (!(await this.deps.images.addDeleteToken(existing.id, hashDeleteToken(deleteToken)))) return undefined;
    return this.imageObject(existing, await this.encodeId(existing.id), deleteToken, this.deps.clock.nowMs());
  }

  private async bindDuplicate(key: string, claimId: string, imageId: number): Promise<void> {
    try {
      await this.deps.duplicates.bind(key, claimId, imageId);
    } catch (error) {
      // The image is stored; an unbound claim only means a later duplicate is stored again once the claim is stale.
      this.deps.logger.warn('duplicate claim not bound to its image', { imageId, error });
    }
  }

  /** Gives back the flood slots and the duplicate claim of an upload that did not end in a stored image. */
  private async undo(reservation: FloodReservation, duplicateKey: string | null, claimId: string | undefined): Promise<void> {
    const steps: Array<Promise<void>> = [reservation.release()];
    if (duplicateKey && claimId) steps.push(this.deps.duplicates.releaseClaim(duplicateKey, claimId));
    for (const result of await Promise.allSettled(steps)) {
      if (result.status === 'rejected')
        this.deps.logger.warn('undo of a failed upload did not finish', { error: result.reason as unknown });
    }
  }

  /** The active, unexpired record behind an encoded id, with one more view counted. */
  async view(idEncoded: string): Promise<ImageRecord> {
    const record = await this.liveRecord(idEncoded);
    return (await this.deps.images.addView(record.id)) ?? record;
  }

  /** The record a delete link points at, if the link is valid; it deletes nothing (GET, link previewers). */
  async deletable(idEncoded: string, token: string): Promise<ImageRecord> {
    const record = await this.liveRecord(idEncoded);
    if (!TOKEN_PATTERN.test(token) || !record.deleteTokenHashes.includes(hashDeleteToken(token))) throw notFound();
    return record;
  }

  /**
   * What a valid delete link asks. An image is held by every upload answered with it: the first, and each duplicate
   * answered with it (same bytes, same client, within a day), each with a delete link of its own. A link takes its own
   * upload away; the image goes (its three objects, its duplicate entry, its record) when the last of them does, so
   * one person behind a shared address cannot delete another's upload. Answers which of the two happened.
   */
  async delete(idEncoded: string, token: string): Promise<'deleted' | 'released'> {
    const record = await this.deletable(idEncoded, token);
    const tokenHash = hashDeleteToken(token);
    if (await this.deps.images.releaseDeleteToken(record.id, tokenHash)) return 'released';
    // From here the image answers 404, and the sweep finishes the removal should this request stop half way.
    if (!(await this.deps.images.markDeleting(record.id, tokenHash, this.deps.clock.nowMs()))) throw notFound();
    await removeImage(this.deps, record);
    return 'deleted';
  }

  private async liveRecord(idEncoded: string): Promise<ImageRecord> {
    const id = (await this.idCodec()).decode(idEncoded);
    const record = id === undefined ? undefined : await this.deps.images.find(id);
    if (!record || !isLive(record, this.deps.clock.nowMs())) throw notFound();
    return record;
  }

  /** The encoded id of a record, for links. */
  async encodeId(id: number): Promise<string> {
    return (await this.idCodec()).encode(id);
  }

  private imageObject(record: ImageRecord, idEncoded: string, deleteToken: string, nowMs: number): ImageObject {
    return toImageObject(record, {
      publicUrl: this.deps.rules.publicUrl,
      timeZone: this.deps.rules.timeZone,
      nowMs,
      idEncoded,
      deleteToken,
    });
  }

  private async authenticate(key: string | undefined): Promise<void> {
    if (key === undefined || key === '') throw new UploadError('NoKey', 'No key provided');
    const expected = await this.deps.settings.apiKey();
    if (expected === undefined || expected === '') throw new UploadError('KeyNotConfigured', 'API key is not configured');
    if (!constantTimeEquals(key, expected)) throw new UploadError('InvalidKey', 'Invalid API key.');
  }

  private effectiveExpiration(requested: number | undefined): number | undefined {
    const forced = this.deps.rules.forcedExpirationSeconds;
    if (forced === undefined) return requested;
    return requested === undefined ? forced : Math.min(requested, forced);
  }

  /** The bytes of a file or base64 source, checked; a URL source as its URL, fetched only once the flood slot is taken. */
  private readSource(source: SourceInput | undefined): SourceBytes | { url: string } {
    const { maxUploadBytes } = this.deps.rules;
    if (source === undefined) throw new UploadError('EmptyUploadSource', 'Empty upload source');
    if (source.kind === 'file') {
      if (source.truncated || source.bytes.length > maxUploadBytes) throw fileTooBig(maxUploadBytes);
      if (source.bytes.length === 0) throw new UploadError('EmptySource', 'Empty source');
      return { bytes: source.bytes, filename: cleanOriginalFilename(source.filename) || undefined };
    }
    const text = source.value;
    if (text.trim() === '') throw new UploadError('EmptySource', 'Empty source');
    if (/^\s*https?:\/\//i.test(text)) return { url: text.trim() };
    // The text is bounded by the request size, so decoding it before measuring costs little.
    const bytes = decodeBase64Source(text);
    if (bytes.length > maxUploadBytes) throw fileTooBig(maxUploadBytes);
    return { bytes, filename: undefined };
  }

  /**
   * Fetches a URL source. A slot of the client's fetch-failure budget is taken first and given back when the fetch
   * succeeds: a client whose URLs keep failing is refused before anything more is fetched for it.
   */
  private async fetchSource(url: string, clientIp: string): Promise<SourceBytes> {
    const failureSlot = await this.deps.fetchFailures.reserve(clientIp, this.deps.clock.nowMs());
    const fetched = await this.deps.fetcher.fetch(url, this.deps.rules.maxUrlUploadBytes);
    await failureSlot.release();
    if (fetched.bytes.length === 0) throw new UploadError('EmptySource', 'Empty source');
    return { bytes: fetched.bytes, filename: cleanOriginalFilename(fetched.filename) || undefined };
  }

  private async claimName(baseName: string, extension: string, folder: string, id: number, idEncoded: string): Promise<string> {
    const { naming } = this.deps.rules;
    const first =
      naming === 'id'
        ? idEncoded
        : naming === 'random'
          ? this.deps.random.hex(RANDOM_NAME_HEX_CHARS)
          : sanitizeName(baseName) || this.deps.random.hex(RANDOM_NAME_HEX_CHARS);
    let candidate = first;
    for (let attempt = 0; attempt < NAME_CLAIM_ATTEMPTS; attempt += 1) {
      if (await this.deps.images.claimObjectKey(`images/${folder}/${candidate}.${extension}`, id)) return candidate;
      candidate = `${first}${this.deps.random.hex(NAME_SUFFIX_HEX_CHARS)}`;
    }
    throw new Error(`no free name for ${first} after ${NAME_CLAIM_ATTEMPTS} attempts`);
  }

  /**
   * Record first (pending), then the objects, then the record goes active: a failure leaves either nothing or a
   * pending record that names every object it may have written, which the cleanup here or the sweep removes. False,
   * writing nothing, when another image holds the record's id.
   */
  private async write(record: ImageRecord, images: EncodedImage[]): Promise<boolean> {
    const { images: repository, objects } = this.deps;
    if (!(await repository.createPending(record, record.createdAtMs + PENDING_GRACE_MS))) return false;
    const files = [record.original, record.thumb, record.medium];
    try {
      // Every put is waited for, failed or not: a clean-up that ran while a put was still in flight would leave the
      // object that put wrote afterwards behind.
      const puts = await Promise.allSettled(
        files.map((file, index) =>
          objects.put({
            key: file.key,
            body: images[index]?.bytes ?? new Uint8Array(),
            contentType: file.mime,
            cacheControl: IMMUTABLE_CACHE_CONTROL,
          }),
        ),
      );
      const failed = puts.find((put): put is PromiseRejectedResult => put.status === 'rejected');
      if (failed) throw failed.reason;
      await repository.activate(record.id, record.expiresAtMs);
      record.status = 'active';
      return true;
    } catch (error) {
      await this.discard(
        record.id,
        files.map((file) => file.key),
      );
      throw error;
    }
  }

  private async discard(id: number, keys: string[]): Promise<void> {
    try {
      await this.deps.objects.deleteMany(keys);
      await this.deps.images.remove(id);
    } catch (cleanupError) {
      this.deps.logger.warn('cleanup of a failed upload left a pending record for the sweep', { id, cleanupError });
    }
  }

  private async idCodec(): Promise<IdCodec> {
    const salt = await this.deps.settings.idSalt();
    if (this.codec?.salt !== salt) this.codec = { salt, codec: new IdCodec(salt, this.deps.rules.idPadding) };
    return this.codec.codec;
  }
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

function fileTooBig(maxBytes: number): UploadError {
  return new UploadError('FileTooBig', `File too big - max ${formatSize(maxBytes)}`);
}

function notFound(): UploadError {
  return new UploadError('NotFound', 'Image not found');
}

/** Delete tokens are kept only as this hash. */
function hashDeleteToken(token: string): string {
  return sha256Hex(token);
}
