import exifReader from 'exif-reader';

const SECTIONS = ['Image', 'Photo', 'GPSInfo', 'Iop'] as const;
const MAX_STRING_CHARS = 1000;
const MAX_ARRAY_ITEMS = 64;
const MAX_JSON_CHARS = 32_000;
/** A JPEG holds at most 64 KB of EXIF; other containers more, but no camera writes a megabyte of it. */
const MAX_EXIF_BYTES = 1024 * 1024;
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
  if (!exif || exif.length === 0 || exif.length > MAX_EXIF_BYTES) return null;
  let parsed: ReturnType<typeof exifReader>;
  try {
    // values that overlap, read again and again, are no camera's: left out before they cost anything
    if (valueBytes(exif) > exif.length) return null;
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

/** Bytes per value of the TIFF types 1 to 10, as exif-reader reads them. */
const TYPE_BYTES = [1, 1, 2, 4, 8, 1, 1, 2, 4, 8];
const UNDEFINED_TYPE = 7;
const POINTERS = { exif: 0x8769, gps: 0x8825, interop: 0xa005 } as const;
const POINTER_TAGS = new Set<number>(Object.values(POINTERS));

/**
 * The bytes exif-reader would read for values, over the IFDs it walks (0 and the next one, Exif, GPS, Interop; the same
 * offsets, followed the same way). Each entry may point its value anywhere in the block with any count, so a block of
 * a few kilobytes can make exif-reader read megabytes per entry for thousands of entries (minutes of CPU). A camera's
 * values each have bytes of their own: together no more than the block. Blobs (UNDEFINED) cost nothing: they are views.
 */
function valueBytes(block: Buffer): number {
  const head = block.toString('latin1', 0, 3);
  const start = head === 'MM\0' || head === 'II*' ? 0 : 6;
  const bigEndian = block[start] === 0x4d && block[start + 1] === 0x4d;
  const u16 = (at: number): number => (bigEndian ? block.readUInt16BE(at) : block.readUInt16LE(at));
  const u32 = (at: number): number => (bigEndian ? block.readUInt32BE(at) : block.readUInt32LE(at));
  const i16 = (at: number): number => (bigEndian ? block.readInt16BE(at) : block.readInt16LE(at));
  const i32 = (at: number): number => (bigEndian ? block.readInt32BE(at) : block.readInt32LE(at));
  /** The single value of an entry as exif-reader reads it, when it is a whole number above 0 (an IFD's offset). */
  const pointer = (entry: number): number | undefined => {
    const type = u16(entry + 2);
    const size = TYPE_BYTES[type - 1];
    if (size === undefined || u32(entry + 4) !== 1) return undefined;
    const at = size <= 4 ? entry + 8 : u32(entry + 8) + start;
    if (block.length < at + size) return undefined;
    const value = [
      () => block.readUInt8(at),
      undefined,
      () => u16(at),
      () => u32(at),
      () => u32(at) / u32(at + 4),
      () => block.readInt8(at),
      undefined,
      () => i16(at),
      () => i32(at),
      () => i32(at) / i32(at + 4),
    ][type - 1]?.();
    return value !== undefined && Number.isInteger(value) && value > 0 ? value : undefined;
  };
  let total = 0;
  /** Adds an IFD's values to the total; answers its entries' pointers by tag (the last of a tag wins, as there). */
  const walk = (ifd: number | undefined): Map<number, number | undefined> => {
    const pointers = new Map<number, number | undefined>();
    if (ifd === undefined || block.length < ifd + 2) return pointers;
    const entries = u16(ifd);
    for (let index = 0; index < entries && block.length >= ifd + 2 + index * 12 + 12; index += 1) {
      const entry = ifd + 2 + index * 12;
      const type = u16(entry + 2);
      const bytes = (TYPE_BYTES[type - 1] ?? 0) * u32(entry + 4);
      if (bytes > 4 && type !== UNDEFINED_TYPE) total += Math.min(bytes, block.length);
      const tag = u16(entry);
      if (POINTER_TAGS.has(tag)) pointers.set(tag, pointer(entry));
    }
    return pointers;
  };
  if (block.length <= start + 8) return 0;
  const first = u32(start + 4) + start;
  const image = walk(first);
  if (block.length >= first + 2) {
    const next = first + 2 + u16(first) * 12;
    if (block.length >= next + 4 && u32(next) !== 0) walk(u32(next) + start);
  }
  const at = (offset: number | undefined): number | undefined => (offset === undefined ? undefined : offset + start);
  const photo = walk(at(image.get(POINTERS.exif)));
  walk(at(image.get(POINTERS.gps)));
  walk(at(photo.get(POINTERS.interop)));
  return total;
}
