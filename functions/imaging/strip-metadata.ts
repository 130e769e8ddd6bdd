/**
 * Container-level metadata removal that keeps the encoded pixels byte for byte: EXIF, XMP, IPTC and comments go,
 * the ICC profile stays, and every byte after the image's end is dropped. Each parser walks the container's own
 * structure (JPEG segments, PNG chunks, GIF blocks, RIFF chunks, ISOBMFF boxes) and throws MalformedImageError on
 * anything it cannot walk whole, which the caller turns into 415.
 */

export type StrippableFormat = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif';

export class MalformedImageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedImageError';
  }
}

export interface StripOptions {
  /** Keep EXIF/XMP/IPTC/comments; only bytes after the end are dropped. */
  keepMetadata: boolean;
  /**
   * A JPEG's EXIF orientation (2 to 8) to keep when its EXIF goes: written back as an EXIF block of that one tag, so
   * that browsers show the stored original upright without a re-encode (`docs/imaging.md`).
   */
  orientation?: number;
}

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

function fail(message: string): never {
  throw new MalformedImageError(message);
}

/** Byte ranges to keep; joined once at the end, or the input itself when they cover it whole. */
class Ranges {
  private readonly parts: Array<[number, number]> = [];

  constructor(private readonly source: Buffer) {}

  keep(start: number, end: number): void {
    const last = this.parts[this.parts.length - 1];
    if (last && last[1] === start) last[1] = end;
    else this.parts.push([start, end]);
  }

  join(extra: Buffer[] = []): Buffer {
    const [only] = this.parts;
    if (this.parts.length === 1 && only && only[0] === 0 && only[1] === this.source.length && extra.length === 0)
      return this.source;
    return Buffer.concat([...this.parts.map(([start, end]) => this.source.subarray(start, end)), ...extra]);
  }
}

// ---- JPEG -------------------------------------------------------------------------------------------------------

const JPEG_SOS = 0xda;
const JPEG_EOI = 0xd9;

function startsWith(buffer: Buffer, offset: number, text: string): boolean {
  return buffer.toString('latin1', offset, offset + text.length) === text;
}

/** APP0 JFIF, APP2 ICC_PROFILE and APP14 Adobe carry how to decode the pixels; every other APPn and COM is metadata. */
function keepJpegSegment(buffer: Buffer, marker: number, payload: number): boolean {
  if (marker === 0xe0) return startsWith(buffer, payload, 'JFIF\0');
  if (marker === 0xe2) return startsWith(buffer, payload, 'ICC_PROFILE\0');
  if (marker === 0xee) return startsWith(buffer, payload, 'Adobe');
  return !(marker >= 0xe1 && marker <= 0xef) && marker !== 0xfe;
}

/** One JPEG segment: its marker, where it starts and ends, and for a scan (SOS) where its entropy-coded data ends. */
export interface JpegSegment {
  marker: number;
  start: number;
  end: number;
  /** After a scan's header, its entropy-coded data runs to here. */
  dataEnd?: number;
}

/** Walks a JPEG's segments from SOI to EOI (included), throwing MalformedImageError on anything it cannot walk. */
export function* jpegSegments(buffer: Buffer): Generator<JpegSegment> {
  if (buffer[0] !== 0xff || buffer[1] !== 0xd8) fail('no JPEG start of image');
  yield { marker: 0xd8, start: 0, end: 2 };
  let pos = 2;
  for (;;) {
    if (buffer[pos] !== 0xff) fail(`no JPEG marker at ${pos}`);
    while (buffer[pos + 1] === 0xff) pos += 1; // fill bytes
    const marker = buffer[pos + 1];
    if (marker === undefined) fail('JPEG ends inside a marker');
    if (marker === JPEG_EOI || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      yield { marker, start: pos, end: pos + 2 };
      if (marker === JPEG_EOI) return;
      pos += 2;
      continue;
    }
    if (pos + 4 > buffer.length) fail('JPEG ends inside a segment header');
    const length = buffer.readUInt16BE(pos + 2);
    const end = pos + 2 + length;
    if (length < 2 || end > buffer.length) fail('JPEG segment runs past the end');
    if (marker === JPEG_SOS) {
      const dataEnd = endOfEntropyData(buffer, end);
      yield { marker, start: pos, end, dataEnd };
      pos = dataEnd;
    } else {
      yield { marker, start: pos, end };
      pos = end;
    }
  }
}

