/** WebP: its RIFF chunks; EXIF and XMP dropped, and their flags in VP8X cleared. */
import { fail, startsWith, type StripOptions } from './common';

const WEBP_KEPT_CHUNKS = new Set(['VP8X', 'VP8 ', 'VP8L', 'ALPH', 'ANIM', 'ANMF', 'ICCP']);
const VP8X_EXIF_FLAG = 0x08;
const VP8X_XMP_FLAG = 0x04;

export function stripWebp(buffer: Buffer, { keepMetadata }: StripOptions): Buffer {
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
