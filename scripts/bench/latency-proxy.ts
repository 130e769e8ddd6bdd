import { Agent, createServer, request as forward, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One store call as the proxy saw it. */
export interface StoreCall {
  store: string;
  /** The operation: DynamoDB's `PutItem`, SSM's `GetParameters`, S3's method and path. */
  operation: string;
  startMs: number;
  endMs: number;
  /** DynamoDB writes: the table's write units as the stand-in counted them. */
  writeUnits?: number;
  /** DynamoDB writes: the request body, to see which index entries it touches. */
  body?: Record<string, unknown>;
}

export interface LatencyProxy {
  url: string;
  close(): Promise<void>;
}

/** Milliseconds since the epoch with a fraction: the same clock in every process. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

const DYNAMO_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/**
 * An HTTP proxy in front of a stand-in that adds `delayMs()` to every call (the round trip of a store in AWS), and
 * records each call: when it started and ended, what it was, and, for DynamoDB writes, the write units the stand-in
 * counts (it asks for them by adding `ReturnConsumedCapacity`, which is why it talks to the stand-in's own socket, behind
 * the signature gate, where dynalite checks no signature). Bodies it need not
 * read (an S3 object, every answer but a DynamoDB write's) are streamed through, not gathered: the proxy stands for
 * the network, and its own work shares the machine with the handler measured.
 */
export async function startLatencyProxy(
  store: string,
  /** The stand-in's own socket. */
  socketPath: string,
  delayMs: () => number,
  calls: StoreCall[],
): Promise<LatencyProxy> {
  const agent = new Agent({ keepAlive: true });
  const server: Server = createServer((incoming, outgoing) => {
    void (async () => {
      const startMs = nowMs();
      const amzTarget = String(incoming.headers['x-amz-target'] ?? '');
      const operation = amzTarget
        ? (amzTarget.split('.').pop() ?? amzTarget)
        : `${incoming.method} ${incoming.url?.split('?')[0]}`;
      const counted = store === 'DynamoDB' && DYNAMO_WRITES.has(operation);
      let parsed: Record<string, unknown> | undefined;
      let body: Buffer | undefined;
      const headers = { ...incoming.headers };
      if (counted) {
        parsed = JSON.parse((await readAll(incoming)).toString('utf8')) as Record<string, unknown>;
        body = Buffer.from(JSON.stringify({ ...parsed, ReturnConsumedCapacity: 'TOTAL' }));
        headers['content-length'] = String(body.length);
      }
      await new Promise((resolve) => setTimeout(resolve, delayMs()));
      const proxied = forward({ socketPath, method: incoming.method, path: incoming.url, headers, agent }, (response) => {
        if (!parsed) {
          outgoing.writeHead(response.statusCode ?? 500, response.headers);
          response.pipe(outgoing);
          response.on('end', () => calls.push({ store, operation, startMs, endMs: nowMs() }));
          return;
        }
        const written = parsed;
        void readAll(response).then((answer) => {
          const consumed = (JSON.parse(answer.toString('utf8') || '{}') as { ConsumedCapacity?: { CapacityUnits?: number } })
            .ConsumedCapacity;
          // a write whose condition failed costs a write unit too; the stand-in reports none then
          calls.push({ store, operation, startMs, endMs: nowMs(), body: written, writeUnits: consumed?.CapacityUnits ?? 1 });
          outgoing.writeHead(response.statusCode ?? 500, response.headers);
          outgoing.end(answer);
        });
      });
      proxied.on('error', () => outgoing.destroy());
      if (body) proxied.end(body);
      else incoming.pipe(proxied);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Store round trips one after another among `calls`: a call that starts after the calls before it have all ended
 * begins a new round trip; calls made together count once.
 */
export function sequentialRoundTrips(calls: readonly StoreCall[]): number {
  let trips = 0;
  let currentEndMs = -Infinity;
  for (const call of [...calls].sort((a, b) => a.startMs - b.startMs)) {
    if (call.startMs >= currentEndMs - 0.5) {
      trips += 1;
      currentEndMs = call.endMs;
    } else currentEndMs = Math.max(currentEndMs, call.endMs);
  }
  return trips;
}

/**
 * Index write units of DynamoDB writes: an item put into the sweep index costs one, an item taken out of it (a name
 * claim settled) one. The stand-in counts only the table's units.
 */
export function indexWriteUnits(call: StoreCall): number {
  const body = call.body ?? {};
  const item = body['Item'] as Record<string, unknown> | undefined;
  if (item !== undefined) return 'sweepShard' in item ? 1 : 0;
  const update = body['UpdateExpression'];
  return typeof update === 'string' && update.includes('sweepShard') ? 1 : 0;
}
