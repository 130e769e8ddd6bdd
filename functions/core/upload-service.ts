import { createHash, timingSafeEqual } from 'node:crypto';
import { decodeBase64Source } from './base64-source';
import { UploadError } from './errors';
import { formatDateFolder, formatSize } from './formatting';
import { IdCodec } from './id-codec';
import { toImageObject, type ImageObject } from './image-object';
import { baseNameOf, cleanOriginalFilename, sanitizeName, titleFromFilename, type NamingMode } from './naming';
import type {
  Clock,
  EncodedImage,
  ImageProcessor,
  ImageRecord,
  ImageRepository,
  Logger,
  ObjectStore,
  RandomSource,
  SettingsStore,
  SourceFetcher,
  StoredFile,
} from './ports';
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
}

export interface UploadServiceDeps {
  rules: UploadRules;
  settings: SettingsStore;
  images: ImageRepository;
  objects: ObjectStore;
  processor: ImageProcessor;
  fetcher: SourceFetcher;
  clock: Clock;
  random: RandomSource;
  logger: Logger;
}

const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
const NAME_SUFFIX_HEX_CHARS = 16;
const RANDOM_NAME_HEX_CHARS = 32;
const DELETE_TOKEN_HEX_CHARS = 48;
const NAME_CLAIM_ATTEMPTS = 5;

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
    const source = await this.readSource(request.source);

    const processed = await this.deps.processor.process(source.bytes, { targetWidth });
    const nowMs = this.deps.clock.nowMs();
    const originalFilename = source.filename ?? `${this.deps.random.hex(NAME_SUFFIX_HEX_CHARS)}.${processed.original.extension}`;
    const codec = await this.idCodec();
    const id = await this.deps.images.allocateId();
    const idEncoded = codec.encode(id);
    const folder = formatDateFolder(nowMs, this.deps.rules.timeZone);
    const name = await this.claimName(baseNameOf(originalFilename), processed.original.extension, folder, id, idEncoded);
    const keyOf = (suffix: string, image: EncodedImage): string => `images/${folder}/${name}${suffix}.${image.extension}`;

    const record: ImageRecord = {
      id,
      status: 'pending',
      name,
      extension: processed.original.extension,
      original: { ...storedFile(keyOf('', processed.original), processed.original), md5: processed.originalMd5 },
      thumb: storedFile(keyOf('.th', processed.thumb), processed.thumb),
      medium: storedFile(keyOf('.md', processed.medium), processed.medium),
      title: title ?? (titleFromFilename(originalFilename) || name),
      description,
      nsfw,
      originalFilename,
      exif: processed.exif,
      animated: processed.animated,
      createdAtMs: nowMs,
      expiresAtMs: expirationSeconds === undefined ? null : nowMs + expirationSeconds * 1000,
      views: 0,
      sourceMd5: processed.sourceMd5,
      clientIp: request.clientIp,
    };
    const deleteToken = this.deps.random.hex(DELETE_TOKEN_HEX_CHARS);
    await this.store(record, [processed.original, processed.thumb, processed.medium], hashDeleteToken(deleteToken));
    return this.imageObject(record, idEncoded, deleteToken, nowMs);
  }

  /** The active, unexpired record behind an encoded id, with one more view counted. */
  async view(idEncoded: string): Promise<ImageRecord> {
    const id = (await this.idCodec()).decode(idEncoded);
    const record = id === undefined ? undefined : await this.deps.images.find(id);
    if (!record || !this.isLive(record)) throw notFound();
    return (await this.deps.images.addView(record.id)) ?? record;
  }

  /** The encoded id of a record, for links. */
  async encodeId(id: number): Promise<string> {
    return (await this.idCodec()).encode(id);
  }

  private isLive(record: ImageRecord): boolean {
    return record.status === 'active' && (record.expiresAtMs === null || record.expiresAtMs > this.deps.clock.nowMs());
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

  private async readSource(source: SourceInput | undefined): Promise<SourceBytes> {
    const { maxUploadBytes, maxUrlUploadBytes } = this.deps.rules;
    if (source === undefined) throw new UploadError('EmptyUploadSource', 'Empty upload source');
    if (source.kind === 'file') {
      if (source.truncated || source.bytes.length > maxUploadBytes) throw fileTooBig(maxUploadBytes);
      if (source.bytes.length === 0) throw new UploadError('EmptySource', 'Empty source');
      return { bytes: source.bytes, filename: cleanOriginalFilename(source.filename) || undefined };
    }
    const text = source.value;
    if (text.trim() === '') throw new UploadError('EmptySource', 'Empty source');
    if (/^\s*https?:\/\//i.test(text)) {
      const fetched = await this.deps.fetcher.fetch(text.trim(), maxUrlUploadBytes);
      if (fetched.bytes.length === 0) throw new UploadError('EmptySource', 'Empty source');
      return { bytes: fetched.bytes, filename: cleanOriginalFilename(fetched.filename) || undefined };
    }
    // The text is bounded by the request size, so decoding it before measuring costs little.
    const bytes = decodeBase64Source(text);
    if (bytes.length > maxUploadBytes) throw fileTooBig(maxUploadBytes);
    return { bytes, filename: undefined };
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
   * pending record that names every object it may have written, which the cleanup here or the sweep removes.
   */
  private async store(record: ImageRecord, images: EncodedImage[], deleteTokenHash: string): Promise<void> {
    const { images: repository, objects } = this.deps;
    await repository.createPending(record, deleteTokenHash);
    const files = [record.original, record.thumb, record.medium];
    try {
      await Promise.all(
        files.map((file, index) =>
          objects.put({
            key: file.key,
            body: images[index]?.bytes ?? new Uint8Array(),
            contentType: file.mime,
            cacheControl: IMMUTABLE_CACHE_CONTROL,
          }),
        ),
      );
      await repository.activate(record.id);
      record.status = 'active';
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
export function hashDeleteToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function constantTimeEquals(given: string, expected: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
