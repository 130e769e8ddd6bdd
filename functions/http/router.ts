import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ServiceError } from '../core/errors';
import type { ImageAccess } from '../core/lifecycle/image-access';
import { reportToken } from '../core/moderation/report-tokens';
import type { ImageReports } from '../core/moderation/reports';
import { routeOf, UPLOAD_PAGE, type Route } from '../core/image/links';
import { headerValue } from './api-event';
import { api, READ_METHODS, type ApiRouteDeps } from './api-route';
import { appFile, appsPage } from './apps-page';
import { siteOf } from './page-shell';
import { deleteConfirmPage, deletedPage, notFoundPage } from './pages';
import { viewerPage } from './viewer-page';
import { countRefusal } from './refusal-count';
import { report } from './report-route';
import { logRequest } from './request-log';
import { MethodNotAllowed, RequestError } from './request-errors';
import { answeredAs, RouteFailure, type Answering } from './route-failure';
import { uploadAsset, uploadPageResponse } from './upload-page';
import { cameThroughDistribution, clientIp, type OriginSecrets, type OriginSettings } from './request-origin';
import { deletedResponse, errorPageResponse, errorResponse, pageResponse, respond, withHeaders } from './responses';

export { viewerAddressIp } from './request-origin';

export interface RouterSettings extends OriginSettings {
  timeZone: string;
  /** The site's name in the pages' header (`SITE_NAME`); undefined: the public URL's host. */
  siteName?: string | undefined;
  maxUploadBytes: number;
}

export interface RouterDeps extends ApiRouteDeps {
  access: ImageAccess;
  reports: ImageReports;
  settings: RouterSettings;
  /** The values CloudFront may send in `X-Origin-Verify`. */
  originSecrets: OriginSecrets;
  /** The deployment's secret the report form's tokens are made with (`core/moderation/report-tokens.ts`). */
  formSecret: () => Promise<string>;
  /** The origin of the two-step upload's URLs, which the upload page's CSP lets it PUT to; none when unknown. */
  stagingOrigin?: () => Promise<string | undefined>;
}

export type Router = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/**
 * The API Gateway adapter of the service, as a web framework's Lambda adapter reads: one request, in order, is checked
 * for its way in (`route`), routed to the upload operation or a page, answered (with CORS where allowed), counted, and
 * logged in one line (`request-log.ts`).
 */
export function createRouter(deps: RouterDeps): Router {
  return async (event) => {
    const startedMs = Date.now();
    const response = await route(deps, event);
    await deps.refusals?.writeIfDue();
    logRequest(deps.logger, event, response, { startedMs, clientIp: clientIp(event, deps.settings) });
    return response;
  };
}

/**
 * Every request, answered: routed by its path, and any error of any route turned into its answer here, the one place
 * that does, as what was thrown says (`RouteFailure`: each route says how its errors are answered, a narrower step of
 * it what it knows more), so that Lambda never fails the invocation and the client always gets an answer of the
 * route's kind. An error no route caught (the origin check's, a bug) is answered in the envelope.
 */
export async function route(deps: RouterDeps, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  try {
    return await dispatch(deps, event);
  } catch (error) {
    const failure = error instanceof RouteFailure ? error : new RouteFailure(error, { by: 'envelope' });
    const response = await answerOf(deps, failure.failure, failure.answering);
    // a method the path does not take: the methods it takes, whatever the kind of answer
    const allow = failure.failure instanceof MethodNotAllowed ? { Allow: failure.failure.allow.join(', ') } : undefined;
    return withHeaders(response, allow);
  }
}

async function answerOf(deps: RouterDeps, error: unknown, as: Answering): Promise<APIGatewayProxyResult> {
  const notFound = error instanceof ServiceError && error.kind === 'NotFound';
  switch (as.by) {
    case 'envelope':
      return withHeaders(errorResponse(error, 'json', deps.logger), as.cors);
    case 'api': {
      const response = errorResponse(error, as.format, deps.logger);
      await countRefusal(deps, error, response.statusCode, as.key);
      return withHeaders(response, as.cors);
    }
    case 'page':
      return notFound ? notFoundAnswer(deps) : errorPageResponse(error, deps.settings, deps.logger);
    case 'link':
      return notFound && !as.json ? notFoundAnswer(deps) : errorResponse(error, as.json ? 'json' : 'txt', deps.logger);
  }
}

