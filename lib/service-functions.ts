import * as path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import { BUCKET_LAYOUT } from '../functions/adapters/bucket-layout';
import { apiParameters, type SettingsParameters } from '../functions/adapters/parameter-names';
import { TABLE_SCHEMA } from '../functions/adapters/table-schema';
import { NSFW_MODEL_FILE } from '../functions/imaging/nsfw-classifier';
import type { Construct, IConstruct } from 'constructs';
import { acknowledge, acknowledgeNoTracing, acknowledgeServerless } from './nag-suppressions';
import type { DeploymentSettings } from './settings';
import { StackPart } from './stack-part';
import type { Storage } from './storage';

export const FUNCTIONS = path.join(__dirname, '..', 'functions');
/** Every function of the stack: Node.js 24 (22 reaches end of life in April 2027); the code also runs on Node 20. */
export const RUNTIME = lambda.Runtime.NODEJS_24_X;
/**
 * sharp's Linux binary for the function's architecture, installed into the bundle by npm (no Docker); onnxruntime's
 * install script, which would fetch GPU libraries from outside the registry, skipped (npm 11 does not run it anyway).
 */
const BUNDLING_ENV = {
  npm_config_os: 'linux',
  npm_config_cpu: 'arm64',
  npm_config_libc: 'glibc',
  ONNXRUNTIME_NODE_INSTALL: 'skip',
};
/** onnxruntime-node ships every platform's binaries (about 290 MB): the function keeps linux/arm64's (25 MB). */
const ONNXRUNTIME_BINARIES = 'node_modules/onnxruntime-node/bin/napi-v6';

/**
 * The API's bundle: its code, sharp and onnxruntime as modules of their own, the HEIC decoder too (2 MB of JavaScript
 * and WebAssembly that only a HEIC upload needs: out of the bundle, it costs no cold start) and the BMP decoder (both
 * run in a worker thread, which loads them by path: `functions/imaging/foreign-decoder.ts`), and the NSFW model beside
 * `index.js` (where `functions/imaging/nsfw-classifier.ts` looks for it). Not minified: measured, it loaded no faster
 * (`docs/performance.md`, "Cold start").
 */
export const API_BUNDLING: nodejs.BundlingOptions = {
  bundleAwsSDK: true,
  nodeModules: ['sharp', 'onnxruntime-node', 'heic-decode', 'bmp-ts'],
  environment: BUNDLING_ENV,
  sourceMap: true,
  commandHooks: {
    beforeBundling: () => [],
    beforeInstall: () => [],
    // in Node, not shell commands: a deploy from Windows bundles as one from Linux or macOS
    afterBundling: (_inputDir: string, outputDir: string) => [
      [
        process.execPath,
        path.join(__dirname, '..', 'scripts', 'bundling', 'finish-api-bundle.cjs'),
        outputDir,
        path.join(FUNCTIONS, 'imaging', 'models', NSFW_MODEL_FILE),
        ONNXRUNTIME_BINARIES,
      ]
        .map((argument) => `"${argument}"`)
        .join(' '),
    ],
  },
};
const SWEEP_EVERY = Duration.minutes(5);
/** Why neither the sweep nor its schedule has a dead-letter queue (cdk-nag's Serverless pack). */
const SWEEP_RETRIED =
  'A failed or lost run leaves its work due, and the next run, 5 minutes on, takes it; the SweepNotRun and sweep failure alarms notice runs that stop.';
/** The API function's timeout: under API Gateway's 29 s, so that its answer, not the gateway's, reaches the client. */
export const API_TIMEOUT = Duration.seconds(28);
/** Stack traces mapped to the TypeScript sources, for the sweep, whose cold start does not matter. */
const SOURCE_MAPS = '--enable-source-maps';

/** Every function's role holds AWSLambdaBasicExecutionRole (its logs), which cdk-nag names; accepted, with the reason. */
export function acknowledgeLogsRole(scope: IConstruct): void {
  acknowledge(
    scope,
    'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    'AWSLambdaBasicExecutionRole grants only writing to CloudWatch Logs, which every function needs.',
  );
}

