import { createHash, timingSafeEqual } from 'node:crypto';

/** md5 of bytes, 32 lowercase hex: the `md5` of the contract and the duplicate fingerprint. */
export function md5Hex(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex');
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
