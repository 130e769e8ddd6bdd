import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { createRouter, type Router } from '../http/router';
import { buildServices, type Env } from './build';

export type ApiHandler = (event: APIGatewayProxyEvent, context?: Context) => Promise<APIGatewayProxyResult>;

/** A handler over its own environment; tests and the local server make several. */
export function createHandler(env: Env = process.env): ApiHandler {
  const logger = new Logger({ serviceName: 'image-upload' });
  let router: Promise<Router> | undefined;
  return async (event, context) => {
    if (context) logger.addContext(context);
    router ??= buildServices(env, logger).then(({ config, publicUrl, service, settings }) =>
      createRouter({
        service,
        settings: { ...config, publicUrl },
        originSecret: () => settings.originSecret(),
        logger,
      }),
    );
    // A failed cold start is not cached: the next invocation tries again.
    router.catch(() => (router = undefined));
    return (await router)(event);
  };
}

/** The Lambda entry point of the API. */
export const handler: ApiHandler = createHandler();