export interface ServiceFunctionsProps {
  settings: DeploymentSettings;
  storage: Pick<Storage, 'bucket' | 'table'>;
  /** The parameters the functions read. */
  names: SettingsParameters;
  /** SHA-256 of the origin secret CloudFront sends, which the API function accepts whatever the parameter says. */
  originSecretSha256: string;
}

/**
 * The API function and the sweep, with exactly the rights their code uses on the stores (`docs/deployment.md`, "Who
 * may do what": the IAM-enforced twin proves them sufficient), and the sweep's schedule.
 */
export class ServiceFunctions extends StackPart {
  readonly api: nodejs.NodejsFunction;
  readonly sweep: nodejs.NodejsFunction;
  private readonly storage: Pick<Storage, 'bucket' | 'table'>;

  constructor(scope: Construct, id: string, props: ServiceFunctionsProps) {
    super(scope, id);
    const { settings, storage, originSecretSha256 } = props;
    this.storage = storage;
    const environment = {
      ...settings.functionEnv,
      BUCKET_NAME: storage.bucket.bucketName,
      TABLE_NAME: storage.table.tableName,
      PARAMETER_PREFIX: settings.parameterPrefix,
      // a removed image's record is kept as long as the bucket keeps its files, for a restore
      KEEP_DELETED_DAYS: String(settings.keepDeletedDays),
      ORIGIN_VERIFY: 'required',
      // the namespace of the service's own metrics (Powertools' variable): two copies in a region share none
      POWERTOOLS_METRICS_NAMESPACE: settings.stackName,
      // fewer glibc malloc arenas: libvips' threads otherwise fragment native memory (docs/reliability.md)
      MALLOC_ARENA_MAX: '2',
    };
    this.api = new nodejs.NodejsFunction(this.scope, 'ApiFunction', {
      entry: path.join(FUNCTIONS, 'roots', 'handler.ts'),
      handler: 'handler',
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: settings.memorySizeMb,
      timeout: API_TIMEOUT,
      ...(settings.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: settings.reservedConcurrency }),
      // no source maps applied at run time: they cost the API's every cold start a fifth more (`docs/performance.md`,
      // "Cold start"); the asset keeps them, for `npm run map-stack`
      // the digest of the origin secret CloudFront sends, accepted whatever its parameter says (docs/deployment.md)
      environment: { ...environment, ORIGIN_SECRET_SHA256: originSecretSha256 },
      logGroup: this.logGroup('ApiLogs'),
      bundling: API_BUNDLING,
    });
    this.sweep = new nodejs.NodejsFunction(this.scope, 'SweepFunction', {
      entry: path.join(FUNCTIONS, 'roots', 'sweep.ts'),
      handler: 'handler',
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.minutes(4),
      // No reserved concurrency: a new account's quota is often 10, and reserving any fails the deploy. Two runs that
      // overlap are safe: every step of a removal is idempotent.
      environment: { ...environment, NODE_OPTIONS: SOURCE_MAPS },
      logGroup: this.logGroup('SweepLogs'),
      bundling: { bundleAwsSDK: true, sourceMap: true },
    });
    for (const fn of [this.api, this.sweep]) acknowledgeLogsRole(fn);
    acknowledgeNoTracing([this.api, this.sweep]);
    acknowledgeServerless(
      this.api,
      'LambdaDLQ',
      'Invoked synchronously by API Gateway: every failure is answered to the client; a DLQ holds only asynchronous invocations.',
    );
    acknowledgeServerless(this.sweep, 'LambdaDLQ', SWEEP_RETRIED);
    this.grantStores(props.names);
    this.schedule();
  }

  /** The rights on the bucket, the table and the parameters, each statement with the code that needs it. */
  private grantStores(names: SettingsParameters): void {
    const { bucket, table } = this.storage;
    const allow = (fn: nodejs.NodejsFunction, actions: string[], resources: string[]): void =>
      fn.addToRolePolicy(new iam.PolicyStatement({ actions, resources }));
    const objectsArn = bucket.arnForObjects(`${BUCKET_LAYOUT.imagesPrefix}*`);
    const stagedArn = bucket.arnForObjects(`${BUCKET_LAYOUT.stagingPrefix}*`);
    // get: a HEAD of the files of a record written alongside their puts (a waiting duplicate, the sweep); listing the
    // bucket makes a missing one answer 404 rather than 403
    allow(this.api, ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'], [objectsArn]);
    // the two-step upload: sign PUTs to the staging prefix (the signer needs the right it grants), read and remove there
    allow(this.api, ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'], [stagedArn]);
    allow(this.api, ['s3:ListBucket'], [bucket.bucketArn]);
    // the blocked pictures' list, which the operator's tool writes: read only
    allow(this.api, ['s3:GetObject'], [bucket.arnForObjects(`${BUCKET_LAYOUT.moderationPrefix}*`)]);
    this.acknowledgePrefix(
      this.api,
      'moderation',
      'The operator\'s lists are written under one prefix with a new name per change (`docs/moderation.md`, "Block lists at scale"): the function only reads there.',
    );
    this.acknowledgePrefix(
      this.api,
      'staging',
      'Staged uploads are named per upload URL, so their actions need `<bucket>/staging/*`: one prefix, put (to sign upload URLs), get and delete.',
    );
    allow(this.sweep, ['s3:GetObject', 's3:DeleteObject'], [objectsArn]);
    // staged uploads no token can use any more (a PUT after its upload, a token never used): listed, then removed
    allow(this.sweep, ['s3:DeleteObject'], [stagedArn]);
    this.acknowledgePrefix(
      this.sweep,
      'staging',
      'Staged uploads are named per upload URL; the sweep only deletes there, what no token can use any more.',
    );
    allow(this.sweep, ['s3:ListBucket'], [bucket.bucketArn]);
    for (const fn of [this.api, this.sweep])
      this.acknowledgePrefix(
        fn,
        'images',
        'Object keys are made per upload, so object actions need `<bucket>/images/*`: one prefix of this one bucket, only put, get (a HEAD: are the files there?) and delete.',
      );
    allow(
      this.api,
      ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
      [table.tableArn],
    );
    // the sweep reads and removes records, settles name claims and adds the day's figures (UpdateItem)
    allow(this.sweep, ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'], [table.tableArn]);
    allow(this.sweep, ['dynamodb:Query'], [`${table.tableArn}/index/${TABLE_SCHEMA.sweepIndex.name}`]);
    // settings are read in one GetParameters call (IAM authorizes it on its own, apart from GetParameter): the API
    // reads all of them, the sweep only the distribution it purges
    allow(
      this.api,
      ['ssm:GetParameters'],
      Object.values(apiParameters(names)).map((name) => this.parameterArn(name)),
    );
    allow(this.sweep, ['ssm:GetParameters'], [this.parameterArn(names.distributionId)]);
  }

  /**
   * Lets the sweep invalidate the distribution's cached files: deleted, expired and taken-down images are invalidated
   * by the sweep alone, in batches of a bounded number of paths (a delete link leaves its purge to it), so that no
   * request to the API can spend invalidations.
   */
  grantPurge(distribution: cloudfront.IDistribution): void {
    this.sweep.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['cloudfront:CreateInvalidation'], resources: [distribution.distributionArn] }),
    );
  }

  /** The sweep runs every few minutes. */
  private schedule(): void {
    const schedule = new events.Rule(this.scope, 'SweepSchedule', {
      description: 'Removes expired images, dead uploads and unfinished deletes',
      schedule: events.Schedule.rate(SWEEP_EVERY),
      targets: [new targets.LambdaFunction(this.sweep)],
    });
    acknowledgeServerless(schedule, 'EventBusDLQ', SWEEP_RETRIED);
  }

  private acknowledgePrefix(fn: nodejs.NodejsFunction, prefix: 'images' | 'staging' | 'moderation', reason: string): void {
    acknowledge(fn, `IAM5[Resource::<${this.logicalIdOf(this.storage.bucket)}.Arn>/${prefix}/*]`, reason);
  }
}
