/** One ASCII entry of an IFD: its tag and its text (NUL-terminated as cameras write it). */
export interface AsciiEntry {
  tag: number;
  text: string;
}

/** Where an entry's value goes: bytes of its own, or one region every entry of its IFD shares. */
export type ValueLayout = 'own' | 'shared';

export type IfdName = 'ifd0' | 'next' | 'exif' | 'gps' | 'interop';

/** Known ASCII tags of each IFD (`Make`, `ImageUniqueID`, `GPSMapDatum`, `InteroperabilityIndex`), as exif-reader names them. */
export const ASCII_TAG: Record<IfdName, number> = { ifd0: 0x010f, next: 0x010f, exif: 0xa420, gps: 0x0012, interop: 0x0001 };

/**
 * An EXIF block ("Exif\0\0" and a little-endian TIFF) with IFD 0, the next IFD (a thumbnail's), and the Exif, GPS and
 * Interop IFDs, each holding the entries given (IFD 0 and Exif also point to the others). With the `shared` layout,
 * every entry of an IFD points at the same bytes: the first entry's text.
 */
export function exifBlock(entries: Partial<Record<IfdName, AsciiEntry[]>>, layout: ValueLayout = 'own'): Buffer {
  const order: IfdName[] = ['ifd0', 'next', 'exif', 'gps', 'interop'];
  const pointerCount: Record<IfdName, number> = { ifd0: 2, next: 0, exif: 1, gps: 0, interop: 0 };
  const sizes = order.map((name) => 2 + ((entries[name]?.length ?? 0) + pointerCount[name]) * 12 + 4);
  const ifdAt: Record<string, number> = {};
  let offset = 8;
  order.forEach((name, index) => {
    ifdAt[name] = offset;
    offset += sizes[index] ?? 0;
  });
  const values: Buffer[] = [];
  let valuesLength = 0;
  const tiff = Buffer.alloc(offset);
  tiff.write('II', 0, 'latin1');
  tiff.writeUInt16LE(42, 2);
  tiff.writeUInt32LE(8, 4);
  for (const name of order) {
    const at = ifdAt[name] ?? 0;
    const list = entries[name] ?? [];
    const pointers: Array<[number, number]> =
      name === 'ifd0'
        ? [
            [0x8769, ifdAt['exif'] ?? 0],
            [0x8825, ifdAt['gps'] ?? 0],
          ]
        : name === 'exif'
          ? [[0xa005, ifdAt['interop'] ?? 0]]
          : [];
    tiff.writeUInt16LE(list.length + pointers.length, at);
    let entry = at + 2;
    for (const [tag, target] of pointers) {
      tiff.writeUInt16LE(tag, entry);
      tiff.writeUInt16LE(4, entry + 2); // LONG
      tiff.writeUInt32LE(1, entry + 4);
      tiff.writeUInt32LE(target, entry + 8);
      entry += 12;
    }
    let shared: { at: number; length: number } | undefined;
    for (const { tag, text } of list) {
      let value = layout === 'shared' ? shared : undefined;
      if (!value) {
        const bytes = Buffer.from(`${text}\0`, 'latin1');
        value = { at: offset + valuesLength, length: bytes.length };
        values.push(bytes);
        valuesLength += bytes.length;
        shared ??= value;
      }
      tiff.writeUInt16LE(tag, entry);
      tiff.writeUInt16LE(2, entry + 2); // ASCII
      tiff.writeUInt32LE(value.length, entry + 4);
      tiff.writeUInt32LE(value.at, entry + 8);
      entry += 12;
    }
    // IFD 0 is followed by the next IFD; the others end the chain
    tiff.writeUInt32LE(name === 'ifd0' ? (ifdAt['next'] ?? 0) : 0, entry);
  }
  return Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff, ...values]);
}

/** An EXIF block whose IFD 0 holds one ASCII tag, Make, with this text (NULs in it kept, one more after it). */
export function exifWithMake(make: string): Buffer {
  return exifBlock({ ifd0: [{ tag: ASCII_TAG.ifd0, text: make }] });
}
