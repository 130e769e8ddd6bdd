import exifReader from 'exif-reader';

const SECTIONS = ['Image', 'Photo', 'GPSInfo', 'Iop'] as const;
const MAX_STRING_CHARS = 1000;
const MAX_ARRAY_ITEMS = 64;
const MAX_JSON_CHARS = 32_000;
/** Tags that only locate or describe other data in the file. */
const LEFT_OUT = new Set([
  'ExifTag',
  'GPSTag',
  'InteroperabilityTag',
  'StripOffsets',
  'StripByteCounts',
  'JPEGInterchangeFormat',
  'JPEGInterchangeFormatLength',
]);

/**
 * The EXIF block as one flat object of tag name -> value, as PHP's exif_read_data gives it: binary blobs (MakerNote,
 * thumbnails, undefined-type values), very long values and location-only tags left out; null when nothing is readable.
 */
export function readExif(exif: Buffer | undefined): Record<string, unknown> | null {
  if (!exif || exif.length === 0) return null;
  let parsed: ReturnType<typeof exifReader>;
  try {
    parsed = exifReader(exif);
  } catch {
    return null;
  }
  const out: Record<string, unknown> = {};
  let jsonChars = 2;
  for (const section of SECTIONS) {
    const tags: Record<string, unknown> | undefined | null = parsed[section];
    if (!tags) continue;
    for (const [tag, raw] of Object.entries(tags)) {
      if (LEFT_OUT.has(tag) || /^\d+$/.test(tag) || Object.hasOwn(out, tag)) continue;
      const value = toJsonValue(raw);
      if (value === undefined) continue;
      jsonChars += JSON.stringify(tag).length + JSON.stringify(value).length + 2;
      if (jsonChars > MAX_JSON_CHARS) return out;
      out[tag] = value;
    }
  }
  return Object.keys(out).length > 0 ? out : null;
}

/**
 * Where a string's trailing NULs begin. Not `/\0+$/`: tried at every position of a run of NULs followed by something
 * else, it is quadratic, and an EXIF string can be as long as the upload (WebP, PNG, TIFF).
 */
function endOfText(value: string): number {
  let end = value.length;
  while (end > 0 && value.charCodeAt(end - 1) === 0) end -= 1;
  return end;
}

function toJsonValue(value: unknown): unknown {
  if (typeof value === 'string') {
    const text = value.slice(0, endOfText(value));

    return text.length <= MAX_STRING_CHARS && !/[\u0000-\u0008\u000e-\u001f]/.test(text) ? text : undefined;
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : exifDateText(value);
  if (Array.isArray(value)) {
    if (value.length > MAX_ARRAY_ITEMS || !value.every((item) => typeof item === 'number' && Number.isFinite(item)))
      return undefined;
    return value;
  }
  return undefined; // Buffers (binary blobs), null and anything else
}

/** exif-reader reads `YYYY:MM:DD HH:MM:SS` as UTC; give it back in the same EXIF text form. */
function exifDateText(date: Date): string {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  return `${iso.slice(0, 10).replace(/-/g, ':')} ${iso.slice(11, 19)}`;
}
