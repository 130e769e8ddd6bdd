import { expectContract } from './contract';
import { randomBytes } from 'node:crypto';
import { DeleteParameterCommand, GetParameterCommand, PutParameterCommand } from '@aws-sdk/client-ssm';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createHandler, type HandlerOptions } from '../../functions/roots/handler';
import { buildPurger } from '../../functions/roots/purger';
import { buildStores, STORE_CALL_LIMITS, type StoreCallLimits } from '../../functions/roots/stores';
import { loadConfig } from '../../functions/config';
import { Admin } from '../../functions/core/admin/admin';
import { blockedPictureHashes } from '../../functions/imaging/fingerprint-copies';
import { IdCodec, IdCodecs } from '../../functions/core/image/id-codec';
import { NO_METRICS, type Metrics } from '../../functions/core/metrics';
import { eventOfRequest, localContext } from '../../local/api-gateway-event';
import { localClients, provision, type LocalClients } from '../../local/provision';

export const PUBLIC_URL = 'https://img.example.test';

export interface TestService {
  invoke(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult>;
  /** Sends a web Request through a real API Gateway event to the handler. */
  send(request: Request, sourceIp?: string): Promise<APIGatewayProxyResult>;
  apiKey: string;
  bucket: string;
  table: string;
  parameterPrefix: string;
  clients: LocalClients;
  setApiKey(value: string | undefined): Promise<void>;
  /** The codec with this service's salt, to find records behind `id_encoded`. */
  idCodec(): Promise<IdCodec>;
  /** A DynamoDB item of this service's table, unmarshalled; undefined when absent. */
  item(pk: string): Promise<Record<string, unknown> | undefined>;
  /** Every item whose key starts with the prefix. */
  items(prefix: string): Promise<Array<Record<string, unknown>>>;
  /** Every object key in this service's bucket. */
  objectKeys(): Promise<string[]>;
  setFloodLimits(limits: Record<string, number>): Promise<void>;
}

/**
 * Store call limits for a test that runs tens of invocations at once in this one process, where the production limits
 * would time the process's own queue rather than the store (`docs/reliability.md`, "Concurrency").
 */
export const ONE_PROCESS_LIMITS: Readonly<StoreCallLimits> = {
  small: { ...STORE_CALL_LIMITS.small, connectionTimeoutMs: 20_000, requestTimeoutMs: 20_000 },
  objects: { ...STORE_CALL_LIMITS.objects, connectionTimeoutMs: 20_000, requestTimeoutMs: 20_000 },
};

/** The adapters the function builds, on this service's bucket, table and parameters (as `npm run admin` does). */
export function storesOf(service: Pick<TestService, 'bucket' | 'table' | 'parameterPrefix'>): ReturnType<typeof buildStores> {
  const env = { BUCKET_NAME: service.bucket, TABLE_NAME: service.table, PARAMETER_PREFIX: service.parameterPrefix, PUBLIC_URL };
  return buildStores(loadConfig(env), env);
}

/** The operator's tools (`npm run admin`) on this service's stores, with the real clock. */
export function adminOf(service: Pick<TestService, 'bucket' | 'table' | 'parameterPrefix'>): Admin {
  const stores = storesOf(service);
  return new Admin({
    ...stores,
    purger: buildPurger(stores.settings, NO_METRICS),
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    codecs: new IdCodecs(() => stores.settings.idSalt(), 999),
    clock: { nowMs: () => Date.now(), sleep: async () => undefined },
    publicUrl: PUBLIC_URL,
    pictureCrops: blockedPictureHashes,
  });
}

/** The endpoints of the stand-ins the global setup started. */
export function standInEndpoints(): { s3: string; dynamodb: string; ssm: string } {
  const s3 = process.env['AWS_ENDPOINT_URL_S3'];
  const dynamodb = process.env['AWS_ENDPOINT_URL_DYNAMODB'];
  const ssm = process.env['AWS_ENDPOINT_URL_SSM'];
  if (!s3 || !dynamodb || !ssm) throw new Error('the stand-ins are not running (jest globalSetup)');
  return { s3, dynamodb, ssm };
}

/** A handler on its own bucket, table and parameters in the shared stand-ins. */
export async function createTestService(
  settings: Record<string, string> = {},
  options: HandlerOptions = {},
): Promise<TestService> {
  const suffix = randomBytes(6).toString('hex');
  const bucket = `test-${suffix}`;
  const table = `test-${suffix}`;
  const parameterPrefix = `/test-${suffix}`;
  const endpoints = standInEndpoints();
  const { apiKey } = await provision({ endpoints, bucket, table, parameterPrefix });
  const clients = localClients(endpoints);
  const documents = DynamoDBDocumentClient.from(clients.dynamodb);
  const handler = createHandler(
    {
      BUCKET_NAME: bucket,
      TABLE_NAME: table,
      PARAMETER_PREFIX: parameterPrefix,
      PUBLIC_URL,
      PARAMETERS_CACHE_SECONDS: '0',
      MODERATION_CACHE_SECONDS: '0',
      ...settings,
    },
    { metrics: NO_METRICS, ...options },
  );
  // as Lambda and the local server do: every invocation has a context with its request id
  const invoke = (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> =>
    handler(event, localContext(event.requestContext.requestId));
  return {
    invoke,
    // every answer is checked against docs/openapi.yaml: a field, status or code the document lacks fails the test
    send: async (request, sourceIp) => {
      const response = await invoke(await eventFrom(request, sourceIp));
      const headers = Object.fromEntries(
        Object.entries(response.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
      );
      expectContract(request.method, new URL(request.url).pathname, {
        status: response.statusCode,
        contentType: headers['content-type'] === undefined ? undefined : String(headers['content-type']),
        body: response.body,
      });
      return response;
    },
    apiKey,
    bucket,
    table,
    parameterPrefix,
    clients,
    async setApiKey(value) {
      const name = `${parameterPrefix}/api-key`;
      if (value === undefined) await clients.ssm.send(new DeleteParameterCommand({ Name: name }));
      else await clients.ssm.send(new PutParameterCommand({ Name: name, Value: value, Type: 'SecureString', Overwrite: true }));
    },
    async idCodec() {
      const salt = await clients.ssm.send(new GetParameterCommand({ Name: `${parameterPrefix}/id-salt`, WithDecryption: true }));
      return new IdCodec(salt.Parameter?.Value ?? '', Number(settings['ID_PADDING'] ?? 999));
    },
    async item(pk) {
      return (await documents.send(new GetCommand({ TableName: table, Key: { pk } }))).Item;
    },
    async items(prefix) {
      const found: Array<Record<string, unknown>> = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await documents.send(
          new ScanCommand({
            TableName: table,
            FilterExpression: 'begins_with(pk, :prefix)',
            ExpressionAttributeValues: { ':prefix': prefix },
            ExclusiveStartKey: start,
          }),
        );
        found.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start);
      return found;
    },
    async objectKeys() {
      const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (listed.Contents ?? []).map((object) => object.Key ?? '');
    },
    async setFloodLimits(limits) {
      const full = { minute: 0, hour: 0, day: 0, week: 0, month: 0, ...limits };
      await clients.ssm.send(
        new PutParameterCommand({
          Name: `${parameterPrefix}/flood-limits`,
          Value: JSON.stringify(full),
          Type: 'String',
          Overwrite: true,
        }),
      );
    },
  };
}

/** The API Gateway event of a web Request, as the local server builds it. */
export function eventFrom(request: Request, sourceIp = '203.0.113.7'): Promise<APIGatewayProxyEvent> {
  return eventOfRequest(request, sourceIp);
}

/** A multipart upload request as ShareX sends it. */
export function multipartUpload(
  fields: Record<string, string | { bytes: Uint8Array; filename: string; type?: string }>,
  query = '',
): Request {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, new Blob([value.bytes], { type: value.type ?? 'application/octet-stream' }), value.filename);
  }
  return new Request(`${PUBLIC_URL}/api/1/upload${query}`, { method: 'POST', body: form });
}

