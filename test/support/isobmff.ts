/** Boxes of an ISOBMFF file (AVIF, HEIC), built by hand for the parsers' tests. */
export function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

export function fullBox(type: string, version: number, ...payload: Buffer[]): Buffer {
  return box(type, Buffer.from([version, 0, 0, 0]), ...payload);
}

const u16 = (value: number): Buffer => Buffer.from([value >> 8, value & 0xff]);
const u32 = (value: number): Buffer => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
};

/** An item of an `iloc` (version 1, 4-byte base offsets, offsets and lengths of 0 bytes): `extents` extents of it. */
export interface LocatedItem {
  id: number;
  extents: number;
}

/**
 * An AVIF-shaped file: `ftyp`, a `meta` whose `iinf` lists an `Exif` item per id in `exifIds` (repeats included), and
 * whose `iloc` places `items` at the start of the `mdat`, every extent of length 0 (all of the data from there); then
 * an `mdat` of `dataBytes` bytes of 0xab.
 */
export function avifWithExifItems(exifIds: number[], items: LocatedItem[], dataBytes: number): Buffer {
  const ftyp = box('ftyp', Buffer.from('avif\0\0\0\0avifmif1', 'latin1'));
  const infe = (id: number) => fullBox('infe', 2, u16(id), u16(0), Buffer.from('Exif\0', 'latin1'));
  const iinf = fullBox('iinf', 0, u16(exifIds.length), ...exifIds.map(infe));
  const meta = (base: number) =>
    fullBox(
      'meta',
      0,
      iinf,
      fullBox(
        'iloc',
        1,
        Buffer.from([0x00, 0x40]), // offset and length sizes 0, base offset size 4, index size 0
        u16(items.length),
        ...items.map(({ id, extents }) => Buffer.concat([u16(id), u16(0), u16(0), u32(base), u16(extents)])),
      ),
    );
  const dataStart = ftyp.length + meta(0).length + 8;
  return Buffer.concat([ftyp, meta(dataStart), box('mdat', Buffer.alloc(dataBytes, 0xab))]);
}
