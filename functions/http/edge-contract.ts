import { formatSize } from '../core/image/formatting';

/**
 * What the edge in front of the function (CloudFront, API Gateway, or the local server standing in for both) and the
 * function agree on. The stack builds the edge from these, the local server enforces them, the router reads them.
 */

/** The header CloudFront adds to every request it sends to the API (the stack sets its value). */
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';

/** The header the distribution's viewer-request function writes the viewer's IP into. */
export const VIEWER_ADDRESS_HEADER = 'x-viewer-address';

/**
 * Media types API Gateway hands to Lambda base64-encoded. Not `*∕*`: urlencoded bodies must reach the function as
 * text, as clients send them (base64 of base64 would cut what they can carry).
 */
export const BINARY_MEDIA_TYPES = ['multipart/form-data', 'image/*', 'application/octet-stream'] as const;

/** Lambda's limit on a synchronous invocation payload: the whole event JSON, body included. */
export const MAX_EVENT_BYTES = 6_291_456;

/**
 * Room in the event kept for everything but the body: CloudFront lets through at most 20,480 bytes of request line
 * and headers, which the event carries twice (`headers` and `multiValueHeaders`, the query likewise), plus the
 * headers CloudFront and API Gateway add and the request context: under 52 KB in the worst case.
 */
const EVENT_OVERHEAD_BYTES = 65_536;

/** The media type of a Content-Type header: `multipart/form-data; boundary=x` -> `multipart/form-data`. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** True when API Gateway base64-encodes a body of this Content-Type (the stack's binary media types). */
export function isBinaryMediaType(contentType: string | undefined): boolean {
  const type = mediaTypeOf(contentType);
  return BINARY_MEDIA_TYPES.some(
    (pattern) => type === pattern || (pattern.endsWith('/*') && type.startsWith(pattern.slice(0, -1))),
  );
}

/**
 * The longest body of this Content-Type that always fits in the function's event, in round 100 KB: a binary body
 * grows by a third in base64 (4.6 MB); a text body (urlencoded) is carried as it is (6.2 MB). Longer requests are
 * answered at the edge with 413.
 */
export function maxBodyBytes(contentType: string | undefined): number {
  const room = MAX_EVENT_BYTES - EVENT_OVERHEAD_BYTES;
  const bytes = isBinaryMediaType(contentType) ? (room / 4) * 3 : room;
  return Math.floor(bytes / 100_000) * 100_000;
}

/** The message of the edge's 413 for a body over `maxBodyBytes`. */
export function requestTooLargeMessage(maxBytes: number): string {
  return `Request too large - max ${formatSize(maxBytes)} per request; larger images: the two-step upload (POST /api/1/upload-url)`;
}

/**
 * How long browsers and shared caches may keep an image file: hours, not the year the stored object's own
 * `Cache-Control` gives (`docs/api.md`, section 4; CloudFront keeps that one: it is purged there on delete and
 * takedown, while a browser's copy cannot be). The edge (CloudFront's response headers policy of `/images/*`, the local
 * server) sends these to viewers instead; `sandbox` keeps any file opened as a document inert.
 */
export const VIEWER_IMAGE_CACHE_SECONDS = 4 * 3600;
export const VIEWER_IMAGE_HEADERS = {
  'Cache-Control': `public, max-age=${VIEWER_IMAGE_CACHE_SECONDS}`,
  'Content-Security-Policy': "default-src 'none'; sandbox",
} as const;
