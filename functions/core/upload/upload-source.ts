import { decodeBase64Source } from './base64-source';
import { fileTooBig, ServiceError } from '../errors';
import { cleanOriginalFilename } from './naming';
import {
  cleanDescription,
  cleanTitle,
  parseExpirationSeconds,
  parseNsfw,
  parseTargetWidth,
  type SourceInput,
  type UploadRequest,
} from './upload-request';

/** The bytes of an upload, and the file name the client gave them (cleaned; undefined for base64). */
export interface SourceBytes {
  bytes: Uint8Array;
  filename: string | undefined;
}

/** The options of an upload, checked. */
export interface UploadOptions {
  title: string | undefined;
  description: string | null;
  nsfw: boolean;
  expirationSeconds: number | undefined;
  targetWidth: number | undefined;
}

/** Reads and checks the options; a forced expiration is an upper bound of the one asked for. */
export function readUploadOptions(request: UploadRequest, forcedExpirationSeconds: number | undefined): UploadOptions {
  const requested = parseExpirationSeconds(request.expiration);
  return {
    title: cleanTitle(request.title),
    description: cleanDescription(request.description),
    nsfw: parseNsfw(request.nsfw),
    expirationSeconds:
      forcedExpirationSeconds === undefined
        ? requested
        : requested === undefined
          ? forcedExpirationSeconds
          : Math.min(requested, forcedExpirationSeconds),
    targetWidth: parseTargetWidth(request.width),
  };
}

/**
 * The bytes of a file or base64 source, checked against the size limit; a URL source as its URL (fetched only once
 * the flood slot is taken); a two-step upload's token (its bytes read only once the slot is taken).
 */
export function readUploadSource(
  source: SourceInput | undefined,
  maxUploadBytes: number,
): SourceBytes | { url: string } | { token: string } {
  if (source === undefined) throw new ServiceError('EmptyUploadSource', 'Empty upload source');
  if (source.kind === 'staged') {
    if (source.token.trim() === '') throw new ServiceError('InvalidUploadToken', 'Invalid upload token');
    return { token: source.token };
  }
  if (source.kind === 'file') {
    if (source.truncated || source.bytes.length > maxUploadBytes) throw fileTooBig(maxUploadBytes);
    if (source.bytes.length === 0) throw new ServiceError('EmptySource', 'Empty source');
    return { bytes: source.bytes, filename: cleanOriginalFilename(source.filename) || undefined };
  }
  const text = source.value;
  if (text.trim() === '') throw new ServiceError('EmptySource', 'Empty source');
  if (/^\s*https?:\/\//i.test(text)) return { url: text.trim() };
  // The text is bounded by the request size, so decoding it before measuring costs little.
  const bytes = decodeBase64Source(text);
  if (bytes.length > maxUploadBytes) throw fileTooBig(maxUploadBytes);
  return { bytes, filename: undefined };
}
