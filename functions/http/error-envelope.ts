import { STATUS_CODES } from 'node:http';
import type { ServiceErrorKind } from '../core/errors';
import type { RequestErrorKind } from './request-errors';

/**
 * The error envelope (`docs/api.md`, section 6): one table of HTTP status and Chevereto code per error kind, and the
 * body every error answer carries, the function's and the gateway's own (the stack builds its gateway responses from
 * these).
 */
/** The one table of HTTP status and Chevereto code per error kind (`docs/api.md`, section 6). */
export const ERROR_STATUS: Record<ServiceErrorKind | RequestErrorKind, { status: number; code: number }> = {
  NoKey: { status: 401, code: 100 },
  InvalidKey: { status: 401, code: 100 },
  KeyNotConfigured: { status: 503, code: 0 },
  InvalidVersion: { status: 404, code: 110 },
  InvalidAction: { status: 404, code: 120 },
  MethodNotAllowed: { status: 405, code: 405 },
  EmptyUploadSource: { status: 400, code: 130 },
  EmptySource: { status: 400, code: 130 },
  TooManySources: { status: 400, code: 130 },
  MalformedBody: { status: 400, code: 130 },
  UnsupportedBody: { status: 400, code: 130 },
  InvalidBase64: { status: 400, code: 120 },
  UnsupportedFormat: { status: 415, code: 613 },
  FileTooBig: { status: 413, code: 400 },
  ImageTooLarge: { status: 413, code: 615 },
  ImageTooThin: { status: 400, code: 614 },
  WidthTooLarge: { status: 400, code: 610 },
  InvalidWidth: { status: 400, code: 610 },
  InvalidExpiration: { status: 400, code: 620 },
  UrlNotAllowed: { status: 400, code: 630 },
  UrlFetchFailed: { status: 400, code: 631 },
  Flooding: { status: 429, code: 130 },
  FetchFailuresExceeded: { status: 429, code: 130 },
  UrlFetchesExceeded: { status: 429, code: 130 },
  Duplicate: { status: 409, code: 101 },
  NotFound: { status: 404, code: 404 },
  InvalidSize: { status: 400, code: 140 },
  UploadUrlsExceeded: { status: 429, code: 130 },
  InvalidUploadToken: { status: 400, code: 141 },
  UploadTokenExpired: { status: 410, code: 142 },
  UploadTokenUsed: { status: 409, code: 143 },
  NothingStaged: { status: 400, code: 144 },
  StagedSizeMismatch: { status: 400, code: 145 },
  Banned: { status: 403, code: 150 },
  Blocked: { status: 403, code: 151 },
  AdultContent: { status: 403, code: 153 },
  InvalidReport: { status: 400, code: 160 },
  ReportsExceeded: { status: 429, code: 130 },
  Forbidden: { status: 403, code: 403 },
  CrossSite: { status: 403, code: 152 },
  DependencyFailed: { status: 503, code: 900 },
};

/** The HTTP reason phrase of a status, the envelope's `status_txt`. */
export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Unknown';
}

/** The envelope's JSON text. */
export function envelopeJson(status: number, code: number, message: string): string {
  return JSON.stringify({ status_code: status, error: { message, code }, status_txt: reasonPhrase(status) });
}

/**
 * The headers of an answer in the envelope, as the function sends them (`responses.ts`) and the edge's own answers
 * copy them (the CloudFront function's 413, the firewall's): JSON, never sniffed, never cached.
 */
export const ENVELOPE_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
  'Content-Type': 'application/json; charset=utf-8',
} as const;
