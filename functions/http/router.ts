import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ServiceError } from '../core/errors';
import type { RefusalCounter } from '../core/daily-stats';
import type { ImageAccess } from '../core/lifecycle/image-access';
import { isReportToken, reportToken } from '../core/moderation/report-tokens';
import type { ImageReports } from '../core/moderation/reports';
import { redactedPath, routeOf, UPLOAD_PAGE, type Route } from '../core/links';
import { METRIC, type Metrics } from '../core/metrics';
import type { Logger } from '../core/ports';
import type { ResponseFormat } from '../core/upload/upload-request';
import type { UploadService } from '../core/upload/upload-service';
import { bodyBytes, headerValue, queryParameters } from './api-event';
import { deleteConfirmPage, deletedPage, homePage, notFoundPage, reportedPage, viewerPage } from './pages';
import { formatFromQuery, parseUploadRequest, parseUploadUrlRequest } from './parse-upload-request';
import { MethodNotAllowed, RequestError } from './request-errors';
import { uploadAsset, uploadPageResponse } from './upload-page';
import {
  cameThroughDistribution,
  clientIp,
  corsHeaders,
  refuseCrossSite,
  type OriginSecrets,
  type OriginSettings,
} from './request-origin';
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

export { viewerAddressIp } from './request-origin';

export interface RouterSettings extends OriginSettings {
  timeZone: string;
  maxUploadBytes: number;
}

export interface RouterDeps {
  service: UploadService;
  access: ImageAccess;
  reports: ImageReports;
  settings: RouterSettings;
  /** The values CloudFront may send in `X-Origin-Verify`. */
  originSecrets: OriginSecrets;
  /** The deployment's secret the report form's tokens are made with (`core/moderation/report-tokens.ts`). */
  formSecret: () => Promise<string>;
  logger: Logger;
  metrics: Metrics;
  /** Refused uploads per day, for `npm run admin -- stats`. */
  refusals?: RefusalCounter;
  /** The origin of the two-step upload's URLs, which the upload page's CSP lets it PUT to; none when unknown. */
  stagingOrigin?: () => Promise<string | undefined>;
}

export type Router = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

type ApiRoute = Extract<Route, { page: 'api' }>;

const READ_METHODS = ['GET', 'HEAD'];

/**
 * The API Gateway adapter of the service, as a web framework's Lambda adapter reads: one request, in order, is checked
 * for its way in (`route`), routed to the upload operation or a page, answered (with CORS where allowed), counted, and
 * logged in one line. Each step is a function of its own below.
 */
export function createRouter(deps: RouterDeps): Router {
  return async (event) => {
    const startedMs = Date.now();
    const response = await route(deps, event);
    await deps.refusals?.writeIfDue();
    logRequest(deps, event, response, startedMs);
    return response;
  };
}

/**
 * How an error of a request is answered, as its route sets it once it knows: in the envelope (before any route: the
 * origin check's SSM read, a bug), as the API answers (in the format asked, with CORS, counted as a refusal), as a page
 * (404 page, or an error page), or as a delete link answers (JSON when asked, else a 404 page or text).
 */
type Answering =
  | { by: 'envelope'; cors?: Record<string, string> | undefined }
  | { by: 'api'; format: ResponseFormat; cors: Record<string, string> | undefined; given: { key?: string | undefined } }
  | { by: 'page' }
  | { by: 'link'; json: boolean };

/**
 * Every request, answered: routed by its path, and any error of any route turned into its answer here, the one place
 * that does, so that Lambda never fails the invocation and the client always gets an answer of the route's kind.
 */
export async function route(deps: RouterDeps, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const answering: { as: Answering } = { as: { by: 'envelope' } };
  try {
    return await dispatch(deps, event, answering);
  } catch (error) {
    return answerError(deps, error, answering.as);
  }
}

async function answerError(deps: RouterDeps, error: unknown, as: Answering): Promise<APIGatewayProxyResult> {
  const response = await answerOf(deps, error, as);
  // a method the path does not take: the methods it takes, whatever the kind of answer
  return error instanceof MethodNotAllowed ? withHeaders(response, { Allow: error.allow.join(', ') }) : response;
}

