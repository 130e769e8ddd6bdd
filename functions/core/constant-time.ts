import { createHash, timingSafeEqual } from 'node:crypto';

/** Compares two secrets in time that depends on neither (both are hashed to the same length first). */
export function constantTimeEquals(given: string, expected: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
