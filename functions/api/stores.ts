import type { Logger } from '@aws-lambda-powertools/logger';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
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

/** Store calls give up well before the gateway's 29 s; the SDK retries a bounded number of times. */
const CLIENT_OPTIONS = {
  maxAttempts: 3,
  requestHandler: { connectionTimeout: 2_000, requestTimeout: 8_000 },
} as const;

export const clock: Clock = { nowMs: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

/** The adapters over the AWS SDK clients, which find their endpoints in the standard environment variables. */
export function buildStores(config: Readonly<Config>, env: Env) {
  // Local stand-ins are reached by endpoint variables; S3 then needs path-style addressing.
  const s3 = new S3Client({ ...CLIENT_OPTIONS, forcePathStyle: Boolean(env['AWS_ENDPOINT_URL_S3']) });
  const db = DynamoDBDocumentClient.from(new DynamoDBClient(CLIENT_OPTIONS), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const settings = new SsmSettingsStore(new SSMProvider({ awsSdkV3Client: new SSMClient(CLIENT_OPTIONS) }), config.parameters, {
    apiKeySeconds: config.keyCacheSeconds,
    floodLimitsSeconds: config.floodLimitsCacheSeconds,
  });
  return {
    db,
    settings,
    images: new DynamoImageRepository(db, config.tableName),
    objects: new S3ObjectStore(s3, config.bucketName),
    duplicates: new DynamoDuplicateIndex(db, config.tableName),
    purger: new CloudFrontPurger(new CloudFrontClient(CLIENT_OPTIONS), () => settings.distributionId()),
  };
}

/** The sweep needs the stores only: no imaging, so its bundle carries no sharp. */
export function buildSweeper(env: Env, logger: Logger): Sweeper {
  const config = loadConfig(env);
  const { images, objects, duplicates, purger } = buildStores(config, env);
  return new Sweeper({ images, objects, duplicates, purger, clock, logger });
}
