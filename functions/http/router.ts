import { isIP } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { constantTimeEquals } from '../core/hashes';
import { UploadError } from '../core/errors';
import { objectUrl } from '../core/image-object';
import { METRIC, type Metrics } from '../core/metrics';
import type { Logger } from '../core/ports';
import type { ResponseFormat } from '../core/upload-request';
import type { UploadService } from '../core/upload-service';
import { headerValue, queryParameters } from './api-event';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from './edge-contract';
import { formatFromQuery, parseUploadRequest } from './parse-upload-request';
import { errorResponse, HTML_TYPE, JSON_TYPE, respond, uploadResponse } from './responses';
import { deleteConfirmPage, deletedPage, escapeHtml, homePage, notFoundPage, pageSecurityHeaders, viewerPage } from './pages';

export interface RouterSettings {
  publicUrl: string;
  timeZone: string;
  maxUploadBytes: number;
  corsOrigins: readonly string[];
  /** Serve only requests that carry the distribution's secret origin header; the client IP is then CloudFront's. */
  originVerify: boolean;
}

export interface RouterDeps {
  service: UploadService;
  settings: RouterSettings;
  /** The value CloudFront sends in `X-Origin-Verify`. */
  originSecret: () => Promise<string | undefined>;
  logger: Logger;
  metrics: Metrics;
}

export type Router = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

const UPLOAD_METHODS = ['GET', 'POST'];

