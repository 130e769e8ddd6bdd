import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { RefusalCounter } from '../core/daily-stats';
import type { Route } from '../core/image/links';
import type { Logger } from '../core/ports';
import type { Metrics } from '../core/metrics';
import type { UploadService } from '../core/upload/upload-service';
import { formatFromQuery, parseUploadRequest, parseUploadUrlRequest } from './parse-upload-request';
import { MethodNotAllowed, RequestError } from './request-errors';
import { clientIp, corsHeaders, refuseCrossSite, type OriginSettings } from './request-origin';
import { openapiResponse, respond, uploadResponse, uploadUrlResponse, withHeaders } from './responses';
import { answeredAs, RouteFailure, type Answering } from './route-failure';

export interface ApiRouteDeps {
  service: UploadService;
  settings: OriginSettings & { maxUploadBytes: number };
  logger: Logger;
  metrics: Metrics;
  /** Refused uploads per day, for `npm run admin -- stats`. */
  refusals?: RefusalCounter;
}

type ApiRoute = Extract<Route, { page: 'api' }>;

/** The methods that read. */
export const READ_METHODS = ['GET', 'HEAD'];

const PREFLIGHT_HEADERS = {
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type, X-API-Key',
  'Access-Control-Max-Age': '600',
};

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
  handle(
    deps: ApiRouteDeps,
    event: APIGatewayProxyEvent,
    as: ApiAnswering,
  ): Promise<APIGatewayProxyResult> | APIGatewayProxyResult;
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

/** `/api/{v}/{action}`: the upload, the two-step upload's first step, the OpenAPI document, each answering its errors. */
export async function api(deps: ApiRouteDeps, event: APIGatewayProxyEvent, target: ApiRoute): Promise<APIGatewayProxyResult> {
  const cors = corsHeaders(event, deps.settings);
  const asked: ApiAnswering = { by: 'api', format: formatFromQuery(event), cors };
  const action =
    target.action !== undefined && !target.extra && Object.hasOwn(API_ACTIONS, target.action)
      ? API_ACTIONS[target.action]
      : undefined;
  if (target.version !== '1' || !action) {
    const refusal =
      target.version !== '1'
        ? new RequestError('InvalidVersion', 'Invalid API version.')
        : new RequestError('InvalidAction', 'Invalid API action');
    throw new RouteFailure(refusal, asked);
  }
  const as: ApiAnswering = action.errors === 'json' ? { ...asked, format: 'json' } : asked;
  const preflight = action.preflight && cors !== undefined;
  if (preflight && event.httpMethod === 'OPTIONS') return respond(204, undefined, '', { ...cors, ...PREFLIGHT_HEADERS });
  if (!action.methods.includes(event.httpMethod)) {
    const refusal = new MethodNotAllowed(preflight ? [...action.methods, 'OPTIONS'] : action.methods);
    throw new RouteFailure(
      refusal,
      action.errors === 'asked' ? as : { by: 'envelope', cors: action.preflight ? cors : undefined },
    );
  }
  return answeredAs(action.errors === 'document' ? { by: 'envelope' } : as, () => action.handle(deps, event, as));
}

/** The upload (GET or POST): the Image object, in the format asked; its refusals in that format, the key noted. */
async function upload(deps: ApiRouteDeps, event: APIGatewayProxyEvent, as: ApiAnswering): Promise<APIGatewayProxyResult> {
  const request = await readApiRequest(deps, event, parseUploadRequest);
  return answeredAs({ ...as, format: request.format, key: request.key }, async () => {
    const image = await deps.service.upload(request);
    return withHeaders(uploadResponse(image, request.imgbb, request.format), as.cors);
  });
}

/** Step 1 of a two-step upload (POST only): an upload URL to put the bytes to, and the token of step 2. */
async function uploadUrl(deps: ApiRouteDeps, event: APIGatewayProxyEvent, as: ApiAnswering): Promise<APIGatewayProxyResult> {
  const request = await readApiRequest(deps, event, parseUploadUrlRequest);
  return answeredAs({ ...as, key: request.key }, async () =>
    withHeaders(uploadUrlResponse(await deps.service.createUploadUrl(request)), as.cors),
  );
}

/** What both API actions do first: refuse a cross-site browser, then read the request. */
async function readApiRequest<T>(
  deps: ApiRouteDeps,
  event: APIGatewayProxyEvent,
  parse: (event: APIGatewayProxyEvent, limits: { maxUploadBytes: number }, clientIp: string) => Promise<T>,
): Promise<T> {
  refuseCrossSite(event, deps.settings);
  return parse(event, { maxUploadBytes: deps.settings.maxUploadBytes }, clientIp(event, deps.settings));
}
