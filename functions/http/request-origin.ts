import { isIP } from 'node:net';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { constantTimeEquals, sha256Hex } from '../core/hashes';
import { headerValue } from './api-event';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from './edge-contract';
import { RequestError } from './request-errors';

/**
 * Where a request comes from, as the router's first steps read it: through the distribution or around it, from which
 * client address, and from which browser page (its origin, whether another site's).
 */
export interface OriginSettings {
  publicUrl: string;
  corsOrigins: readonly string[];
  /** Serve only requests that carry the distribution's secret origin header; the client IP is then CloudFront's. */
  originVerify: boolean;
}

/** The origin header values the function accepts (`docs/deployment.md`, "Rotating the origin secret"). */
export interface OriginSecrets {
  /** SHA-256 (hex) of the secret CloudFront was deployed with (`ORIGIN_SECRET_SHA256`), whatever the parameter says. */
  deployedSha256: string | undefined;
  /** The `/origin-secret` parameter's secrets: the one CloudFront sends, and during a rotation the one it sent. */
  listed: () => Promise<readonly string[]>;
}

/**
 * The secret origin header CloudFront adds, compared in constant time: the deployed secret's digest first (no read),
 * then the parameter's secrets. Missing header, or no secret matches: no.
 */
export async function cameThroughDistribution(event: APIGatewayProxyEvent, secrets: OriginSecrets): Promise<boolean> {
  const given = headerValue(event, ORIGIN_VERIFY_HEADER);
  if (given === undefined || given === '') return false;
  if (secrets.deployedSha256 !== undefined && constantTimeEquals(sha256Hex(given), secrets.deployedSha256)) return true;
  return (await secrets.listed()).some((secret) => constantTimeEquals(given, secret));
}

/**
 * The client: API Gateway's source IP, or, behind the distribution (proven by the origin header), the viewer address
 * CloudFront writes into `X-Viewer-Address` (the stack's viewer-request function, which overwrites whatever a client
 * sent in it). Never `X-Forwarded-For`, which any client can write.
 */
export function clientIp(event: APIGatewayProxyEvent, settings: Pick<OriginSettings, 'originVerify'>): string {
  const sourceIp = event.requestContext.identity.sourceIp;
  if (!settings.originVerify) return sourceIp;
  return viewerAddressIp(headerValue(event, VIEWER_ADDRESS_HEADER)) ?? sourceIp;
}

/** A viewer address: an IP, or `ip:port` as CloudFront writes it (`203.0.113.5:443`, `2001:db8::1:443`). */
export function viewerAddressIp(header: string | undefined): string | undefined {
  const value = (header?.trim() ?? '').replace(/^\[(.*)\](:\d+)?$/, '$1');
  if (isIP(value)) return value;
  const colon = value.lastIndexOf(':');
  const ip = colon > 0 ? value.slice(0, colon) : '';
  return isIP(ip) ? ip : undefined;
}

/** Whether `CORS_ORIGINS` lets pages of this origin call the API. */
function originAllowed(origin: string, settings: Pick<OriginSettings, 'corsOrigins'>): boolean {
  return settings.corsOrigins.includes('*') || settings.corsOrigins.includes(origin);
}

/** CORS headers for an allowed browser origin; undefined when CORS is off or the origin is not allowed. */
export function corsHeaders(
  event: APIGatewayProxyEvent,
  settings: Pick<OriginSettings, 'corsOrigins'>,
): Record<string, string> | undefined {
  const origin = headerValue(event, 'origin');
  if (!origin || !originAllowed(origin, settings)) return undefined;
  return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
}

/**
 * Refuses an upload a browser sends for a page of another site (an `<img src>` or an auto-submitted form there
 * would upload from each visitor's address, past a ban of the page's author, against the visitors' flood limits):
 * browsers mark it with `Sec-Fetch-Site: cross-site` or `same-site`, and a POST with its page's `Origin`. Pages of
 * an origin in `CORS_ORIGINS` may; tools (curl, ShareX, PicGo, the npm clients) send neither header. A form of this
 * site's own pages (a report) is `same-origin`, whatever its `Origin` (`null` under the pages' no-referrer policy).
 */
export function refuseCrossSite(
  event: APIGatewayProxyEvent,
  settings: Pick<OriginSettings, 'corsOrigins' | 'publicUrl'>,
  what: 'upload' | 'report' = 'upload',
): void {
  const origin = headerValue(event, 'origin');
  if (origin !== undefined && originAllowed(origin, settings)) return;
  const site = headerValue(event, 'sec-fetch-site')?.trim().toLowerCase();
  if (site === 'same-origin') return;
  const foreign = origin !== undefined && origin !== new URL(settings.publicUrl).origin;
  if (site === 'cross-site' || site === 'same-site' || foreign) throw new RequestError('CrossSite', CROSS_SITE_REFUSALS[what]);
}

const CROSS_SITE_REFUSALS = {
  upload:
    'Cross-site upload refused: web pages of other sites may not upload here (the operator allows origins with CORS_ORIGINS)',
  report: "Cross-site report refused: only this site's own pages may send reports",
};
