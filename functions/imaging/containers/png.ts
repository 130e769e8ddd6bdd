/** PNG: its chunks; ancillary ones dropped but those that change how the pixels look. */
import { fail, Ranges, type StripOptions } from './common';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Ancillary chunks that change how pixels look; the rest (text, time, EXIF, APNG frames, vendor data) is dropped. */
const PNG_KEPT_ANCILLARY = new Set(['tRNS', 'gAMA', 'cHRM', 'sRGB', 'iCCP', 'sBIT', 'bKGD', 'pHYs', 'cICP', 'mDCv', 'cLLi']);
/** APNG animation: the stored original is the still default image, as the renditions are. */
const PNG_ANIMATION = new Set(['acTL', 'fcTL', 'fdAT']);

export function stripPng(buffer: Buffer, { keepMetadata }: StripOptions): Buffer {
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
