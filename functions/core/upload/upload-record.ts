import { titleFromFilename } from './naming';
import type { DuplicateFingerprint, EncodedImage, ImageKeys, ImageRecord, ProcessedImage, StoredFile } from '../ports';
import type { UploadOptions } from './upload-source';

/** What an upload has claimed: the image's id, its name (recorded pending, naming its files), its fingerprint. */
export interface Claims {
  id: number;
  name: string;
  keys: ImageKeys;
  originalFilename: string;
  fingerprint: DuplicateFingerprint;
}

/** The record of a new image: its claims, its options, its files as processed, its first delete link's hash. */
export function newRecord(
  claims: Claims,
  options: UploadOptions,
  processed: ProcessedImage,
  written: { originalMd5: string; tokenHash: string; nowMs: number; claimed: boolean; nsfwScore: number | undefined },
): ImageRecord {
  const { id, keys, name, originalFilename, fingerprint } = claims;
  const { tokenHash, nowMs, claimed } = written;
  return {
    id,
    status: 'active',
    name,
    extension: processed.original.extension,
    original: { ...storedFile(keys.original, processed.original), md5: written.originalMd5 },
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
    // a picture whose hashes say too little of it keeps none (one only compared, as a washed-out copy's, neither)
    ...(processed.perceptual && processed.perceptual.hashes.length > 0
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
