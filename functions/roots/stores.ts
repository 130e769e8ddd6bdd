import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { InitializeMiddleware } from '@smithy/types';
import { DynamoDuplicateIndex } from '../adapters/dynamo-duplicate-index';
import { DynamoImageRepository } from '../adapters/dynamo-image-repository';
import { S3ObjectStore } from '../adapters/s3-object-store';
import { S3PictureBlocks } from '../adapters/s3-picture-blocks';
import { S3StagedStore } from '../adapters/s3-staged-store';
import { DynamoTokenLedger } from '../adapters/dynamo-token-ledger';
import { DynamoModeration } from '../adapters/dynamo-moderation';
import { DynamoReports } from '../adapters/dynamo-reports';
import { DynamoDailyStats } from '../adapters/dynamo-daily-stats';
import type { SettingsParameters } from '../adapters/parameter-names';
import { SsmSettingsStore } from '../adapters/ssm-settings-store';
import type { Config } from '../config';
import { METRIC, NO_METRICS, storeLatencyMetric, type Metrics } from '../core/metrics';
import type { Clock } from '../core/ports';

export type Env = Readonly<Record<string, string | undefined>>;

/** How long a store call may take: at most `maxAttempts` tries, each bounded by the two timeouts. */
export interface CallLimits {
  maxAttempts: number;
  connectionTimeoutMs: number;
  requestTimeoutMs: number;
}

/** The limits of the small calls and of the S3 puts. */
export interface StoreCallLimits {
  small: CallLimits;
  objects: CallLimits;
}

/**
 * Every store call gives up well before API Gateway's 29 s: at most `maxAttempts` tries, each bounded by the
 * connection and request timeouts (plus the SDK's jittered backoff, under a second for these attempts).
 */
export const STORE_CALL_LIMITS: Readonly<StoreCallLimits> = {
  /** DynamoDB, SSM and CloudFront calls are small: 3 tries of at most 1 + 3 s. */
  small: { maxAttempts: 3, connectionTimeoutMs: 1_000, requestTimeoutMs: 3_000 },
  /** S3 puts carry up to MAX_UPLOAD_BYTES: 2 tries of at most 1 + 10 s. */
  objects: { maxAttempts: 2, connectionTimeoutMs: 1_000, requestTimeoutMs: 10_000 },
};

export function clientOptions(limits: Readonly<CallLimits>) {
  return {
    maxAttempts: limits.maxAttempts,
    // without throwOnRequestTimeout the SDK only logs a warning when requestTimeout passes, and waits on
    requestHandler: {
      connectionTimeout: limits.connectionTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  };
}

export const clock: Clock = { nowMs: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

/** Every call of a client, retries included, as `<store>Latency`; one that fails in the end also as `StoreErrors`. */
export function measureCalls<Input extends object, Output extends object>(
  store: string,
  metrics: Metrics,
): InitializeMiddleware<Input, Output> {
  return (next) => async (args) => {
    const startedMs = Date.now();
    try {
      return await next(args);
    } catch (error) {
      metrics.add(METRIC.storeErrors, 'Count', 1, { name: 'Store', value: store });
      throw error;
    } finally {
      metrics.add(storeLatencyMetric(store), 'Milliseconds', Date.now() - startedMs);
    }
  };
}

export const MEASURE = { step: 'initialize', name: 'measureCalls' } as const;

/**
 * The adapters over the AWS SDK clients, which find their endpoints in the standard environment variables. The settings
 * store reads `parameters` (default: all of them); a function whose role allows fewer names only those.
 */
export function buildStores(
  config: Readonly<Config>,
  env: Env,
  metrics: Metrics = NO_METRICS,
  parameters: Partial<SettingsParameters> = config.parameters,
  limits: Readonly<StoreCallLimits> = STORE_CALL_LIMITS,
) {
  // Stores of one's own (the stand-ins, moto_server...) are reached by endpoint variables; S3 then takes path-style.
  const pathStyle = Boolean(env['AWS_ENDPOINT_URL_S3'] || env['AWS_ENDPOINT_URL']);
  // checksums only where S3 requires one: the puts carry Content-MD5 (`adapters/s3-object-store.ts`)
  const s3 = new S3Client({
    ...clientOptions(limits.objects),
    forcePathStyle: pathStyle,
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  s3.middlewareStack.add(measureCalls('S3', metrics), MEASURE);
  const small = clientOptions(limits.small);
  const dynamodb = new DynamoDBClient(small);
  dynamodb.middlewareStack.add(measureCalls('DynamoDB', metrics), MEASURE);
  const db = DynamoDBDocumentClient.from(dynamodb, { marshallOptions: { removeUndefinedValues: true } });
  const ssm = new SSMClient(small);
  ssm.middlewareStack.add(measureCalls('SSM', metrics), MEASURE);
  const settings = new SsmSettingsStore(ssm, parameters, config.parametersCacheSeconds);
  // signs upload URLs only (no request is sent through it), without a checksum of a body it has not seen
  const presigner = new S3Client({ forcePathStyle: pathStyle, requestChecksumCalculation: 'WHEN_REQUIRED' });
  return {
    db,
    settings,
    images: new DynamoImageRepository(db, config.tableName),
    objects: new S3ObjectStore(s3, config.bucketName),
    duplicates: new DynamoDuplicateIndex(db, config.tableName),
    staged: new S3StagedStore(s3, presigner, config.bucketName),
    ledger: new DynamoTokenLedger(db, config.tableName),
    moderation: new DynamoModeration(db, config.tableName),
    pictureBlocks: new S3PictureBlocks(s3, config.bucketName, db, config.tableName),
    stats: new DynamoDailyStats(db, config.tableName),
    reports: new DynamoReports(db, config.tableName),
  };
}
