/**
 * Container-level metadata removal that keeps the encoded pixels byte for byte: EXIF, XMP, IPTC and comments go,
 * the ICC profile stays, and every byte after the image's end is dropped. Each parser walks the container's own
 * structure (JPEG segments, PNG chunks, GIF blocks, RIFF chunks, ISOBMFF boxes) and throws MalformedImageError on
 * anything it cannot walk whole, which the caller turns into 415.
 */

import { stripAvif } from './containers/avif';
import type { StripOptions } from './containers/common';
import { stripGif } from './containers/gif';
import { stripJpeg } from './containers/jpeg';
import { stripPng } from './containers/png';
import { stripWebp } from './containers/webp';

export type { StripOptions } from './containers/common';

export type StrippableFormat = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif';

/** The image with its metadata removed; the input itself when there was nothing to remove. */
export function stripMetadata(format: StrippableFormat, bytes: Uint8Array, options: StripOptions): Uint8Array {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stripped = STRIPPERS[format](buffer, options);
  return stripped === buffer ? bytes : stripped;
}

const STRIPPERS: Record<StrippableFormat, (buffer: Buffer, options: StripOptions) => Buffer> = {
  jpeg: stripJpeg,
  png: stripPng,
  gif: stripGif,
  webp: stripWebp,
  avif: stripAvif,
};
