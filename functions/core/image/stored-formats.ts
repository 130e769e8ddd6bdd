/**
 * The formats the service stores (`docs/api.md`, section 4: everything else is converted or refused), each with its
 * media type and file extension. The edge serves nothing else under `/images/` (the local server checks it on every
 * file).
 */
export const STORED_FORMATS = {
  jpeg: { mime: 'image/jpeg', extension: 'jpg' },
  png: { mime: 'image/png', extension: 'png' },
  gif: { mime: 'image/gif', extension: 'gif' },
  webp: { mime: 'image/webp', extension: 'webp' },
  avif: { mime: 'image/avif', extension: 'avif' },
} as const;

export type StoredFormat = keyof typeof STORED_FORMATS;

/** Whether a stored file's media type is one the service writes. */
export function isStoredMimeType(mime: string | undefined): boolean {
  return Object.values(STORED_FORMATS).some((format) => format.mime === mime);
}