/** How many scans a JPEG has (a baseline JPEG one, a progressive one about 10). */
export function jpegScanCount(bytes: Uint8Array): number {
  let scans = 0;
  for (const segment of jpegSegments(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))) {
    if (segment.marker === JPEG_SOS) scans += 1;
  }
  return scans;
}

function stripJpeg(buffer: Buffer, { keepMetadata, orientation }: StripOptions): Buffer {
  const ranges = new Ranges(buffer);
  const reoriented = !keepMetadata && orientation !== undefined && orientation >= 2 && orientation <= 8;
  for (const { marker, start, end, dataEnd } of jpegSegments(buffer)) {
    const isSegment = marker !== 0xd8 && marker !== JPEG_EOI && !(marker >= 0xd0 && marker <= 0xd7) && marker !== 0x01;
    if (!isSegment || keepMetadata || keepJpegSegment(buffer, marker, start + 4)) ranges.keep(start, end);
    if (dataEnd !== undefined) ranges.keep(end, dataEnd);
  }
  const stripped = ranges.join();
  if (!reoriented) return stripped;
  // after SOI, and after a JFIF APP0 that comes first (EXIF's own rule for where its APP1 goes)
  const at = stripped[2] === 0xff && stripped[3] === 0xe0 ? 4 + stripped.readUInt16BE(4) : 2;
  return Buffer.concat([stripped.subarray(0, at), orientationSegment(orientation), stripped.subarray(at)]);
}

/** An APP1 EXIF segment of one tag, Orientation: a big-endian TIFF header and IFD0 of one SHORT entry, no next IFD. */
function orientationSegment(orientation: number): Buffer {
  const tiff = Buffer.from([
    0x4d,
    0x4d,
    0x00,
    0x2a,
    0,
    0,
    0,
    8,
    0,
    1,
    0x01,
    0x12,
    0,
    3,
    0,
    0,
    0,
    1,
    0,
    orientation,
    0,
    0,
    0,
    0,
    0,
    0,
  ]);
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const header = Buffer.alloc(4);
  header.writeUInt16BE(0xffe1, 0);
  header.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([header, payload]);
}

/** The offset of the first marker after entropy-coded data (byte stuffing `FF00` and restarts `FFD0-7` are data). */
function endOfEntropyData(buffer: Buffer, from: number): number {
  let pos = from;
  for (;;) {
    pos = buffer.indexOf(0xff, pos);
    if (pos === -1 || pos + 1 >= buffer.length) fail('JPEG scan data has no end');
    const next = buffer[pos + 1] ?? 0;
    if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) pos += 2;
    else if (next === 0xff) pos += 1;
    else return pos;
  }
}

// ---- PNG --------------------------------------------------------------------------------------------------------

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Ancillary chunks that change how pixels look; the rest (text, time, EXIF, APNG frames, vendor data) is dropped. */
const PNG_KEPT_ANCILLARY = new Set(['tRNS', 'gAMA', 'cHRM', 'sRGB', 'iCCP', 'sBIT', 'bKGD', 'pHYs', 'cICP', 'mDCv', 'cLLi']);
/** APNG animation: the stored original is the still default image, as the renditions are. */
const PNG_ANIMATION = new Set(['acTL', 'fcTL', 'fdAT']);

