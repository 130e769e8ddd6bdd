import { randomBytes } from 'node:crypto';
import type { Logger } from '@aws-lambda-powertools/logger';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoCounterStore } from '../adapters/dynamo-counter-store';
import { DynamoDuplicateIndex } from '../adapters/dynamo-duplicate-index';
import { DynamoImageRepository } from '../adapters/dynamo-image-repository';
import { S3ObjectStore } from '../adapters/s3-object-store';
import { SsmSettingsStore } from '../adapters/ssm-settings-store';
import { SafeUrlFetcher } from '../adapters/safe-url-fetcher';
import { loadConfig, type Config } from '../config';
import { FloodGuard, parseFloodLimits, type FloodLimits } from '../core/flood';
import type { SettingsStore } from '../core/ports';
import { Sweeper } from '../core/sweeper';
import { UploadService } from '../core/upload-service';
import { SharpImageProcessor } from '../imaging/sharp-image-processor';

export type Env = Readonly<Record<string, string | undefined>>;

/** Store calls give up well before the gateway's 29 s; the SDK retries a bounded number of times. */
const CLIENT_OPTIONS = {
  maxAttempts: 3,
  requestHandler: { connectionTimeout: 2_000, requestTimeout: 8_000 },
} as const;

export interface Services {
  config: Readonly<Config>;
  service: UploadService;
  sweeper: Sweeper;
}

/** Everything, built once per cold start: configuration, clients, adapters, the upload service and the sweeper. */
export function buildServices(env: Env, logger: Logger): Services {
  const config = loadConfig(env);
  // Local stand-ins are reached by endpoint variables; S3 then needs path-style addressing.
  const s3 = new S3Client({ ...CLIENT_OPTIONS, forcePathStyle: Boolean(env['AWS_ENDPOINT_URL_S3']) });
  const db = DynamoDBDocumentClient.from(new DynamoDBClient(CLIENT_OPTIONS), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const settings = new SsmSettingsStore(new SSMProvider({ awsSdkV3Client: new SSMClient(CLIENT_OPTIONS) }), config.parameters, {
    apiKeySeconds: config.keyCacheSeconds,
    floodLimitsSeconds: config.floodLimitsCacheSeconds,
  });
  const images = new DynamoImageRepository(db, config.tableName);
  const objects = new S3ObjectStore(s3, config.bucketName);
  const duplicates = new DynamoDuplicateIndex(db, config.tableName);
  const clock = { nowMs: () => Date.now(), sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) };
  const service = new UploadService({
    rules: {
      publicUrl: config.publicUrl,
      timeZone: config.timeZone,
      maxUploadBytes: config.maxUploadBytes,
      maxUrlUploadBytes: config.maxUrlUploadBytes,
      naming: config.naming,
      idPadding: config.idPadding,
      forcedExpirationSeconds: config.forcedExpirationSeconds,
      duplicates: config.duplicates,
    },
    settings,
    images,
    objects,
    processor: new SharpImageProcessor({
      maxPixels: config.maxPixels,
      maxFrames: config.maxFrames,
      thumbSize: config.thumbSize,
      mediumWidth: config.mediumWidth,
      keepMetadata: config.keepMetadata,
    }),
    fetcher: new SafeUrlFetcher({ allowHosts: config.urlFetchAllowHosts }),
    flood: new FloodGuard(new DynamoCounterStore(db, config.tableName), floodLimitsReader(settings, logger)),
    duplicates,
    clock,
    random: {
      hex: (chars) =>
        randomBytes(Math.ceil(chars / 2))
          .toString('hex')
          .slice(0, chars),
    },
    logger,
  });
  return { config, service, sweeper: new Sweeper({ images, objects, duplicates, clock, logger }) };
}

/** Flood limits from their parameter; a bad parameter is logged once per change and its bad parts get the defaults. */
function floodLimitsReader(settings: SettingsStore, logger: Logger): () => Promise<FloodLimits> {
  let last: { text: string | undefined; limits: FloodLimits } | undefined;
  return async () => {
    const text = await settings.floodLimits();
    if (last && last.text === text) return last.limits;
    const { limits, problems } = parseFloodLimits(text);
    if (problems.length > 0) logger.error('flood-limits parameter has problems; defaults used for them', { problems, limits });
    last = { text, limits };
    return limits;
  };
}
