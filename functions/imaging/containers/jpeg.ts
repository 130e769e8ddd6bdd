/** JPEG: its segments, read in order; metadata segments dropped, an orientation kept on its own. */
import { fail, Ranges, startsWith, type StripOptions } from './common';

const JPEG_SOS = 0xda;
const JPEG_EOI = 0xd9;

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

export function stripJpeg(buffer: Buffer, { keepMetadata, orientation }: StripOptions): Buffer {
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