function stripPng(buffer: Buffer, { keepMetadata }: StripOptions): Buffer {
  if (buffer.length < 8 || !buffer.subarray(0, 8).equals(PNG_SIGNATURE)) fail('no PNG signature');
  const ranges = new Ranges(buffer);
  ranges.keep(0, 8);
  let pos = 8;
  for (;;) {
    if (pos + 12 > buffer.length) fail('PNG ends before IEND');
    const length = buffer.readUInt32BE(pos);
    const type = buffer.toString('latin1', pos + 4, pos + 8);
    const end = pos + 12 + length;
    if (length > 0x7fffffff || end > buffer.length) fail('PNG chunk runs past the end');
    if (!/^[A-Za-z]{4}$/.test(type)) fail('PNG chunk type is not four letters');
    const critical = type.charCodeAt(0) < 0x61;
    const kept = critical || PNG_KEPT_ANCILLARY.has(type) || (keepMetadata && !PNG_ANIMATION.has(type));
    if (kept) ranges.keep(pos, end);
    pos = end;
    if (type === 'IEND') return ranges.join();
  }
}

// ---- GIF --------------------------------------------------------------------------------------------------------

/** Application extensions that change how the image plays or looks: looping and the ICC profile. */
const GIF_KEPT_APPLICATIONS = ['NETSCAPE2.0', 'ANIMEXTS1.0', 'ICCRGBG1012'];

function stripGif(buffer: Buffer, { keepMetadata }: StripOptions): Buffer {
  const header = buffer.toString('latin1', 0, 6);
  if (header !== 'GIF87a' && header !== 'GIF89a') fail('no GIF header');
  if (buffer.length < 13) fail('GIF ends inside its screen descriptor');
  const packed = buffer[10] ?? 0;
  let pos = 13 + (packed & 0x80 ? 3 * 2 ** ((packed & 0x07) + 1) : 0);
  const ranges = new Ranges(buffer);
  ranges.keep(0, pos);
  let images = 0;
  for (;;) {
    const introducer = buffer[pos];
    if (introducer === undefined) {
      // Many encoders forget the trailer; a file whose last block is whole is complete without it.
      if (pos === buffer.length && images > 0) return ranges.join([Buffer.from([0x3b])]);
      fail('GIF ends before its trailer');
    }
    if (introducer === 0x3b) {
      ranges.keep(pos, pos + 1);
      return ranges.join();
    }
    if (introducer === 0x2c) {
      if (pos + 10 > buffer.length) fail('GIF ends inside an image descriptor');
      const imagePacked = buffer[pos + 9] ?? 0;
      const dataStart = pos + 10 + (imagePacked & 0x80 ? 3 * 2 ** ((imagePacked & 0x07) + 1) : 0) + 1; // + LZW code size
      const end = skipSubBlocks(buffer, dataStart);
      ranges.keep(pos, end);
      images += 1;
      pos = end;
      continue;
    }
    if (introducer === 0x21) {
      const label = buffer[pos + 1];
      const end = skipSubBlocks(buffer, pos + 2);
      const application = label === 0xff && buffer[pos + 2] === 11 ? buffer.toString('latin1', pos + 3, pos + 14) : '';
      const kept = keepMetadata || label === 0xf9 || GIF_KEPT_APPLICATIONS.includes(application);
      if (kept) ranges.keep(pos, end);
      pos = end;
      continue;
    }
    fail(`unknown GIF block 0x${introducer.toString(16)}`);
  }
}

function skipSubBlocks(buffer: Buffer, from: number): number {
  let pos = from;
  for (;;) {
    const size = buffer[pos];
    if (size === undefined) fail('GIF ends inside a data block');
    pos += 1 + size;
    if (size === 0) return pos;
  }
}

// ---- WebP -------------------------------------------------------------------------------------------------------

const WEBP_KEPT_CHUNKS = new Set(['VP8X', 'VP8 ', 'VP8L', 'ALPH', 'ANIM', 'ANMF', 'ICCP']);
const VP8X_EXIF_FLAG = 0x08;
const VP8X_XMP_FLAG = 0x04;

