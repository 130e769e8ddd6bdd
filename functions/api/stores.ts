import type { Logger } from '@aws-lambda-powertools/logger';
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CloudFrontPurger } from '../adapters/cloudfront-purger';
import { DynamoDuplicateIndex } from '../adapters/dynamo-duplicate-index';
import { DynamoImageRepository } from '../adapters/dynamo-image-repository';
import { S3ObjectStore } from '../adapters/s3-object-store';
import { SsmSettingsStore } from '../adapters/ssm-settings-store';
import { loadConfig, type Config } from '../config';
import type { Clock } from '../core/ports';
import { Sweeper } from '../core/sweeper';

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Every store call gives up well before API Gateway's 29 s: at most `maxAttempts` tries, each bounded by the
 * connection and request timeouts (plus the SDK's jittered backoff, under a second for these attempts).
 */
export const STORE_CALL_LIMITS = {
  /** DynamoDB, SSM and CloudFront calls are small: 3 tries of at most 1 + 3 s. */
  small: { maxAttempts: 3, connectionTimeoutMs: 1_000, requestTimeoutMs: 3_000 },
  /** S3 puts carry up to MAX_UPLOAD_BYTES: 2 tries of at most 1 + 10 s. */
  objects: { maxAttempts: 2, connectionTimeoutMs: 1_000, requestTimeoutMs: 10_000 },
} as const;

function clientOptions(limits: (typeof STORE_CALL_LIMITS)[keyof typeof STORE_CALL_LIMITS]) {
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

/** The adapters over the AWS SDK clients, which find their endpoints in the standard environment variables. */
export function buildStores(config: Readonly<Config>, env: Env) {
  // Local stand-ins are reached by endpoint variables; S3 then needs path-style addressing.
  const s3 = new S3Client({ ...clientOptions(STORE_CALL_LIMITS.objects), forcePathStyle: Boolean(env['AWS_ENDPOINT_URL_S3']) });
  const small = clientOptions(STORE_CALL_LIMITS.small);
  const db = DynamoDBDocumentClient.from(new DynamoDBClient(small), { marshallOptions: { removeUndefinedValues: true } });
  const settings = new SsmSettingsStore(
    new SSMClient(small),
    config.parameters,
    Math.min(config.keyCacheSeconds, config.floodLimitsCacheSeconds),
  );
  return {
    db,
    settings,
    images: new DynamoImageRepository(db, config.tableName),
    objects: new S3ObjectStore(s3, config.bucketName),
    duplicates: new DynamoDuplicateIndex(db, config.tableName),
    purger: new CloudFrontPurger(new CloudFrontClient(small), () => settings.distributionId()),
  };
}

/** The sweep needs the stores only: no imaging, so its bundle carries no sharp. */
export function buildSweeper(env: Env, logger: Logger): Sweeper {
  const config = loadConfig(env);
  const { images, objects, duplicates, purger } = buildStores(config, env);
  return new Sweeper({ images, objects, duplicates, purger, clock, logger });
}
