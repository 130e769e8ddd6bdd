import { createHash, timingSafeEqual } from 'node:crypto';
import { nextTurn } from './turns';

/** md5 of bytes, 32 lowercase hex: the Image object's `md5` (`docs/api.md`, section 3), the duplicates' fingerprint. */
export function md5Hex(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex');
}

/** Bytes hashed between two turns of the event loop: a few ms of md5 (about 6 ms here), never a held thread. */
const MD5_SLICE_BYTES = 4 * 1024 * 1024;

/**
 * md5 of bytes of any size, the event loop turning between slices of `MD5_SLICE_BYTES`: a 32 MB upload's md5 took
 * 52 ms of the request's thread at once (`docs/performance.md`, "The handler's own CPU").
 */
export async function md5HexInTurns(bytes: Uint8Array): Promise<string> {
  if (bytes.length <= MD5_SLICE_BYTES) return md5Hex(bytes);
  const hash = createHash('md5');
  for (let at = 0; at < bytes.length; at += MD5_SLICE_BYTES) {
    if (at > 0) await nextTurn();
    hash.update(bytes.subarray(at, at + MD5_SLICE_BYTES));
  }
  return hash.digest('hex');
}

/** sha256 of a text, 64 lowercase hex. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Compares two secrets in time that depends on neither (both are hashed to the same length first). */
export function constantTimeEquals(given: string, expected: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