function stripWebp(buffer: Buffer, { keepMetadata }: StripOptions): Buffer {
  if (buffer.length < 12 || !startsWith(buffer, 0, 'RIFF') || !startsWith(buffer, 8, 'WEBP')) fail('no WebP header');
  const riffEnd = 8 + buffer.readUInt32LE(4);
  if (riffEnd > buffer.length || riffEnd < 12) fail('WebP RIFF runs past the end');
  const chunks: Buffer[] = [];
  let pos = 12;
  while (pos < riffEnd) {
    if (pos + 8 > riffEnd) fail('WebP ends inside a chunk header');
    const fourcc = buffer.toString('latin1', pos, pos + 4);
    const size = buffer.readUInt32LE(pos + 4);
    const end = pos + 8 + size + (size & 1);
    if (pos + 8 + size > riffEnd) fail('WebP chunk runs past the end');
    if (keepMetadata || WEBP_KEPT_CHUNKS.has(fourcc)) {
      let chunk = buffer.subarray(pos, Math.min(end, riffEnd));
      if (fourcc === 'VP8X' && !keepMetadata && size >= 1) {
        chunk = Buffer.from(chunk);
        chunk[8] = (chunk[8] ?? 0) & ~(VP8X_EXIF_FLAG | VP8X_XMP_FLAG);
      }
      chunks.push(chunk);
    }
    pos = end;
  }
  const body = Buffer.concat(chunks);
  if (riffEnd === buffer.length && body.length === riffEnd - 12 && body.equals(buffer.subarray(12, riffEnd))) return buffer;
  const header = Buffer.alloc(12);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(body.length + 4, 4);
  header.write('WEBP', 8, 'latin1');
  return Buffer.concat([header, body]);
}

// ---- AVIF (ISOBMFF) ---------------------------------------------------------------------------------------------

interface Box {
  type: string;
  start: number;
  /** Where the payload starts, after size, type and any large size. */
  payload: number;
  end: number;
}

function readBoxes(buffer: Buffer, from: number, to: number): Box[] {
  const boxes: Box[] = [];
  let pos = from;
  while (pos < to) {
    if (pos + 8 > to) fail('ISOBMFF ends inside a box header');
    let size = buffer.readUInt32BE(pos);
    const type = buffer.toString('latin1', pos + 4, pos + 8);
    let payload = pos + 8;
    if (size === 1) {
      if (pos + 16 > to) fail('ISOBMFF ends inside a large box size');
      const large = buffer.readBigUInt64BE(pos + 8);
      if (large > BigInt(Number.MAX_SAFE_INTEGER)) fail('ISOBMFF box is too large');
      size = Number(large);
      payload = pos + 16;
    } else if (size === 0) {
      size = to - pos;
    }
    const end = pos + size;
    if (size < payload - pos || end > to) fail(`ISOBMFF box ${type} runs past its parent`);
    boxes.push({ type, start: pos, payload, end });
    pos = end;
  }
  return boxes;
}

interface ItemLocation {
  constructionMethod: number;
  extents: Array<{ offset: number; length: number }>;
}

/** Reads an unsigned integer of 0, 4 or 8 bytes. */
function readSized(buffer: Buffer, pos: number, bytes: number): number {
  if (bytes === 0) return 0;
  if (bytes === 4) return buffer.readUInt32BE(pos);
  if (bytes === 8) {
    const value = buffer.readBigUInt64BE(pos);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) fail('ISOBMFF offset is too large');
    return Number(value);
  }
  return fail(`unsupported iloc field size ${bytes}`);
}

/** Item extents read from one file at most: an image has a few per item (a grid of tiles, a few hundred in all). */
const MAX_ITEM_EXTENTS = 10_000;

