/** An EXIF block ("Exif\0\0" and a little-endian TIFF) whose first IFD holds one ASCII tag, Make, with these bytes. */
export function exifWithMake(make: Buffer): Buffer {
  const tiff = Buffer.alloc(26);
  tiff.write('II', 0, 'latin1');
  tiff.writeUInt16LE(42, 2);
  tiff.writeUInt32LE(8, 4); // the first IFD
  tiff.writeUInt16LE(1, 8); // one entry: Make, ASCII, its length, its bytes after the IFD
  tiff.writeUInt16LE(0x010f, 10);
  tiff.writeUInt16LE(2, 12);
  tiff.writeUInt32LE(make.length, 14);
  tiff.writeUInt32LE(tiff.length, 18);
  tiff.writeUInt32LE(0, 22); // no next IFD
  return Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff, make]);
}
