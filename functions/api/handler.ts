import { randomBytes } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { DynamoImageRepository } from '../adapters/dynamo-image-repository';
import { S3ObjectStore } from '../adapters/s3-object-store';
import { SsmSettingsStore } from '../adapters/ssm-settings-store';
import { UnavailableSourceFetcher } from '../adapters/unavailable-source-fetcher';
import { loadConfig } from '../config';
import { UploadService } from '../core/upload-service';
import { createRouter, type Router } from '../http/router';
import { SharpImageProcessor } from '../imaging/sharp-image-processor';

type Env = Readonly<Record<string, string | undefined>>;
export type ApiHandler = (event: APIGatewayProxyEvent, context?: Context) => Promise<APIGatewayProxyResult>;

/** Store calls give up well before the gateway's 29 s; the SDK retries a bounded number of times. */
const CLIENT_OPTIONS = {
  maxAttempts: 3,
  requestHandler: { connectionTimeout: 2_000, requestTimeout: 8_000 },
} as const;

/** Builds everything once per cold start: configuration, clients, adapters, the service and the router. */
export function buildRouter(env: Env, logger: Logger): Router {
  const config = loadConfig(env);
  // Local stand-ins are reached by endpoint variables; S3 then needs path-style addressing.
  const s3 = new S3Client({ ...CLIENT_OPTIONS, forcePathStyle: Boolean(env['AWS_ENDPOINT_URL_S3']) });
  const db = DynamoDBDocumentClient.from(new DynamoDBClient(CLIENT_OPTIONS), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const ssm = new SSMProvider({ awsSdkV3Client: new SSMClient(CLIENT_OPTIONS) });
  const service = new UploadService({
    rules: {
      publicUrl: config.publicUrl,
      timeZone: config.timeZone,
      maxUploadBytes: config.maxUploadBytes,
      maxUrlUploadBytes: config.maxUrlUploadBytes,
      naming: config.naming,
      idPadding: config.idPadding,
      forcedExpirationSeconds: config.forcedExpirationSeconds,
    },
    settings: new SsmSettingsStore(ssm, config.parameters, config.keyCacheSeconds),
    images: new DynamoImageRepository(db, config.tableName),
    objects: new S3ObjectStore(s3, config.bucketName),
    processor: new SharpImageProcessor({
      maxPixels: config.maxPixels,
      maxFrames: config.maxFrames,
      thumbSize: config.thumbSize,
      mediumWidth: config.mediumWidth,
      keepMetadata: config.keepMetadata,
    }),
    fetcher: new UnavailableSourceFetcher(),
    clock: { nowMs: () => Date.now() },
    random: {
      hex: (chars) =>
        randomBytes(Math.ceil(chars / 2))
          .toString('hex')
          .slice(0, chars),
    },
    logger,
  });
  return createRouter({ service, settings: config, logger });
}

/** A handler over its own environment; tests and the local server make several. */
export function createHandler(env: Env = process.env): ApiHandler {
  const logger = new Logger({ serviceName: 'image-upload' });
  let router: Router | undefined;
  return async (event, context) => {
    if (context) logger.addContext(context);
    router ??= buildRouter(env, logger);
    return router(event);
  };
}

/** The Lambda entry point. */
export const handler: ApiHandler = createHandler();
