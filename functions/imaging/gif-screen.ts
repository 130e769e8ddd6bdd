/**
 * A GIF with its logical screen (bytes 6 to 9: the size browsers give the image) set to `width` x `height`, the size
 * its frames were decoded at; the bytes themselves when they say so already. The frames are untouched.
 */
export function fitGifScreen(bytes: Uint8Array, width: number, height: number): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint16(6, true) === width && view.getUint16(8, true) === height) return bytes;
  const fitted = new Uint8Array(bytes);
  const out = new DataView(fitted.buffer);
  out.setUint16(6, width, true);
  out.setUint16(8, height, true);
  return fitted;
}