/** A route of the table: the methods it takes, how its errors are answered, and what answers it. */
interface RouteEntry<R extends Route> {
  /** Any other method is answered 405 with these as `Allow`, before the route runs; none: every method. */
  methods?: readonly string[];
  /** How its errors are answered (default: in the envelope). */
  answering?: (event: APIGatewayProxyEvent) => Answering;
  handle(deps: RouterDeps, event: APIGatewayProxyEvent, target: R): Promise<APIGatewayProxyResult> | APIGatewayProxyResult;
}

type RouteTable = { [P in Route['page']]: RouteEntry<Extract<Route, { page: P }>> };

const acceptsJson = (event: APIGatewayProxyEvent): boolean =>
  (headerValue(event, 'accept') ?? '').toLowerCase().includes('application/json');

/** Every route of the function, as `routeOf` reads a path: the one table of the methods each takes. */
const ROUTES: RouteTable = {
  // the home page is where one uploads, as imgBB's is
  home: { methods: READ_METHODS, handle: uploadPageOf },
  // its methods are its actions' (API_ACTIONS)
  api: { handle: api },
  viewer: { methods: READ_METHODS, answering: () => ({ by: 'page' }), handle: viewer },
  delete: {
    methods: [...READ_METHODS, 'POST'],
    answering: (event) => ({ by: 'link', json: acceptsJson(event) }),
    handle: deleteLink,
  },
  report: { methods: ['POST'], answering: () => ({ by: 'page' }), handle: report },
  upload: { methods: READ_METHODS, handle: uploadPageOf },
  apps: { methods: READ_METHODS, handle: (deps) => page(deps, 200, appsPage(siteOf(deps.settings), deps.settings.publicUrl)) },
  'app-file': {
    methods: READ_METHODS,
    handle: (deps, _event, { name }) => appFile(name, deps.settings.publicUrl) ?? notFoundAnswer(deps),
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
    handle: (deps, _event, target) => uploadAsset(target.path) ?? notFoundAnswer(deps),
  },
  none: { handle: notFoundAnswer },
};

/** Refuses what came around the distribution, then hands the request to the route its path names. */
async function dispatch(deps: RouterDeps, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  if (deps.settings.originVerify && !(await cameThroughDistribution(event, deps.originSecrets)))
    throw new RequestError('Forbidden', 'Forbidden');
  const target = routeOf(event.path);
  const entry = ROUTES[target.page] as RouteEntry<Route>;
  if (entry.methods && !entry.methods.includes(event.httpMethod)) throw new MethodNotAllowed(entry.methods);
  const answering = entry.answering?.(event) ?? { by: 'envelope' };
  return answeredAs(answering, () => entry.handle(deps, event, target));
}

async function uploadPageOf(deps: RouterDeps): Promise<APIGatewayProxyResult> {
  return uploadPageResponse(siteOf(deps.settings), deps.settings.publicUrl, await deps.stagingOrigin?.());
}

function page(deps: RouterDeps, status: number, html: string): APIGatewayProxyResult {
  return pageResponse(status, html, deps.settings.publicUrl);
}

/** The not-found page, for a path that names nothing, or an image not shown. */
function notFoundAnswer(deps: RouterDeps): APIGatewayProxyResult {
  return page(deps, 404, notFoundPage(siteOf(deps.settings)));
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
  return page(deps, 200, viewerPage(siteOf(deps.settings), image, deps.settings.timeZone, nowMs, token));
}

/** GET shows a confirmation and deletes nothing; POST deletes. JSON for clients that ask for it. */
async function deleteLink(
  deps: RouterDeps,
  event: APIGatewayProxyEvent,
  { idEncoded, token }: { idEncoded: string; token: string },
): Promise<APIGatewayProxyResult> {
  if (READ_METHODS.includes(event.httpMethod))
    return page(deps, 200, deleteConfirmPage(siteOf(deps.settings), await deps.access.deletable(idEncoded, token)));
  const json = acceptsJson(event);
  const outcome = await deps.access.delete(idEncoded, token);
  return json ? deletedResponse(outcome) : page(deps, 200, deletedPage(siteOf(deps.settings), outcome));
}