function readItemLocations(buffer: Buffer, box: Box): Map<number, ItemLocation> {
  const locations = new Map<number, ItemLocation>();
  const version = buffer[box.payload] ?? 0;
  if (version > 2) fail('unknown iloc version');
  let pos = box.payload + 4;
  const need = (bytes: number): void => {
    if (pos + bytes > box.end) fail('iloc runs past its box');
  };
  need(2);
  const offsetSize = (buffer[pos] ?? 0) >> 4;
  const lengthSize = (buffer[pos] ?? 0) & 0x0f;
  const baseOffsetSize = (buffer[pos + 1] ?? 0) >> 4;
  const indexSize = version === 0 ? 0 : (buffer[pos + 1] ?? 0) & 0x0f;
  pos += 2;
  need(version < 2 ? 2 : 4);
  const itemCount = version < 2 ? buffer.readUInt16BE(pos) : buffer.readUInt32BE(pos);
  pos += version < 2 ? 2 : 4;
  // with field sizes of 0, an extent takes no bytes: the count alone would bound the work
  let extentsRead = 0;
  for (let item = 0; item < itemCount; item += 1) {
    need(version < 2 ? 2 : 4);
    const itemId = version < 2 ? buffer.readUInt16BE(pos) : buffer.readUInt32BE(pos);
    pos += version < 2 ? 2 : 4;
    let constructionMethod = 0;
    if (version >= 1) {
      need(2);
      constructionMethod = buffer.readUInt16BE(pos) & 0x0f;
      pos += 2;
    }
    need(2 + baseOffsetSize + 2);
    pos += 2; // data_reference_index
    const baseOffset = readSized(buffer, pos, baseOffsetSize);
    pos += baseOffsetSize;
    const extentCount = buffer.readUInt16BE(pos);
    pos += 2;
    extentsRead += extentCount;
    if (extentsRead > MAX_ITEM_EXTENTS) fail(`more than ${MAX_ITEM_EXTENTS} item extents`);
    const extents: ItemLocation['extents'] = [];
    for (let extent = 0; extent < extentCount; extent += 1) {
      need(indexSize + offsetSize + lengthSize);
      pos += indexSize;
      const offset = readSized(buffer, pos, offsetSize);
      pos += offsetSize;
      const length = readSized(buffer, pos, lengthSize);
      pos += lengthSize;
      extents.push({ offset: baseOffset + offset, length });
    }
    locations.set(itemId, { constructionMethod, extents });
  }
  return locations;
}

interface MetadataItem {
  id: number;
  /** Offset of the item_type four-character code inside its infe box. */
  typeOffset: number;
}

function readMetadataItems(buffer: Buffer, box: Box): MetadataItem[] {
  const version = buffer[box.payload] ?? 0;
  const entriesStart = box.payload + 4 + (version === 0 ? 2 : 4);
  if (entriesStart > box.end) fail('iinf runs past its box');
  const items: MetadataItem[] = [];
  for (const entry of readBoxes(buffer, entriesStart, box.end)) {
    if (entry.type !== 'infe') continue;
    const entryVersion = buffer[entry.payload] ?? 0;
    if (entryVersion < 2) continue; // versions 0 and 1 carry no item type
    const idSize = entryVersion === 2 ? 2 : 4;
    const typeOffset = entry.payload + 4 + idSize + 2;
    if (typeOffset + 4 > entry.end) fail('infe runs past its box');
    const id = idSize === 2 ? buffer.readUInt16BE(entry.payload + 4) : buffer.readUInt32BE(entry.payload + 4);
    const type = buffer.toString('latin1', typeOffset, typeOffset + 4);
    if (type === 'Exif' || type === 'mime') items.push({ id, typeOffset });
  }
  return items;
}

/** Top-level box types of ISOBMFF files; anything else after the boxes is junk appended to the file. */
const TOP_LEVEL_BOXES = new Set([
  'ftyp',
  'meta',
  'mdat',
  'moov',
  'free',
  'skip',
  'uuid',
  'wide',
  'pdin',
  'moof',
  'mfra',
  'styp',
  'sidx',
  'ssix',
  'prft',
  'emsg',
  'meco',
]);