/** Routes an API Gateway event to the upload operation or a page, and logs one line for it. */
export function createRouter(deps: RouterDeps): Router {
  const { logger, settings } = deps;

  async function route(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
    const segments = event.path.split('/').filter((segment) => segment !== '');
    if (settings.originVerify && !(await cameThroughDistribution(event))) {
      return errorResponse(new UploadError('Forbidden', 'Forbidden'), 'json', logger);
    }
    if (segments.length === 0 && (event.httpMethod === 'GET' || event.httpMethod === 'HEAD')) {
      return respond(200, HTML_TYPE, homePage(settings.publicUrl), pageSecurityHeaders(settings.publicUrl));
    }
    if (segments[0] === 'api') return api(event, segments);
    if (segments[0] === 'image' && segments.length === 2) return viewer(event, segments[1] ?? '');
    if (segments[0] === 'image' && segments.length === 4 && segments[2] === 'delete') {
      return deleteLink(event, segments[1] ?? '', segments[3] ?? '');
    }
    return htmlNotFound();
  }

  async function api(event: APIGatewayProxyEvent, segments: string[]): Promise<APIGatewayProxyResult> {
    let format: ResponseFormat = formatFromQuery(event);
    const cors = corsHeaders(event);
    try {
      if (segments[1] !== '1') throw new UploadError('InvalidVersion', 'Invalid API version.');
      if (segments[2] !== 'upload' || segments.length > 3) throw new UploadError('InvalidAction', 'Invalid API action');
      if (event.httpMethod === 'OPTIONS' && cors) return respond(204, undefined, '', { ...cors, ...PREFLIGHT_HEADERS });
      if (!UPLOAD_METHODS.includes(event.httpMethod)) throw new UploadError('MethodNotAllowed', 'Method not allowed');
      const request = await parseUploadRequest(event, { maxUploadBytes: settings.maxUploadBytes }, clientIp(event));
      format = request.format;
      const image = await deps.service.upload(request);
      return withHeaders(uploadResponse(image, request.imgbb, format), cors);
    } catch (error) {
      const response = errorResponse(error, format, logger);
      countRefusal(error, response.statusCode);
      if (error instanceof UploadError && error.kind === 'MethodNotAllowed') {
        response.headers = { ...response.headers, Allow: cors ? 'GET, POST, OPTIONS' : 'GET, POST' };
      }
      return withHeaders(response, cors);
    }
  }

  async function viewer(event: APIGatewayProxyEvent, segment: string): Promise<APIGatewayProxyResult> {
    if (event.httpMethod !== 'GET' && event.httpMethod !== 'HEAD') {
      return errorResponse(new UploadError('MethodNotAllowed', 'Method not allowed'), 'json', logger);
    }
    // `/image/{anything}.{id_encoded}` as well as `/image/{id_encoded}`
    const idEncoded = segment.slice(segment.lastIndexOf('.') + 1);
    try {
      const record = await deps.service.view(idEncoded);
      const html = viewerPage({
        record,
        url: objectUrl(settings.publicUrl, record.original.key),
        displayUrl: objectUrl(settings.publicUrl, record.medium.key),
        timeZone: settings.timeZone,
      });
      return respond(200, HTML_TYPE, html, pageSecurityHeaders(settings.publicUrl));
    } catch (error) {
      if (error instanceof UploadError && error.kind === 'NotFound') return htmlNotFound();
      const failed = errorResponse(error, 'txt', logger);
      return respond(failed.statusCode, HTML_TYPE, `<!doctype html><title>Error</title><p>${escapeHtml(failed.body)}</p>`);
    }
  }

  /** GET shows a confirmation and deletes nothing; POST deletes. JSON for clients that ask for it. */
  async function deleteLink(event: APIGatewayProxyEvent, idEncoded: string, token: string): Promise<APIGatewayProxyResult> {
    const json = (headerValue(event, 'accept') ?? '').toLowerCase().includes('application/json');
    const format: ResponseFormat = json ? 'json' : 'txt';
    try {
      if (event.httpMethod === 'GET' || event.httpMethod === 'HEAD') {
        const record = await deps.service.deletable(idEncoded, token);
        const html = deleteConfirmPage(record, objectUrl(settings.publicUrl, record.medium.key));
        return respond(200, HTML_TYPE, html, pageSecurityHeaders(settings.publicUrl));
      }
      if (event.httpMethod !== 'POST') throw new UploadError('MethodNotAllowed', 'Method not allowed');
      const outcome = await deps.service.delete(idEncoded, token);
      const message = outcome === 'deleted' ? 'image deleted' : 'upload deleted; the image stays for its other upload';
      if (json)
        return respond(200, JSON_TYPE, JSON.stringify({ status_code: 200, success: { message, code: 200 }, status_txt: 'OK' }));
      return respond(200, HTML_TYPE, deletedPage(outcome), pageSecurityHeaders(settings.publicUrl));
    } catch (error) {
      if (!json && error instanceof UploadError && error.kind === 'NotFound') return htmlNotFound();
      return errorResponse(error, format, logger);
    }
  }

  /** A failed upload in the metrics: refused (4xx) or failed (5xx), and by kind. */
  function countRefusal(error: unknown, status: number): void {
    const kind = error instanceof UploadError ? error.kind : 'Unexpected';
    deps.metrics.add(status >= 500 ? METRIC.uploadFailed : METRIC.uploadRefused, 'Count', 1);
    deps.metrics.add(METRIC.uploadErrors, 'Count', 1, { name: 'Kind', value: kind });
    if (kind === 'Flooding') deps.metrics.add(METRIC.floodRefusals, 'Count', 1);
    if (kind === 'UrlFetchFailed') deps.metrics.add(METRIC.urlFetchFailures, 'Count', 1);
  }

  /** The secret origin header CloudFront adds, compared in constant time; missing secret or header: no. */
  async function cameThroughDistribution(event: APIGatewayProxyEvent): Promise<boolean> {
    const secret = await deps.originSecret();
    const given = headerValue(event, ORIGIN_VERIFY_HEADER);
    return secret !== undefined && given !== undefined && constantTimeEquals(given, secret);
  }

  /**
   * The client: API Gateway's source IP, or, behind the distribution (proven by the origin header), the viewer
   * address CloudFront writes into `X-Viewer-Address` (the stack's viewer-request function, which overwrites whatever
   * a client sent in it). Never `X-Forwarded-For`, which any client can write.
   */
  function clientIp(event: APIGatewayProxyEvent): string {
    const sourceIp = event.requestContext.identity.sourceIp;
    if (!settings.originVerify) return sourceIp;
    return viewerAddressIp(headerValue(event, VIEWER_ADDRESS_HEADER)) ?? sourceIp;
  }

  function htmlNotFound(): APIGatewayProxyResult {
    return respond(404, HTML_TYPE, notFoundPage(), pageSecurityHeaders(settings.publicUrl));
  }

  /** CORS headers for an allowed browser origin; undefined when CORS is off or the origin is not allowed. */
  function corsHeaders(event: APIGatewayProxyEvent): Record<string, string> | undefined {
    const origin = headerValue(event, 'origin');
    if (!origin || settings.corsOrigins.length === 0) return undefined;
    const allowed = settings.corsOrigins.includes('*') || settings.corsOrigins.includes(origin);
    return allowed ? { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' } : undefined;
  }

  return async (event) => {
    const startedMs = Date.now();
    // Routes answer their own errors; this catches what escapes them (the origin check's SSM read, a bug), so that
    // Lambda never fails the invocation and the client always gets the envelope.
    const response = await route(event).catch((error: unknown) => errorResponse(error, 'json', logger));
    logger.info('request', {
      method: event.httpMethod,
      path: redactedPath(event.path),
      query: redactedQuery(event),
      status: response.statusCode,
      durationMs: Date.now() - startedMs,
      clientIp: clientIp(event),
    });
    return response;
  };
}

/** A viewer address: an IP, or `ip:port` as CloudFront writes it (`203.0.113.5:443`, `2001:db8::1:443`). */
export function viewerAddressIp(header: string | undefined): string | undefined {
  const value = (header?.trim() ?? '').replace(/^\[(.*)\](:\d+)?$/, '$1');
  if (isIP(value)) return value;
  const colon = value.lastIndexOf(':');
  const ip = colon > 0 ? value.slice(0, colon) : '';
  return isIP(ip) ? ip : undefined;
}

const PREFLIGHT_HEADERS = {
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type, X-API-Key',
  'Access-Control-Max-Age': '600',
};

function withHeaders(response: APIGatewayProxyResult, headers: Record<string, string> | undefined): APIGatewayProxyResult {
  return headers ? { ...response, headers: { ...response.headers, ...headers } } : response;
}

/**
 * Names of query parameters whose values never reach a log: every spelling of the key (`key`, ` key`, `api_key`,
 * `apiKey`, any case) and anything else that looks like a credential. Catching too much costs nothing.
 */
const SECRET_PARAMETER = /key|token|secret|pass|auth|sig/i;
const REDACTED = '[redacted]';

/** The query for the log, with secrets replaced and long values (base64 sources) cut. */
function redactedQuery(event: APIGatewayProxyEvent): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of queryParameters(event)) {
    query[name] = SECRET_PARAMETER.test(name)
      ? REDACTED
      : value.length > 200
        ? `${value.slice(0, 40)}…(${value.length} chars)`
        : value;
  }
  return query;
}

/** The path for the log: a delete link's token is a secret (only its hash is stored), so it is replaced. */
export function redactedPath(path: string): string {
  const segments = path.split('/');
  // ['', 'image', '{id}', 'delete', '{token}', ...]
  if (segments[1] === 'image' && segments[3] === 'delete' && segments.length > 4) segments[4] = REDACTED;
  return segments.join('/');
}
