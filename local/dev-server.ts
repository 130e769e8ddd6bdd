import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { GetObjectCommand, NoSuchKey, type S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { ApiHandler } from '../functions/roots/handler';
import { MAX_EVENT_BYTES, maxBodyBytes, requestTooLargeMessage, VIEWER_IMAGE_HEADERS } from '../functions/http/edge-contract';
import { errorEnvelope, respond } from '../functions/http/responses';
import { eventBytes, localContext, toApiGatewayEvent } from './api-gateway-event';
import { IMAGES_PREFIX, routeOf } from '../functions/core/image/links';
import { isStoredMimeType } from '../functions/core/image/stored-formats';

export interface DevServerOptions {
  handler: ApiHandler;
  s3: S3Client;
  bucket: string;
  port: number;
  host?: string;
  /** How many requests the handler runs at once; the rest wait their turn, in order (`docs/local.md`). */
  invocations?: number;
}

export interface DevServer {
  /** The address it listens on. */
  host: string;
  port: number;
  close(): Promise<void>;
}

/** Past the event limit the rest of a body is read and dropped, up to this, so the client sees the 413. */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;
/** CloudFront's limit on a URL (path and query), as the distribution in front of the API enforces it. */
const MAX_URL_BYTES = 8192;
/** Headers past this answer 431 (the request line aside: a long one answers 414). */
const MAX_HEADER_BYTES = 16 * 1024;
/**
 * What Node reads of a request line and headers before it gives up (431): far past both limits, so that this server,
 * not Node's parser, tells a long URL (414) from long headers (431).
 */
const MAX_READ_HEADER_BYTES = 1024 * 1024;
/** How long an idle connection is kept: longer than its client keeps it, as a load balancer keeps one 60 s. */
export const KEEP_ALIVE_MS = 65_000;
const IMAGE_KEY = /^images\/[A-Za-z0-9_.\-/]+$/;

/**
 * The local stand-in for API Gateway + CloudFront: turns each request into a REST proxy event for the same handler
 * Lambda runs, and serves `/images/...` from the S3 stand-in.
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  // API calls (uploads) and pages wait in lines of their own: eight slow URL uploads held every slot, and a page asked
  // meanwhile waited 9.8 s behind them
  const apiTurns = new Turns(options.invocations ?? DEFAULT_INVOCATIONS);
  const pageTurns = new Turns(options.invocations ?? DEFAULT_INVOCATIONS);
  const server: Server = createServer({ maxHeaderSize: MAX_READ_HEADER_BYTES }, (request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
      response.end('Internal server error');
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = request.url ?? '/';
    if (Buffer.byteLength(url) > MAX_URL_BYTES) {
      request.resume();
      send(response, errorEnvelope(414, 414, `URL too long - max ${MAX_URL_BYTES} bytes`, 'json'));
      return;
    }
    const headerBytes = request.rawHeaders.reduce((sum, text) => sum + Buffer.byteLength(text) + 2, 0);
    if (headerBytes > MAX_HEADER_BYTES) {
      request.resume();
      send(response, errorEnvelope(431, 431, 'Request header fields too large', 'json', { Connection: 'close' }));
      return;
    }
    if (url.startsWith(`/${IMAGES_PREFIX}`) && (request.method === 'GET' || request.method === 'HEAD')) {
      await serveImage(url, request.method === 'HEAD', response);
      return;
    }
    // What the distribution's viewer-request function answers: a body longer than the event can carry.
    const maxBytes = maxBodyBytes(request.headers['content-type']);
    const body = await readBody(request, maxBytes);
    if (body === undefined) {
      send(response, errorEnvelope(413, 400, requestTooLargeMessage(maxBytes), 'json', { Connection: 'close' }));
      return;
    }
    const event = toApiGatewayEvent(
      {
        method: request.method ?? 'GET',
        url,
        rawHeaders: request.rawHeaders,
        body,
        sourceIp: (request.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
      },
      { rawBody: true },
    );
    if (eventBytes(event) > MAX_EVENT_BYTES) {
      // Only a malformed text body can get here (JSON escapes inflate it): API Gateway's own answer then.
      send(response, respond(413, 'application/json', '{"message":"Request Too Long"}'));
      return;
    }
    // the route as the handler reads it, from the decoded path: `/%61pi/1/upload` is an upload, and waits with them
    const turns = routeOf(event.path).page === 'api' ? apiTurns : pageTurns;
    send(response, await turns.run(() => options.handler(event, localContext(event.requestContext.requestId))));
  }

  async function serveImage(url: string, headOnly: boolean, response: ServerResponse): Promise<void> {
    const key = url.split('?')[0]?.slice(1) ?? '';
    // every segment a name: no empty ones (`images//etc/passwd`), no `.` or `..`
    if (!IMAGE_KEY.test(key) || key.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
      notFound(response);
      return;
    }
    try {
      const object = await options.s3.send(new GetObjectCommand({ Bucket: options.bucket, Key: key }));
      // only what the service stores: an HTML file planted in the bucket is not served on the service's origin
      if (!isStoredMimeType(object.ContentType)) {
        (object.Body as Readable | undefined)?.destroy();
        notFound(response);
        return;
      }
      response.writeHead(200, {
        'Content-Type': object.ContentType ?? 'application/octet-stream',
        ...(object.ContentLength === undefined ? {} : { 'Content-Length': String(object.ContentLength) }),
        // what CloudFront's response headers policy sends viewers in place of the object's one-year lifetime
        ...VIEWER_IMAGE_HEADERS,
        ...(object.ETag ? { ETag: object.ETag } : {}),
        ...(object.LastModified ? { 'Last-Modified': object.LastModified.toUTCString() } : {}),
        'X-Content-Type-Options': 'nosniff',
      });
      const stream = object.Body as Readable | undefined;
      if (headOnly || !stream) {
        stream?.destroy();
        response.end();
        return;
      }
      stream.pipe(response);
    } catch (error) {
      if (error instanceof NoSuchKey || (error instanceof Error && error.name === 'NotFound')) {
        notFound(response);
        return;
      }
      response.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Service unavailable, try again');
    }
  }

  // An idle connection stays open longer than its client keeps it (`docs/local.md`, "Many requests at once"): with
  // Node's 5 s, a client that reused one just as the server closed it wrote its upload into a closed socket (EPIPE)
  server.keepAliveTimeout = KEEP_ALIVE_MS;

  // Requests Node refuses before any handler (past 1 MiB of request line and headers, broken HTTP) still get the
  // envelope.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return;
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? 431 : 400;
    const message = tooLarge ? 'Request header fields too large' : 'Bad request';
    const body = errorEnvelope(status, status, message, 'json').body;
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });

  await new Promise<void>((resolve) => server.listen(options.port, options.host ?? '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    host: address.address,
    port: address.port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Requests the handler runs at once by default: Lambda gives each an instance of its own, here they share one process
 * (why, and what a burst did without it: `docs/local.md`, "Many requests at once").
 */
export const DEFAULT_INVOCATIONS = 8;

/** At most `limit` tasks at once; the others start in the order they came, as one ends. */
export class Turns {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running += 1;
    try {
      return await task();
    } finally {
      // the slot passes to the next in line as it is, or is given back
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

function send(response: ServerResponse, result: APIGatewayProxyResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name] = values.map(String);
  const body = Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  headers['Content-Length'] = String(body.length);
  response.writeHead(result.statusCode, headers);
  response.end(body);
}

/**
 * The whole body, or undefined when it is longer than `maxBytes`. The rest of a long body is read and dropped before
 * the answer, so that clients still sending do not see a reset instead of the 413; past MAX_DRAIN_BYTES the
 * connection is cut.
 */
function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else chunks.length = 0;
      if (size > MAX_DRAIN_BYTES) {
        resolve(undefined);
        request.destroy();
      }
    });
    request.on('end', () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function notFound(response: ServerResponse): void {
  response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }).end('Not found');
}
