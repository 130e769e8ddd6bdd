import { isIP } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { UploadError } from '../core/errors';
import { constantTimeEquals } from '../core/hashes';
import type { RefusalCounter } from '../core/daily-stats';
import type { ImageAccess } from '../core/image-access';
import { redactedPath, routeOf } from '../core/links';
import { METRIC, type Metrics } from '../core/metrics';
import type { Logger } from '../core/ports';
import type { ResponseFormat } from '../core/upload-request';
import type { UploadService } from '../core/upload-service';
import { headerValue, queryParameters } from './api-event';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from './edge-contract';
import { deleteConfirmPage, deletedPage, homePage, notFoundPage, viewerPage } from './pages';
import { formatFromQuery, parseUploadRequest, parseUploadUrlRequest } from './parse-upload-request';
import { RequestError } from './request-errors';
import {
  deletedResponse,
  errorPageResponse,
  errorResponse,
  openapiResponse,
  pageResponse,
  respond,
  uploadResponse,
  uploadUrlResponse,
} from './responses';

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
  access: ImageAccess;
  settings: RouterSettings;
  /** The value CloudFront sends in `X-Origin-Verify`. */
  originSecret: () => Promise<string | undefined>;
  logger: Logger;
  metrics: Metrics;
  /** Refused uploads per day, for `npm run admin -- stats`. */
  refusals?: RefusalCounter;
}

export type Router = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

const UPLOAD_METHODS = ['GET', 'POST'];
const READ_METHODS = ['GET', 'HEAD'];

