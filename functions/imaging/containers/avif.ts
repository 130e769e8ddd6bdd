/** AVIF: its ISOBMFF boxes; the EXIF and XMP items hidden and their bytes dropped. */
import { fail, type StripOptions } from './common';

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
export function stripAvif(buffer: Buffer, { keepMetadata }: StripOptions): Buffer {
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
