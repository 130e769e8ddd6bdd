import { ServiceError } from '../errors';

const DATA_URL_PREFIX = /^data:[^,]{0,200};base64,/i;
/** A search for one character outside the alphabet: no backtracking, whatever the length or the regexp engine. */
const OUTSIDE_ALPHABET = /[^A-Za-z0-9+/]/;

/**
 * Decodes a base64 image string the way clients send it: an optional `data:` prefix, spaces that were `+`, line breaks,
 * the URL-safe alphabet, missing padding.
 */
export function decodeBase64Source(text: string): Buffer {
  // Spaces are not trimmed: at either end they may be `+` signs a form decoder turned into spaces.
  const cleaned = text
    .replace(/[\r\n\t]/g, '')
    .replace(DATA_URL_PREFIX, '')
    .replace(/ /g, '+')
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .replace(/={1,2}$/, '');
  if (cleaned.length === 0 || cleaned.length % 4 === 1 || OUTSIDE_ALPHABET.test(cleaned)) {
    throw new ServiceError('InvalidBase64', 'Invalid base64 string');
  }
  return Buffer.from(cleaned, 'base64');
}
