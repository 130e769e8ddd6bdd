import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { redactedPath } from '../core/image/links';
import type { Logger } from '../core/ports';
import { queryParameters } from './api-event';

/**
 * Names of query parameters whose values never reach a log: every spelling of the key (`key`, ` key`, `api_key`,
 * `apiKey`, any case) and anything else that looks like a credential. Catching too much costs nothing.
 */
const SECRET_PARAMETER = /key|token|secret|pass|auth|sig/i;

/** The request's one log line: never a delete token, a key, or a body. */
export function logRequest(
  logger: Logger,
  event: APIGatewayProxyEvent,
  response: APIGatewayProxyResult,
  details: { startedMs: number; clientIp: string },
): void {
  logger.info('request', {
    method: event.httpMethod,
    path: redactedPath(event.path),
    query: redactedQuery(event),
    status: response.statusCode,
    durationMs: Date.now() - details.startedMs,
    clientIp: details.clientIp,
  });
}

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
