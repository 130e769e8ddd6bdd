import type { APIGatewayProxyResult } from 'aws-lambda';
import { ServiceError } from '../core/errors';
import { ENVELOPE_HEADERS, envelopeJson, ERROR_STATUS } from './error-envelope';
import { RequestError } from './request-errors';
import type { ImageObject } from '../core/image/image-object';
import type { Logger } from '../core/ports';
import type { ResponseFormat } from '../core/upload/upload-request';
import type { UploadUrl } from '../core/upload/staged-uploads';
import openapiDocument from './openapi.json';
import { PAGE_STYLE_SOURCE, siteOf } from './page-shell';
import { errorPage } from './pages';
import { PAGE_SCRIPT_SOURCE } from './viewer-page';

export { ERROR_STATUS } from './error-envelope';

type Headers = Record<string, string>;

const BASE_HEADERS: Headers = {
  'X-Content-Type-Options': ENVELOPE_HEADERS['X-Content-Type-Options'],
  'Cache-Control': ENVELOPE_HEADERS['Cache-Control'],
};
const JSON_TYPE = ENVELOPE_HEADERS['Content-Type'];
const TEXT_TYPE = 'text/plain; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';

export function respond(
  status: number,
  contentType: string | undefined,
  body: string,
  headers: Headers = {},
): APIGatewayProxyResult {
  return {
    statusCode: status,
    headers: { ...BASE_HEADERS, ...(contentType ? { 'Content-Type': contentType } : {}), ...headers },
    body,
  };
}

/** The error envelope; `text/plain` with the message for txt and redirect formats. */
export function errorEnvelope(
  status: number,
  code: number,
  message: string,
  format: ResponseFormat,
  headers: Headers = {},
): APIGatewayProxyResult {
  if (format !== 'json') return respond(status, TEXT_TYPE, message, headers);
  return respond(status, JSON_TYPE, envelopeJson(status, code, message), headers);
}

/** Turns any error into its response; 5xx details go to the log, never to the client. */
export function errorResponse(error: unknown, format: ResponseFormat, logger: Logger): APIGatewayProxyResult {
  if (error instanceof ServiceError || error instanceof RequestError) {
    const { status, code } = ERROR_STATUS[error.kind];
    if (status >= 500) logger.error('request failed', { kind: error.kind, error });
    const retryAfter = error instanceof ServiceError ? error.retryAfterSeconds : undefined;
    const headers: Headers = retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) };
    return errorEnvelope(status, code, error.message, format, headers);
  }
  logger.error('unexpected error', { error });
  return errorEnvelope(500, 500, 'Internal server error', format);
}

/** What a page's CSP allows beyond every page's: its script (by hash), where it may connect, its worker and manifest. */
export interface PageSources {
  script?: string;
  /** Images from elsewhere than the site: the upload page's previews of the files chosen (`blob:`). */
  img?: string;
  connect?: string;
  worker?: string;
  manifest?: string;
}

/**
 * Pages allow their own stylesheet and script (by hash: no other inline style or script runs, whatever an upload's
 * title holds), images from the public base URL, forms to themselves, and no framing (`X-Frame-Options` too, for
 * browsers that know no `frame-ancestors`).
 */
export function pageSecurityHeaders(publicUrl: string, more: PageSources = {}): Headers {
  const origin = new URL(publicUrl).origin;
  const { script = PAGE_SCRIPT_SOURCE, img, connect, worker, manifest } = more;
  const extra = [
    connect === undefined ? '' : `connect-src ${connect}; `,
    worker === undefined ? '' : `worker-src ${worker}; `,
    manifest === undefined ? '' : `manifest-src ${manifest}; `,
  ].join('');
  return {
    'Content-Security-Policy': `default-src 'none'; img-src ${origin}${img === undefined ? '' : ` ${img}`}; style-src ${PAGE_STYLE_SOURCE}; script-src ${script}; ${extra}form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  };
}

/** An HTML page with the pages' security headers (and what this page's CSP allows beyond them). */
export function pageResponse(status: number, html: string, publicUrl: string, more: PageSources = {}): APIGatewayProxyResult {
  return respond(status, HTML_TYPE, html, pageSecurityHeaders(publicUrl, more));
}

/** The HTML answer of a page request that failed (a store failed): the status of the error, its message. */
export function errorPageResponse(
  error: unknown,
  settings: { publicUrl: string; siteName?: string | undefined },
  logger: Logger,
): APIGatewayProxyResult {
  const failed = errorResponse(error, 'txt', logger);
  return pageResponse(failed.statusCode, errorPage(siteOf(settings), failed.body), settings.publicUrl);
}

/** The JSON answer of a delete link for clients that ask for JSON. */
export function deletedResponse(outcome: 'deleted' | 'released'): APIGatewayProxyResult {
  const message = outcome === 'deleted' ? 'image deleted' : 'upload deleted; the image stays for its other upload';
  return respond(200, JSON_TYPE, JSON.stringify({ status_code: 200, success: { message, code: 200 }, status_txt: 'OK' }));
}

/** A successful upload in the format the client asked for. */
export function uploadResponse(image: ImageObject, imgbb: boolean, format: ResponseFormat): APIGatewayProxyResult {
  if (format === 'txt') return respond(200, TEXT_TYPE, image.url);
  if (format === 'redirect') return respond(302, undefined, '', { Location: image.url_viewer });
  const success = { message: 'image uploaded', code: 200 };
  const body = imgbb
    ? { status_code: 200, status: 200, success, data: { ...image, id: image.id_encoded }, status_txt: 'OK' }
    : { status_code: 200, success, image, status_txt: 'OK' };
  return respond(200, JSON_TYPE, JSON.stringify(body));
}

/**
 * The OpenAPI document of this interface (`docs/openapi.yaml`, as JSON), its `servers` set to the public base URL;
 * readable from any origin (it is public, and API explorers fetch it from their own pages).
 */
export function openapiResponse(publicUrl: string): APIGatewayProxyResult {
  const document = { ...openapiDocument, servers: [{ url: publicUrl }] };
  return respond(200, JSON_TYPE, JSON.stringify(document), {
    'Access-Control-Allow-Origin': '*',
    'Cache-Control': 'public, max-age=300',
  });
}

/** The answer of step 1 of a two-step upload (`docs/large-uploads.md`). */
export function uploadUrlResponse(upload: UploadUrl): APIGatewayProxyResult {
  const body = {
    status_code: 200,
    success: { message: 'upload url created', code: 200 },
    upload: {
      url: upload.url,
      method: upload.method,
      headers: upload.headers,
      token: upload.token,
      max_bytes: upload.maxBytes,
      expires_at: new Date(upload.expiresAtMs).toISOString(),
    },
    status_txt: 'OK',
  };
  return respond(200, JSON_TYPE, JSON.stringify(body));
}

/** The response with these headers added; as it is without any. */
export function withHeaders(response: APIGatewayProxyResult, headers: Record<string, string> | undefined): APIGatewayProxyResult {
  return headers ? { ...response, headers: { ...response.headers, ...headers } } : response;
}
