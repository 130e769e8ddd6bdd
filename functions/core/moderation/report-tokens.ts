import { createHmac, timingSafeEqual } from 'node:crypto';
import { floodSubject } from '../flood';

/**
 * The viewer page's report form carries a token only that page can have (`docs/security.md`, "Reports"): an HMAC of
 * the image, the client it was served to (an IPv4 address, or an IPv6 /64) and the time, under a key derived from the
 * deployment's secret. A browser too old to send `Sec-Fetch-Site` (Safari before 16.4, Firefox before 90), whose form
 * arrives with `Origin: null` under the pages' no-referrer policy, is let through by it; another site cannot forge
 * one, nor use one it fetched for itself, which names its own address.
 */

/** How long a served form's token is accepted. */
export const REPORT_TOKEN_MAX_AGE_MS = 24 * 3_600_000;

/** A token for the report form of image `idEncoded`, served to `clientIp` at `nowMs`. */
export function reportToken(secret: string, idEncoded: string, clientIp: string, nowMs: number): string {
  const issued = Math.floor(nowMs / 1000);
  return `${issued}.${mac(secret, idEncoded, clientIp, issued)}`;
}

/** Whether a token is one served with the form of this image to this client, not longer ago than its maximum age. */
export function isReportToken(
  secret: string,
  token: string | null | undefined,
  idEncoded: string,
  clientIp: string,
  nowMs: number,
): boolean {
  const match = /^(\d{1,12})\.([0-9a-f]{64})$/.exec(token ?? '');
  if (!match) return false;
  const issued = Number(match[1]);
  const ageMs = nowMs - issued * 1000;
  if (ageMs < -60_000 || ageMs > REPORT_TOKEN_MAX_AGE_MS) return false;
  const expected = Buffer.from(mac(secret, idEncoded, clientIp, issued), 'hex');
  return timingSafeEqual(Buffer.from(match[2] ?? '', 'hex'), expected);
}

function mac(secret: string, idEncoded: string, clientIp: string, issued: number): string {
  const key = createHmac('sha256', secret).update('report-form-token').digest();
  return createHmac('sha256', key)
    .update(`${idEncoded}\n${floodSubject(clientIp)}\n${issued}`)
    .digest('hex');
}