/**
 * Where the top-level boxes end: at the first header that is not a known top-level box (junk appended to the file),
 * or at the end. A known box that runs past the end is a truncated file and fails when the boxes are read.
 */
function endOfTopLevelBoxes(buffer: Buffer): number {
  let pos = 0;
  while (pos + 8 <= buffer.length) {
    const size = buffer.readUInt32BE(pos);
    if (!TOP_LEVEL_BOXES.has(buffer.toString('latin1', pos + 4, pos + 8))) return pos;
    if (size === 0) return buffer.length;
    const boxSize = size === 1 && pos + 16 <= buffer.length ? Number(buffer.readBigUInt64BE(pos + 8)) : size;
    if (boxSize < 8) return pos;
    if (pos + boxSize > buffer.length) return buffer.length;
    pos += boxSize;
  }
  return pos;
}

/** The item type metadata items get: no reader knows it, so none looks for their (zeroed) data. */
const HIDDEN_ITEM_TYPE = 'skip';

/**
 * ISOBMFF keeps item data at absolute offsets, so removing bytes would mean rewriting every offset. Instead the
 * EXIF and XMP (`mime`) items keep their place: their data is overwritten with zeros and their type renamed, which
 * leaves every other offset valid. Bytes after the last top-level box are dropped.
 */
function stripAvif(buffer: Buffer, { keepMetadata }: StripOptions): Buffer {
  const boxes = readBoxes(buffer, 0, endOfTopLevelBoxes(buffer));
  const [first] = boxes;
  if (!first || first.type !== 'ftyp') fail('no ftyp box');
  const meta = boxes.find((box) => box.type === 'meta');
  if (!meta) fail('no meta box');
  const whole = boxes[boxes.length - 1]?.end === buffer.length ? buffer : buffer.subarray(0, boxes[boxes.length - 1]?.end);
  if (keepMetadata) return whole;
  const children = readBoxes(buffer, meta.payload + 4, meta.end);
  const iinf = children.find((box) => box.type === 'iinf');
  const iloc = children.find((box) => box.type === 'iloc');
  const idat = children.find((box) => box.type === 'idat');
  const items = iinf ? readMetadataItems(buffer, iinf) : [];
  if (items.length === 0) return whole;
  if (!iloc) fail('metadata items without iloc');
  const locations = readItemLocations(buffer, iloc);
  const out = Buffer.from(whole);
  const ranges: Array<[number, number]> = [];
  const cleared = new Set<number>();
  for (const item of items) {
    out.write(HIDDEN_ITEM_TYPE, item.typeOffset, 'latin1');
    const location = cleared.has(item.id) ? undefined : locations.get(item.id);
    cleared.add(item.id);
    if (!location) continue;
    const base = location.constructionMethod === 1 ? (idat?.payload ?? fail('idat item without idat')) : 0;
    const limit = location.constructionMethod === 1 && idat ? idat.end : out.length;
    if (location.constructionMethod > 1) fail('unsupported item construction method');
    for (const extent of location.extents) {
      const start = base + extent.offset;
      const end = extent.length === 0 ? limit : start + extent.length;
      if (start < 0 || end > limit || start > end) fail('item data runs past the end');
      ranges.push([start, end]);
    }
  }
  // Items and extents may name the same bytes many times over (an extent of length 0 is all the data there is): each
  // byte is cleared once.
  for (const [start, end] of mergedRanges(ranges)) out.fill(0, start, end);
  return out;
}

/** The union of byte ranges, as ranges that neither overlap nor touch, in order. */
function mergedRanges(ranges: Array<[number, number]>): Array<[number, number]> {
  const merged: Array<[number, number]> = [];
  for (const [start, end] of [...ranges].sort((one, other) => one[0] - other[0])) {
    const last = merged[merged.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}