async function answerOf(deps: RouterDeps, error: unknown, as: Answering): Promise<APIGatewayProxyResult> {
  const notFound = error instanceof ServiceError && error.kind === 'NotFound';
  switch (as.by) {
    case 'envelope':
      return withHeaders(errorResponse(error, 'json', deps.logger), as.cors);
    case 'api': {
      const response = errorResponse(error, as.format, deps.logger);
      await countRefusal(deps, error, response.statusCode, as.given.key);
      return withHeaders(response, as.cors);
    }
    case 'page':
      return notFound ? page(deps, 404, notFoundPage()) : errorPageResponse(error, deps.settings.publicUrl, deps.logger);
    case 'link':
      return notFound && !as.json ? page(deps, 404, notFoundPage()) : errorResponse(error, as.json ? 'json' : 'txt', deps.logger);
  }
}

/** A route of the table: the methods it takes, how its errors are answered, and what answers it. */
interface RouteEntry<R extends Route> {
  /** Any other method is answered 405 with these as `Allow`, before the route runs; none: every method. */
  methods?: readonly string[];
  /** How its errors are answered (default: in the envelope). */
  answering?: (event: APIGatewayProxyEvent) => Answering;
  handle(
    deps: RouterDeps,
    event: APIGatewayProxyEvent,
    target: R,
    answering: { as: Answering },
  ): Promise<APIGatewayProxyResult> | APIGatewayProxyResult;
}

type RouteTable = { [P in Route['page']]: RouteEntry<Extract<Route, { page: P }>> };

const acceptsJson = (event: APIGatewayProxyEvent): boolean =>
  (headerValue(event, 'accept') ?? '').toLowerCase().includes('application/json');

/** Every route of the function, as `routeOf` reads a path: the one table of the methods each takes. */
const ROUTES: RouteTable = {
  home: { methods: READ_METHODS, handle: (deps) => page(deps, 200, homePage(deps.settings.publicUrl)) },
  // its methods are its actions' (API_ACTIONS)
  api: { handle: api },
  viewer: { methods: READ_METHODS, answering: () => ({ by: 'page' }), handle: viewer },
  delete: {
    methods: [...READ_METHODS, 'POST'],
    answering: (event) => ({ by: 'link', json: acceptsJson(event) }),
    handle: deleteLink,
  },
  report: { methods: ['POST'], answering: () => ({ by: 'page' }), handle: report },
  upload: {
    methods: READ_METHODS,
    handle: async (deps) => uploadPageResponse(deps.settings.publicUrl, await deps.stagingOrigin?.()),
  },
  // a share target's POST the page's service worker did not take (not installed yet): the page says so
  share: {
    handle: (_deps, event) =>
      respond(303, undefined, '', {
        Location: event.httpMethod === 'POST' ? `${UPLOAD_PAGE.page}?shared=missed` : UPLOAD_PAGE.page,
      }),
  },
  asset: {
    methods: READ_METHODS,
    handle: (deps, _event, target) => uploadAsset(target.path) ?? page(deps, 404, notFoundPage()),
  },
  none: { handle: (deps) => page(deps, 404, notFoundPage()) },
};

/** Refuses what came around the distribution, then hands the request to the route its path names. */
async function dispatch(
  deps: RouterDeps,
  event: APIGatewayProxyEvent,
  answering: { as: Answering },
): Promise<APIGatewayProxyResult> {
  if (deps.settings.originVerify && !(await cameThroughDistribution(event, deps.originSecrets)))
    throw new RequestError('Forbidden', 'Forbidden');
  const target = routeOf(event.path);
  const entry = ROUTES[target.page] as RouteEntry<Route>;
  if (entry.methods && !entry.methods.includes(event.httpMethod)) throw new MethodNotAllowed(entry.methods);
  if (entry.answering) answering.as = entry.answering(event);
  return entry.handle(deps, event, target, answering);
}

function page(deps: RouterDeps, status: number, html: string): APIGatewayProxyResult {
  return pageResponse(status, html, deps.settings.publicUrl);
}

type ApiAnswering = Extract<Answering, { by: 'api' }>;