/** Routes an API Gateway event to the upload operation or a page, and logs one line for it. */
export function createRouter(deps: RouterDeps): Router {
  const { logger, settings } = deps;
  const page = (status: number, html: string): APIGatewayProxyResult => pageResponse(status, html, settings.publicUrl);

  async function route(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
    if (settings.originVerify && !(await cameThroughDistribution(event))) {
      return errorResponse(new RequestError('Forbidden', 'Forbidden'), 'json', logger);
    }
    const target = routeOf(event.path);
    switch (target.page) {
      case 'home':
        return READ_METHODS.includes(event.httpMethod) ? page(200, homePage(settings.publicUrl)) : page(404, notFoundPage());
      case 'api':
        return api(event, target);
      case 'viewer':
        return viewer(event, target.idEncoded);
      case 'delete':
        return deleteLink(event, target.idEncoded, target.token);
      case 'none':
        return page(404, notFoundPage());
    }
  }

  async function api(
    event: APIGatewayProxyEvent,
    target: { version: string | undefined; action: string | undefined; extra: boolean },
  ): Promise<APIGatewayProxyResult> {
    let format: ResponseFormat = formatFromQuery(event);
    const cors = corsHeaders(event);
    /** The key the request carried, once it is read: a refusal of it counts apart from anonymous ones. */
    const given: { key?: string | undefined } = {};
    try {
      if (target.version !== '1') throw new RequestError('InvalidVersion', 'Invalid API version.');
      if (target.action === 'openapi.json' && !target.extra) {
        if (READ_METHODS.includes(event.httpMethod)) return openapiResponse(settings.publicUrl);
        const refused = errorResponse(new RequestError('MethodNotAllowed', 'Method not allowed'), format, logger);
        return { ...refused, headers: { ...refused.headers, Allow: 'GET, HEAD' } };
      }
      if (target.action === 'upload-url' && !target.extra) return await uploadUrl(event, cors, given);
      if (target.action !== 'upload' || target.extra) throw new RequestError('InvalidAction', 'Invalid API action');
      if (event.httpMethod === 'OPTIONS' && cors) return respond(204, undefined, '', { ...cors, ...PREFLIGHT_HEADERS });
      if (!UPLOAD_METHODS.includes(event.httpMethod)) throw new RequestError('MethodNotAllowed', 'Method not allowed');
      refuseCrossSite(event);
      const request = await parseUploadRequest(event, { maxUploadBytes: settings.maxUploadBytes }, clientIp(event));
      given.key = request.key;
      format = request.format;
      const image = await deps.service.upload(request);
      return withHeaders(uploadResponse(image, request.imgbb, format), cors);
    } catch (error) {
      const response = errorResponse(error, format, logger);
      await countRefusal(error, response.statusCode, given.key);
      if (error instanceof RequestError && error.kind === 'MethodNotAllowed') {
        response.headers = { ...response.headers, Allow: cors ? 'GET, POST, OPTIONS' : 'GET, POST' };
      }
      return withHeaders(response, cors);
    }
  }

  /** Step 1 of a two-step upload (POST only): an upload URL to put the bytes to, and the token of step 2. */
  async function uploadUrl(
    event: APIGatewayProxyEvent,
    cors: Record<string, string> | undefined,
    given: { key?: string | undefined },
  ): Promise<APIGatewayProxyResult> {
    if (event.httpMethod === 'OPTIONS' && cors) return respond(204, undefined, '', { ...cors, ...PREFLIGHT_HEADERS });
    if (event.httpMethod !== 'POST') {
      const refused = errorResponse(new RequestError('MethodNotAllowed', 'Method not allowed'), 'json', logger);
      return withHeaders({ ...refused, headers: { ...refused.headers, Allow: 'POST' } }, cors);
    }
    refuseCrossSite(event);
    const request = await parseUploadUrlRequest(event, { maxUploadBytes: settings.maxUploadBytes }, clientIp(event));
    given.key = request.key;
    return withHeaders(uploadUrlResponse(await deps.service.createUploadUrl(request)), cors);
  }

  async function viewer(event: APIGatewayProxyEvent, idEncoded: string): Promise<APIGatewayProxyResult> {
    if (!READ_METHODS.includes(event.httpMethod)) {
      return errorResponse(new RequestError('MethodNotAllowed', 'Method not allowed'), 'json', logger);
    }
    try {
      return page(200, viewerPage(await deps.access.view(idEncoded), settings.timeZone, Date.now()));
    } catch (error) {
      if (error instanceof UploadError && error.kind === 'NotFound') return page(404, notFoundPage());
      return errorPageResponse(error, settings.publicUrl, logger);
    }
  }

  /** GET shows a confirmation and deletes nothing; POST deletes. JSON for clients that ask for it. */
  async function deleteLink(event: APIGatewayProxyEvent, idEncoded: string, token: string): Promise<APIGatewayProxyResult> {
    const json = (headerValue(event, 'accept') ?? '').toLowerCase().includes('application/json');
    try {
      if (READ_METHODS.includes(event.httpMethod))
        return page(200, deleteConfirmPage(await deps.access.deletable(idEncoded, token)));
      if (event.httpMethod !== 'POST') throw new RequestError('MethodNotAllowed', 'Method not allowed');
      const outcome = await deps.access.delete(idEncoded, token);
      return json ? deletedResponse(outcome) : page(200, deletedPage(outcome));
    } catch (error) {
      if (!json && error instanceof UploadError && error.kind === 'NotFound') return page(404, notFoundPage());
      return errorResponse(error, json ? 'json' : 'txt', logger);
    }
  }

  /**
   * A failed upload in the metrics: refused (4xx) or failed (5xx), and by kind; and a refusal in the day's figures,
   * apart when the request did not carry the key (anyone can send those: they would drown what users meet).
   */
  async function countRefusal(error: unknown, status: number, key: string | undefined): Promise<void> {
    const kind = error instanceof UploadError || error instanceof RequestError ? error.kind : 'Unexpected';
    deps.metrics.add(status >= 500 ? METRIC.uploadFailed : METRIC.uploadRefused, 'Count', 1);
    if (status < 500 && deps.refusals) deps.refusals.count(await deps.service.holdsKey(key));
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

  /** Whether `CORS_ORIGINS` lets pages of this origin call the API. */
  function originAllowed(origin: string): boolean {
    return settings.corsOrigins.includes('*') || settings.corsOrigins.includes(origin);
  }

  /** CORS headers for an allowed browser origin; undefined when CORS is off or the origin is not allowed. */
  function corsHeaders(event: APIGatewayProxyEvent): Record<string, string> | undefined {
    const origin = headerValue(event, 'origin');
    if (!origin || !originAllowed(origin)) return undefined;
    return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
  }

  /**
   * Refuses an upload a browser sends for a page of another site (an `<img src>` or an auto-submitted form there
   * would upload from each visitor's address, past a ban of the page's author, against the visitors' flood limits):
   * browsers mark it with `Sec-Fetch-Site: cross-site` or `same-site`, and a POST with its page's `Origin`. Pages of
   * an origin in `CORS_ORIGINS` may; tools (curl, ShareX, PicGo, the npm clients) send neither header.
   */
  function refuseCrossSite(event: APIGatewayProxyEvent): void {
    const origin = headerValue(event, 'origin');
    if (origin !== undefined && originAllowed(origin)) return;
    const site = headerValue(event, 'sec-fetch-site')?.trim().toLowerCase();
    const foreign = origin !== undefined && origin !== new URL(settings.publicUrl).origin;
    if (site === 'cross-site' || site === 'same-site' || foreign)
      throw new RequestError(
        'CrossSite',
        'Cross-site upload refused: web pages of other sites may not upload here (the operator allows origins with CORS_ORIGINS)',
      );
  }

  return async (event) => {
    const startedMs = Date.now();
    // Routes answer their own errors; this catches what escapes them (the origin check's SSM read, a bug), so that
    // Lambda never fails the invocation and the client always gets the envelope.
    const response = await route(event).catch((error: unknown) => errorResponse(error, 'json', logger));
    await deps.refusals?.writeIfDue();
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

/** The query for the log, with secrets replaced and long values (base64 sources) cut. */
function redactedQuery(event: APIGatewayProxyEvent): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of queryParameters(event)) {
    query[name] = SECRET_PARAMETER.test(name)
      ? '[redacted]'
      : value.length > 200
        ? `${value.slice(0, 40)}…(${value.length} chars)`
        : value;
  }
  return query;
}