/** A urlencoded upload request as imgbb-uploader sends it. */
export function urlencodedUpload(fields: Record<string, string>, query = ''): Request {
  return new Request(`${PUBLIC_URL}/api/1/upload${query}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
    body: new URLSearchParams(fields).toString(),
  });
}

/** Metrics kept in memory: every value added, with its dimension. */
export class InMemoryMetrics implements Metrics {
  readonly values: Array<{ name: string; unit: string; value: number; dimension?: string }> = [];
  flushes = 0;

  add(name: string, unit: string, value: number, dimension?: { name: string; value: string }): void {
    this.values.push({ name, unit, value, ...(dimension ? { dimension: `${dimension.name}=${dimension.value}` } : {}) });
  }

  flush(): void {
    this.flushes += 1;
  }

  /** The sum of a metric's values (under one dimension value, when given). */
  sum(name: string, dimension?: string): number {
    return this.values
      .filter((entry) => entry.name === name && (dimension === undefined || entry.dimension === dimension))
      .reduce((total, entry) => total + entry.value, 0);
  }

  count(name: string): number {
    return this.values.filter((entry) => entry.name === name).length;
  }

  clear(): void {
    this.values.length = 0;
  }
}

export function jsonBody(response: APIGatewayProxyResult): Record<string, unknown> & { image: Record<string, unknown> } {
  return JSON.parse(response.body) as Record<string, unknown> & { image: Record<string, unknown> };
}