/** An action of `/api/1/`: the methods it takes, whether other sites' browsers may call it (CORS), what answers it. */
interface ApiAction {
  methods: readonly string[];
  preflight: boolean;
  /**
   * How its errors are answered: as the upload's (in the format asked, counted as refused uploads), in JSON and
   * counted (the upload URL's step, whose answer is JSON), or in the envelope alone (the OpenAPI document: no call).
   * Only the upload's 405 counts: the others are no upload refused.
   */
  errors: 'asked' | 'json' | 'document';
  handle(deps: RouterDeps, event: APIGatewayProxyEvent, as: ApiAnswering): Promise<APIGatewayProxyResult> | APIGatewayProxyResult;
}

const API_ACTIONS: Readonly<Record<string, ApiAction>> = {
  upload: { methods: ['GET', 'POST'], preflight: true, errors: 'asked', handle: upload },
  'upload-url': { methods: ['POST'], preflight: true, errors: 'json', handle: uploadUrl },
  'openapi.json': {
    methods: READ_METHODS,
    preflight: false,
    errors: 'document',
    handle: (deps) => openapiResponse(deps.settings.publicUrl),
  },
};

/** `/api/{v}/{action}`: the upload, the two-step upload's first step, the OpenAPI document; errors in the envelope. */
async function api(
  deps: RouterDeps,
  event: APIGatewayProxyEvent,
  target: ApiRoute,
  answering: { as: Answering },
): Promise<APIGatewayProxyResult> {
  const cors = corsHeaders(event, deps.settings);
  // the key the request carried, once it is read: a refusal of it counts apart from anonymous ones
  const as: ApiAnswering = { by: 'api', format: formatFromQuery(event), cors, given: {} };
  answering.as = as;
  if (target.version !== '1') throw new RequestError('InvalidVersion', 'Invalid API version.');
  const action =
    target.action !== undefined && !target.extra && Object.hasOwn(API_ACTIONS, target.action)
      ? API_ACTIONS[target.action]
      : undefined;
  if (!action) throw new RequestError('InvalidAction', 'Invalid API action');
  if (action.errors === 'document') answering.as = { by: 'envelope' };
  if (action.errors === 'json') as.format = 'json';
  const preflight = action.preflight && cors !== undefined;
  if (preflight && event.httpMethod === 'OPTIONS') return respond(204, undefined, '', { ...cors, ...PREFLIGHT_HEADERS });
  if (!action.methods.includes(event.httpMethod)) {
    if (action.errors !== 'asked') answering.as = { by: 'envelope', cors: action.preflight ? as.cors : undefined };
    throw new MethodNotAllowed(preflight ? [...action.methods, 'OPTIONS'] : action.methods);
  }
  return action.handle(deps, event, as);
}

/** The upload (GET or POST): the Image object, in the format asked. */
async function upload(deps: RouterDeps, event: APIGatewayProxyEvent, as: ApiAnswering): Promise<APIGatewayProxyResult> {
  const request = await readApiRequest(deps, event, as.given, parseUploadRequest);
  as.format = request.format;
  const image = await deps.service.upload(request);
  return withHeaders(uploadResponse(image, request.imgbb, as.format), as.cors);
}

/** Step 1 of a two-step upload (POST only): an upload URL to put the bytes to, and the token of step 2. */
async function uploadUrl(deps: RouterDeps, event: APIGatewayProxyEvent, as: ApiAnswering): Promise<APIGatewayProxyResult> {
  const request = await readApiRequest(deps, event, as.given, parseUploadUrlRequest);
  return withHeaders(uploadUrlResponse(await deps.service.createUploadUrl(request)), as.cors);
}

/** What both API actions do first: refuse a cross-site browser, then read the request, noting the key it gave. */
async function readApiRequest<T extends { key?: string | undefined }>(
  deps: RouterDeps,
  event: APIGatewayProxyEvent,
  given: { key?: string | undefined },
  parse: (event: APIGatewayProxyEvent, limits: { maxUploadBytes: number }, clientIp: string) => Promise<T>,
): Promise<T> {
  refuseCrossSite(event, deps.settings);
  const request = await parse(event, { maxUploadBytes: deps.settings.maxUploadBytes }, clientIp(event, deps.settings));
  given.key = request.key;
  return request;
}

