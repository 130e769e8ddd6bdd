import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { RAW_BODY, type EventWithRawBody } from '../functions/http/api-event';
import { isBinaryMediaType } from '../functions/http/edge-contract';

export interface RawRequest {
  method: string;
  /** Path and query as sent: `/api/1/upload?key=...` */
  url: string;
  /** Node's `rawHeaders`: name, value, name, value... with the client's casing. */
  rawHeaders: readonly string[];
  body: Buffer;
  sourceIp: string;
}

/**
 * Builds the REST API (v1) proxy event API Gateway would hand to Lambda for this request. With `rawBody` (the local
 * server), a binary body is handed over as its bytes (`RAW_BODY`) rather than encoded in base64 for the handler to
 * decode again; the event otherwise says what Lambda's would (`isBase64Encoded`, an empty `body`).
 */
export function toApiGatewayEvent(request: RawRequest, options: { rawBody?: boolean } = {}): EventWithRawBody {
  const queryStart = request.url.indexOf('?');
  const rawPath = queryStart === -1 ? request.url : request.url.slice(0, queryStart);
  const rawQuery = queryStart === -1 ? '' : request.url.slice(queryStart + 1);
  const path = safeDecode(rawPath);

  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    const name = request.rawHeaders[index] ?? '';
    const value = request.rawHeaders[index + 1] ?? '';
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }

  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    query[name] = value;
    (multiQuery[name] ??= []).push(value);
  }
  const hasQuery = Object.keys(query).length > 0;

  const contentType = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  const binary = isBinaryMediaType(contentType);
  const hasBody = request.body.length > 0;
  const now = new Date();
  const requestId = randomUUID();
  const raw = options.rawBody === true && hasBody && binary;

  const event: EventWithRawBody = {
    resource: '/{proxy+}',
    path,
    httpMethod: request.method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: { proxy: path.replace(/^\//, '') },
    stageVariables: null,
    body: raw ? '' : hasBody ? request.body.toString(binary ? 'base64' : 'utf8') : null,
    isBase64Encoded: hasBody && binary,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: request.method,
      path: `/local${path}`,
      stage: 'local',
      requestId,
      extendedRequestId: requestId,
      requestTime: now.toUTCString(),
      requestTimeEpoch: now.getTime(),
      resourceId: 'local',
      resourcePath: '/{proxy+}',
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.sourceIp,
        user: null,
        userAgent: headers['User-Agent'] ?? headers['user-agent'] ?? null,
        userArn: null,
      },
    },
  };
  if (raw) event[RAW_BODY] = request.body;
  return event;
}

/** The event of a web `Request` (a test's, a bench's), built as the local server builds it from a socket's request. */
export async function eventOfRequest(request: Request, sourceIp: string): Promise<APIGatewayProxyEvent> {
  const url = new URL(request.url);
  const rawHeaders: string[] = [];
  request.headers.forEach((value, name) => rawHeaders.push(name, value));
  return toApiGatewayEvent({
    method: request.method,
    url: `${url.pathname}${url.search}`,
    rawHeaders,
    body: Buffer.from(await request.arrayBuffer()),
    sourceIp,
  });
}

/**
 * The size Lambda measures: the event as JSON, counted without a copy of a base64 body (a 12 MP upload's is 6 MB, and
 * one more string that size per request is a full garbage collection more): its characters are JSON as they are.
 */
export function eventBytes(event: EventWithRawBody): number {
  const raw = event[RAW_BODY];
  // a body handed over as bytes: as long as its base64 would be
  if (raw !== undefined) return Buffer.byteLength(JSON.stringify(event)) + 4 * Math.ceil(raw.length / 3);
  if (!event.isBase64Encoded || event.body === null) return Buffer.byteLength(JSON.stringify(event));
  return Buffer.byteLength(JSON.stringify({ ...event, body: '' })) + event.body.length;
}

/** A Lambda context for one local invocation. */
export function localContext(requestId: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'image-upload-local',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:image-upload-local',
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: 'local',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 29_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
