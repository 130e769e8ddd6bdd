import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { EmfMetrics } from '../adapters/emf-metrics';
import { METRIC_SERVICE, type Metrics } from '../core/metrics';
import { errorResponse } from '../http/responses';
import { createRouter, type Router } from '../http/router';
import { buildServices, type BuildOptions, type Env } from './build';

export type ApiHandler = (event: APIGatewayProxyEvent, context?: Context) => Promise<APIGatewayProxyResult>;

const SERVICE_NAME = METRIC_SERVICE.api;

export interface HandlerOptions extends BuildOptions {
  /** Where metrics go; default: CloudWatch's embedded metric format. */
  metrics?: Metrics;
  /** Where its log goes: Powertools' JSON lines by default; the local server's terminal takes short lines. */
  logger?: Logger;
}

/** A handler over its own environment; tests and the local server make several. */
export function createHandler(env: Env = process.env, options: HandlerOptions = {}): ApiHandler {
  const metrics = options.metrics ?? new EmfMetrics(SERVICE_NAME, env);
  const logger = options.logger ?? new Logger({ serviceName: SERVICE_NAME });
  let router: Promise<Router> | undefined;
  return async (event, context) => {
    if (context) logger.addContext(context);
    router ??= buildServices(env, logger, metrics, options).then(
      ({ config, publicUrl, service, access, reports, settings, refusals, stagingOrigin }) =>
        createRouter({
          service,
          access,
          reports,
          settings: { ...config, publicUrl },
          originSecrets: { deployedSha256: config.originSecretSha256, listed: () => settings.originSecrets() },
          formSecret: () => settings.idSalt(),
          logger,
          metrics,
          refusals,
          // none when it cannot be known (the page's CSP then refuses its large files), said in the log
          stagingOrigin: () =>
            stagingOrigin().then(
              (origin) => origin,
              (error: unknown) => {
                logger.warn('the staging origin is unknown', { error });
                return undefined;
              },
            ),
        }),
    );
    // A failed cold start is not cached: the next invocation tries again.
    router.catch(() => (router = undefined));
    try {
      let route: Router;
      try {
        route = await router;
      } catch (error) {
        // answered in the envelope (a store refused or failed: 503; a bad setting: 500), logged, and counted by the
        // 5xx alarm; a thrown error would reach the client as the gateway's own bare 502
        return errorResponse(error, 'json', logger);
      }
      return await route(event);
    } finally {
      metrics.flush();
    }
  };
}

/** The Lambda entry point of the API. */
export const handler: ApiHandler = createHandler();