/** The viewer page (GET, HEAD); 404 for an image not shown (anymore). */
async function viewer(
  deps: RouterDeps,
  event: APIGatewayProxyEvent,
  { idEncoded }: { idEncoded: string },
): Promise<APIGatewayProxyResult> {
  const image = await deps.access.view(idEncoded);
  const nowMs = Date.now();
  const token = reportToken(await deps.formSecret(), idEncoded, clientIp(event, deps.settings), nowMs);
  return page(deps, 200, viewerPage(image, deps.settings.timeZone, nowMs, token));
}

/** The longest report form a request may carry: a reason and a note of 500 characters, each 9 bytes at most escaped. */
const MAX_REPORT_BODY_BYTES = 8192;

/** POST from the viewer page's report form (same site only): a viewer's report of the image, answered with a page. */
async function report(
  deps: RouterDeps,
  event: APIGatewayProxyEvent,
  { idEncoded }: { idEncoded: string },
): Promise<APIGatewayProxyResult> {
  const body = bodyBytes(event);
  if (body.length > MAX_REPORT_BODY_BYTES) throw new ServiceError('InvalidReport', 'The report is too long');
  const form = new URLSearchParams(body.toString('utf8'));
  const ip = clientIp(event, deps.settings);
  // a browser that says where the request comes from is taken at its word; one that does not (its Origin `null`
  // under the pages' no-referrer policy, or none), by the form's token
  const origin = headerValue(event, 'origin');
  const unmarked = headerValue(event, 'sec-fetch-site') === undefined && (origin === undefined || origin === 'null');
  const vouched = unmarked && isReportToken(await deps.formSecret(), form.get('token'), idEncoded, ip, Date.now());
  if (!vouched) refuseCrossSite(event, deps.settings, 'report');
  const outcome = await deps.reports.report(idEncoded, ip, {
    reason: form.get('reason') ?? undefined,
    note: form.get('note') ?? undefined,
  });
  return page(deps, 200, reportedPage(outcome));
}

/** GET shows a confirmation and deletes nothing; POST deletes. JSON for clients that ask for it. */
async function deleteLink(
  deps: RouterDeps,
  event: APIGatewayProxyEvent,
  { idEncoded, token }: { idEncoded: string; token: string },
): Promise<APIGatewayProxyResult> {
  if (READ_METHODS.includes(event.httpMethod))
    return page(deps, 200, deleteConfirmPage(await deps.access.deletable(idEncoded, token)));
  const json = acceptsJson(event);
  const outcome = await deps.access.delete(idEncoded, token);
  return json ? deletedResponse(outcome) : page(deps, 200, deletedPage(outcome));
}

/**
 * A failed upload in the metrics: refused (4xx) or failed (5xx), and by kind; and a refusal in the day's figures,
 * apart when the request did not carry the key (anyone can send those: they would drown what users meet).
 */
async function countRefusal(deps: RouterDeps, error: unknown, status: number, key: string | undefined): Promise<void> {
  const kind = error instanceof ServiceError || error instanceof RequestError ? error.kind : 'Unexpected';
  deps.metrics.add(status >= 500 ? METRIC.uploadFailed : METRIC.uploadRefused, 'Count', 1);
  if (status < 500 && deps.refusals) deps.refusals.count(await deps.service.holdsKey(key));
  deps.metrics.add(METRIC.uploadErrors, 'Count', 1, { name: 'Kind', value: kind });
  if (kind === 'Flooding') deps.metrics.add(METRIC.floodRefusals, 'Count', 1);
  if (kind === 'UrlFetchFailed') deps.metrics.add(METRIC.urlFetchFailures, 'Count', 1);
}

/** The request's one log line: never a delete token, a key, or a body. */
function logRequest(deps: RouterDeps, event: APIGatewayProxyEvent, response: APIGatewayProxyResult, startedMs: number): void {
  deps.logger.info('request', {
    method: event.httpMethod,
    path: redactedPath(event.path),
    query: redactedQuery(event),
    status: response.statusCode,
    durationMs: Date.now() - startedMs,
    clientIp: clientIp(event, deps.settings),
  });
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
