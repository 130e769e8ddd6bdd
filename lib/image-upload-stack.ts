import * as path from 'node:path';
import {
  Annotations,
  CfnOutput,
  CfnResource,
  CustomResource,
  Duration,
  RemovalPolicy,
  Stack,
  type CfnElement,
  type StackProps,
} from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import * as cr from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';
import { TABLE_SCHEMA } from '../functions/adapters/table-schema';
import { SETTINGS } from '../functions/config';
import { BUCKET_LAYOUT } from '../functions/adapters/bucket-layout';
import { apiParameters, parameterNames } from '../functions/adapters/parameter-names';
import {
  BINARY_MEDIA_TYPES,
  maxBodyBytes,
  ORIGIN_VERIFY_HEADER,
  requestTooLargeMessage,
  VIEWER_IMAGE_HEADERS,
} from '../functions/http/edge-contract';
import { acknowledge } from './nag-suppressions';
import { ApiFirewall } from './api-firewall';
import { Monitoring } from './monitoring';
import { readDeploymentSettings } from './settings';
import { viewerRequestCode } from './viewer-request';

const FUNCTIONS = path.join(__dirname, '..', 'functions');
/** sharp's Linux binary for the function's architecture, installed into the bundle by npm (no Docker). */
const SHARP_BUNDLING_ENV = { npm_config_os: 'linux', npm_config_cpu: 'arm64', npm_config_libc: 'glibc' };
const SWEEP_EVERY = Duration.minutes(5);
const STAGE = 'v1';
/** Every function of the stack: Node.js 24 (22 reaches end of life in April 2027); the code also runs on Node 20. */
const RUNTIME = lambda.Runtime.NODEJS_24_X;
/** How long every log group of the stack keeps its lines. */
const LOG_RETENTION = logs.RetentionDays.ONE_MONTH;

/**
 * One JSON line per request. The resource path, never the path: paths hold delete tokens. `errorType` is the
 * gateway's own error, if any (THROTTLED feeds the throttle alarm).
 */
const ACCESS_LOG_FORMAT = apigateway.AccessLogFormat.custom(
  JSON.stringify({
    requestId: apigateway.AccessLogField.contextRequestId(),
    ip: apigateway.AccessLogField.contextIdentitySourceIp(),
    requestTime: apigateway.AccessLogField.contextRequestTime(),
    httpMethod: apigateway.AccessLogField.contextHttpMethod(),
    resourcePath: apigateway.AccessLogField.contextResourcePath(),
    status: apigateway.AccessLogField.contextStatus(),
    protocol: apigateway.AccessLogField.contextProtocol(),
    responseLength: apigateway.AccessLogField.contextResponseLength(),
    errorType: apigateway.AccessLogField.contextErrorResponseType(),
    integrationLatency: apigateway.AccessLogField.contextIntegrationLatency(),
  }),
);

/** The error envelope of the contract (section 6), for answers the gateway gives without the function. */
function envelope(status: number, code: number, message: string, statusTxt: string): Record<string, string> {
  return { 'application/json': JSON.stringify({ status_code: status, error: { message, code }, status_txt: statusTxt }) };
}

/**
 * The image upload service: CloudFront in front of API Gateway (the function) and S3 (the files), DynamoDB for the
 * records, SSM for the key and the flood limits, and an EventBridge schedule for the expiration sweep.
 */
export class ImageUploadStack extends Stack {
  readonly apiFunction: nodejs.NodejsFunction;
  readonly sweepFunction: nodejs.NodejsFunction;
  readonly distribution: cloudfront.Distribution;
  readonly api: apigateway.RestApi;
  readonly monitoring: Monitoring;
  /** Turns the table's deletion protection on once everything else exists (retained data only). */
  private protectRecords: CustomResource | undefined;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);
    const settings = readDeploymentSettings(this.node);
    const prefix = settings.parameterPrefix;
    // retain: the data outlives the stack and every update, but a first deploy that fails removes it, empty as it is
    const removalPolicy = settings.removal === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;
    const names = parameterNames(prefix);
    const parameterArn = (name: string): string =>
      this.formatArn({ service: 'ssm', resource: 'parameter', resourceName: name.replace(/^\//, '') });

    // ---- storage -------------------------------------------------------------------------------------------------
    const bucket = new s3.Bucket(this, 'Images', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        { abortIncompleteMultipartUploadAfter: Duration.days(1) },
        // two-step uploads nobody finished: their staged bytes go within a day
        { prefix: BUCKET_LAYOUT.stagingPrefix, expiration: Duration.days(BUCKET_LAYOUT.stagingExpirationDays) },
      ],
      removalPolicy,
      autoDeleteObjects: settings.removal === 'destroy',
    });
    acknowledge(
      bucket,
      'S1',
      'Objects are read only through CloudFront and written only by the function; S3 access logs would hold CloudFront origin fetches and function writes, which API Gateway access logs and the function logs already record.',
    );

    const table = new dynamodb.TableV2(this, 'Records', {
      partitionKey: { name: TABLE_SCHEMA.partitionKey, type: dynamodb.AttributeType.STRING },
      billing: dynamodb.Billing.onDemand(),
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      globalSecondaryIndexes: [
        {
          indexName: TABLE_SCHEMA.sweepIndex.name,
          partitionKey: { name: TABLE_SCHEMA.sweepIndex.partitionKey, type: dynamodb.AttributeType.STRING },
          sortKey: { name: TABLE_SCHEMA.sweepIndex.sortKey, type: dynamodb.AttributeType.NUMBER },
          projectionType: dynamodb.ProjectionType.KEYS_ONLY,
        },
      ],
      removalPolicy,
    });

    // ---- settings in SSM -----------------------------------------------------------------------------------------
    // The parameters the operator owns (the key, the flood limits) and the secrets (id salt, origin secret): made once
    // by the setup step when missing, never overwritten by a deploy.
    const setupFunction = new nodejs.NodejsFunction(this, 'SetupFunction', {
      entry: path.join(FUNCTIONS, 'setup', 'handler.ts'),
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      timeout: Duration.seconds(30),
      logGroup: this.logGroup('SetupLogs'),
      // the SDK version the code was tested with, not the runtime's (timeouts and retries depend on it)
      bundling: { bundleAwsSDK: true },
    });
    setupFunction.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['ssm:GetParameter', 'ssm:PutParameter'],
        resources: [names.apiKey, names.floodLimits, names.idSalt, names.originSecret].map(parameterArn),
      }),
    );
    const setupProvider = new cr.Provider(this, 'SetupProvider', {
      onEventHandler: setupFunction,
      logGroup: this.logGroup('SetupProviderLogs'),
    });
    acknowledge(
      setupProvider,
      `IAM5[Resource::<${this.logicalIdOf(setupFunction)}.Arn>:*]`,
      "The provider framework may invoke any version of the setup function; CDK's own construct.",
    );
    acknowledge(setupProvider, 'L1', "The provider framework's own function; CDK chooses its runtime.");
    const setup = new CustomResource(this, 'Setup', {
      serviceToken: setupProvider.serviceToken,
      // The names it looks after: a change of them (a parameter added) runs the setup again on the next deploy.
      properties: { ParameterPrefix: prefix, Creates: [names.apiKey, names.floodLimits, names.idSalt, names.originSecret] },
    });
    const originSecret = setup.getAttString('OriginSecret');
    if (settings.removal === 'retain') {
      // Deletion protection comes last, from the setup step: as a property of the table it would stop a failed first
      // deploy from removing the table. Every other resource of the stack is made before it (below).
      this.protectRecords = new CustomResource(this, 'ProtectRecords', {
        serviceToken: setupProvider.serviceToken,
        properties: { ProtectTable: table.tableName },
      });
      setupFunction.addToRolePolicy(
        new iam.PolicyStatement({ actions: ['dynamodb:DescribeTable', 'dynamodb:UpdateTable'], resources: [table.tableArn] }),
      );
    }

    // ---- the function ----------------------------------------------------------------------------------------------
    const commonEnv = {
      ...settings.functionEnv,
      BUCKET_NAME: bucket.bucketName,
      TABLE_NAME: table.tableName,
      PARAMETER_PREFIX: prefix,
      ORIGIN_VERIFY: 'required',
      NODE_OPTIONS: '--enable-source-maps',
      // fewer glibc malloc arenas: libvips' threads otherwise fragment native memory (docs/reliability.md)
      MALLOC_ARENA_MAX: '2',
    };
    this.apiFunction = new nodejs.NodejsFunction(this, 'ApiFunction', {
      entry: path.join(FUNCTIONS, 'api', 'handler.ts'),
      handler: 'handler',
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: settings.memorySizeMb,
      timeout: Duration.seconds(28),
      ...(settings.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: settings.reservedConcurrency }),
      environment: commonEnv,
      logGroup: this.logGroup('ApiLogs'),
      bundling: {
        bundleAwsSDK: true,
        nodeModules: ['sharp'],
        environment: SHARP_BUNDLING_ENV,
        sourceMap: true,
      },
    });
    this.sweepFunction = new nodejs.NodejsFunction(this, 'SweepFunction', {
      entry: path.join(FUNCTIONS, 'api', 'sweep.ts'),
      handler: 'handler',
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.minutes(4),
      // No reserved concurrency: a new account's quota is often 10, and reserving any fails the deploy. Two runs that
      // overlap are safe: every step of a removal is idempotent.
      environment: commonEnv,
      logGroup: this.logGroup('SweepLogs'),
      bundling: { bundleAwsSDK: true, sourceMap: true },
    });
    this.apiFunction.node.addDependency(setup);
    for (const fn of [setupFunction, this.apiFunction, this.sweepFunction, setupProvider]) {
      acknowledge(
        fn,
        'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        'AWSLambdaBasicExecutionRole grants only writing to CloudWatch Logs, which every function needs.',
      );
    }

    // Least privilege: exactly the objects, table, index and parameters, with the actions the code uses.
    const objectsArn = bucket.arnForObjects(`${BUCKET_LAYOUT.imagesPrefix}*`);
    // get: a HEAD of the files of a record written alongside their puts (a waiting duplicate, the sweep); listing the
    // bucket makes a missing one answer 404 rather than 403
    this.apiFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'], resources: [objectsArn] }),
    );
    // the two-step upload: sign PUTs to the staging prefix (the signer needs the right it grants), read and remove there;
    // and list the bucket, so that reading a staged object nobody put answers 404 rather than 403
    const stagedArn = bucket.arnForObjects(`${BUCKET_LAYOUT.stagingPrefix}*`);
    this.apiFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'], resources: [stagedArn] }),
    );
    this.apiFunction.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
    acknowledge(
      this.apiFunction,
      `IAM5[Resource::<${this.logicalIdOf(bucket)}.Arn>/staging/*]`,
      'Staged uploads are named per upload URL, so their actions need `<bucket>/staging/*`: one prefix, put (to sign upload URLs), get and delete.',
    );
    this.sweepFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['s3:GetObject', 's3:DeleteObject'], resources: [objectsArn] }),
    );
    // staged uploads no token can use any more (a PUT after its upload, a token never used): listed, then removed
    this.sweepFunction.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:DeleteObject'], resources: [stagedArn] }));
    acknowledge(
      this.sweepFunction,
      `IAM5[Resource::<${this.logicalIdOf(bucket)}.Arn>/staging/*]`,
      'Staged uploads are named per upload URL; the sweep only deletes there, what no token can use any more.',
    );
    this.sweepFunction.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
    for (const fn of [this.apiFunction, this.sweepFunction]) {
      acknowledge(
        fn,
        `IAM5[Resource::<${this.logicalIdOf(bucket)}.Arn>/images/*]`,
        'Object keys are made per upload, so object actions need `<bucket>/images/*`: one prefix of this one bucket, only put, get (a HEAD: are the files there?) and delete.',
      );
    }
    const tableActions = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'];
    this.apiFunction.addToRolePolicy(new iam.PolicyStatement({ actions: tableActions, resources: [table.tableArn] }));
    // the sweep reads and removes records, settles name claims and adds the day's figures (UpdateItem)
    this.sweepFunction.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        resources: [table.tableArn],
      }),
    );
    this.sweepFunction.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [`${table.tableArn}/index/${TABLE_SCHEMA.sweepIndex.name}`],
      }),
    );
    // settings are read in one GetParameters call (IAM authorizes it on its own, apart from GetParameter): the API
    // reads all of them, the sweep only the distribution it purges
    this.apiFunction.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['ssm:GetParameters'],
        resources: Object.values(apiParameters(names)).map(parameterArn),
      }),
    );
    this.sweepFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['ssm:GetParameters'], resources: [parameterArn(names.distributionId)] }),
    );

    // ---- API Gateway -------------------------------------------------------------------------------------------
    const accessLogs = this.logGroup('GatewayAccessLogs');
    this.api = new apigateway.RestApi(this, 'Gateway', {
      description: 'Image upload API v1 (reached through CloudFront only)',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      binaryMediaTypes: [...BINARY_MEDIA_TYPES],
      deployOptions: {
        stageName: STAGE,
        throttlingRateLimit: settings.throttleRateLimit,
        throttlingBurstLimit: settings.throttleBurstLimit,
        accessLogDestination: new apigateway.LogGroupLogDestination(accessLogs),
        accessLogFormat: ACCESS_LOG_FORMAT,
        // errors only, and never data traces: those would log request bodies and queries, keys included
        loggingLevel: apigateway.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
      },
      // API Gateway logs with one role per account and region (AWS::ApiGateway::Account): setting it replaces the role
      // any other API of the account logs with, and it stays after a destroy (docs/deployment.md)
      cloudWatchRole: settings.gatewayAccountRole,
    });
    // API Gateway makes its execution log group itself, on the first error, without a retention; made here first.
    const executionLogs = this.logGroup('GatewayExecutionLogs', `API-Gateway-Execution-Logs_${this.api.restApiId}/${STAGE}`);
    this.api.deploymentStage.node.addDependency(executionLogs);
    acknowledge(
      this.api,
      'APIG2',
      "Proxy integration: the function validates every parameter and body (multipart, urlencoded, base64) and answers the contract's errors; a gateway model cannot describe multipart bodies.",
    );
    acknowledge(
      this.api,
      'APIG4',
      "The Chevereto API authenticates with its own key (`key` or `X-API-Key`), checked by the function against SSM; pages are public by design. Requests must also carry the distribution's secret origin header.",
    );
    acknowledge(this.api, 'COG4', 'No user pools: guest uploads with one API key (see APIG4).');
    acknowledge(
      this.api,
      'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      'AmazonAPIGatewayPushToCloudWatchLogs is the policy AWS documents for the account-level role API Gateway logs with.',
    );
    if (settings.firewall) {
      new ApiFirewall(this, 'ApiFirewall', {
        stage: this.api.deploymentStage,
        originSecret,
        ratePerFiveMinutes: settings.firewallRateLimit,
      });
    } else {
      acknowledge(
        this.api,
        'APIG3',
        "The operator turned the firewall off (-c firewall=false): the function still refuses requests without the distribution's origin secret, and enforces flood limits per client IP.",
      );
    }
    const integration = new apigateway.LambdaIntegration(this.apiFunction, { proxy: true });
    // One root proxy: every method and path reaches the function, whose router is the only route table.
    this.api.root.addMethod('ANY', integration);
    this.api.root.addResource('{proxy+}').addMethod('ANY', integration);
    const gatewayResponses: Array<[apigateway.ResponseType, string, number, number, string, string]> = [
      // what API Gateway answers past its own 10 MB, if it takes a gateway response there (most requests that large
      // are answered at the edge by the viewer-request function, with the same message)
      [
        apigateway.ResponseType.REQUEST_TOO_LARGE,
        '413',
        413,
        400,
        requestTooLargeMessage(maxBodyBytes(BINARY_MEDIA_TYPES[0])),
        'Payload Too Large',
      ],
      // the stage's throttle, and the account's: a 429 the client may retry after a second
      [apigateway.ResponseType.THROTTLED, '429', 429, 130, 'Too many requests, try again', 'Too Many Requests'],
      // Lambda refused to run the function (throttled past its concurrency), or could not be reached
      [apigateway.ResponseType.INTEGRATION_FAILURE, '503', 503, 900, 'Service unavailable, try again', 'Service Unavailable'],
      [apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN, '404', 404, 404, 'Not found', 'Not Found'],
      [apigateway.ResponseType.INTEGRATION_TIMEOUT, '504', 504, 900, 'Service unavailable, try again', 'Gateway Timeout'],
      [apigateway.ResponseType.DEFAULT_5XX, '503', 503, 900, 'Service unavailable, try again', 'Service Unavailable'],
    ];
    for (const [type, statusCode, status, code, message, statusTxt] of gatewayResponses) {
      this.api.addGatewayResponse(`Gateway${status}${type.responseType}`, {
        type,
        statusCode,
        templates: envelope(status, code, message, statusTxt),
        responseHeaders: {
          'X-Content-Type-Options': "'nosniff'",
          'Cache-Control': "'no-store'",
          // a throttled or refused request may be sent again a second later
          ...(status === 429 || status === 503 ? { 'Retry-After': "'1'" } : {}),
        },
      });
    }

    // ---- CloudFront: the one public base URL -----------------------------------------------------------------------
    const securityHeaders = new cloudfront.ResponseHeadersPolicy(this, 'SecurityHeaders', {
      securityHeadersBehavior: {
        contentTypeOptions: { override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: false, override: true },
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: false },
      },
    });
    // the files: the same, with a browser lifetime of hours (the edge keeps them a year and is purged on delete)
    const imageHeaders = new cloudfront.ResponseHeadersPolicy(this, 'ImageHeaders', {
      securityHeadersBehavior: {
        contentTypeOptions: { override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: false, override: true },
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: false },
        contentSecurityPolicy: { contentSecurityPolicy: VIEWER_IMAGE_HEADERS['Content-Security-Policy'], override: true },
      },
      customHeadersBehavior: {
        customHeaders: [{ header: 'Cache-Control', value: VIEWER_IMAGE_HEADERS['Cache-Control'], override: true }],
      },
    });
    const apiOrigin = new origins.RestApiOrigin(this.api, { customHeaders: { [ORIGIN_VERIFY_HEADER]: originSecret } });
    // Answers requests too large for the function's event, and writes the client's IP for the API (overwriting
    // whatever a client sent in that header).
    const viewerRequest = new cloudfront.Function(this, 'ViewerAddress', {
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      comment: 'Answers 413 to bodies the API cannot take; writes the viewer IP into the request',
      code: cloudfront.FunctionCode.fromInline(viewerRequestCode()),
    });
    const toApi: cloudfront.BehaviorOptions = {
      origin: apiOrigin,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
      cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
      // everything the viewer sent but Host: API Gateway routes by its own
      originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      functionAssociations: [{ function: viewerRequest, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
      responseHeadersPolicy: securityHeaders,
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
    };
    const certificate = settings.certificateArn
      ? acm.Certificate.fromCertificateArn(this, 'Certificate', settings.certificateArn)
      : undefined;
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'Image upload service',
      defaultBehavior: toApi,
      additionalBehaviors: {
        // uploads are never redirected: plain HTTP is refused rather than turned into a GET
        '/api/*': { ...toApi, viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY },
        '/images/*': {
          // LIST as well as READ: S3 then answers a missing file with 404, not 403 (it hides what it may not list)
          origin: origins.S3BucketOrigin.withOriginAccessControl(bucket as s3.IBucket, {
            originAccessLevels: [cloudfront.AccessLevel.READ, cloudfront.AccessLevel.LIST],
          }),
          allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
          cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
          responseHeadersPolicy: imageHeaders,
          viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        },
      },
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      ...(settings.domainName && certificate
        ? {
            domainNames: [settings.domainName],
            certificate,
            minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
          }
        : {}),
    });
    Annotations.of(this.distribution).acknowledgeWarning(
      '@aws-cdk/aws-cloudfront-origins:listBucketSecurityRisk',
      'The bucket origin serves only /images/* (never the default behavior or the root), and no query string reaches it, so no request can list the bucket.',
    );
    acknowledge(this.distribution, 'CFR1', "An image host serves everyone; geo restriction is the operator's choice.");
    acknowledge(this.distribution, 'CFR2', 'WAF is optional (cost); see APIG3.');
    acknowledge(
      this.distribution,
      'CFR3',
      'Viewer logs of every image fetch cost storage; uploads and pages are logged by API Gateway access logs and the function.',
    );
    if (!settings.domainName) {
      acknowledge(
        this.distribution,
        'CFR4',
        "The default *.cloudfront.net certificate allows TLS 1.0 by CloudFront's rule; set domainName and certificateArn to enforce TLS 1.2.",
      );
    }
    const baseUrl = `https://${settings.domainName ?? this.distribution.distributionDomainName}`;
    // Read by the function at cold start: its URL cannot be in its environment (CloudFront depends on the function).
    new ssm.StringParameter(this, 'PublicUrl', { parameterName: names.publicUrl, stringValue: baseUrl });
    new ssm.StringParameter(this, 'DistributionIdParameter', {
      parameterName: names.distributionId,
      stringValue: this.distribution.distributionId,
    });
    // Deleted, expired and taken-down images are invalidated in CloudFront by the sweep alone, in batches of a bounded
    // number of paths (a delete link leaves its purge to it), so no request to the API can spend invalidations.
    this.sweepFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['cloudfront:CreateInvalidation'], resources: [this.distribution.distributionArn] }),
    );

    // ---- the sweep -----------------------------------------------------------------------------------------------
    new events.Rule(this, 'SweepSchedule', {
      description: 'Removes expired images, dead uploads and unfinished deletes',
      schedule: events.Schedule.rate(SWEEP_EVERY),
      targets: [new targets.LambdaFunction(this.sweepFunction)],
    });

    this.monitoring = new Monitoring(this, 'Monitoring', {
      apiFunction: this.apiFunction,
      sweepFunction: this.sweepFunction,
      api: this.api,
      accessLogs,
      table,
      alarmEmail: settings.alarmEmail,
      alarmTopicArn: settings.alarmTopicArn,
    });
    if (!settings.alarmEmail && !settings.alarmTopicArn)
      Annotations.of(this).addWarningV2(
        'image-upload:alarms-reach-no-one',
        'NO ONE WILL RECEIVE THE ALARMS: deploy with -c alarmEmail=you@example.com (and confirm the e-mail AWS sends), or -c alarmTopicArn=arn:aws:sns:... for a topic of your own. Without it, the alarms only change state in the console.',
      );
    if (settings.throttleBurstLimit > settings.apiConcurrency)
      Annotations.of(this).addWarningV2(
        'image-upload:throttle-above-concurrency',
        `The stage lets ${settings.throttleBurstLimit} requests through at once, but the API function can run ${settings.apiConcurrency}: past that, Lambda refuses them (503) before the gateway would (429). Set -c accountConcurrency to your account's Lambda concurrency quota, or lower throttleBurstLimit.`,
      );

    this.giveEveryFunctionALogGroup();
    for (const child of this.node.children)
      if (this.protectRecords && child !== this.protectRecords) this.protectRecords.node.addDependency(child);

    new CfnOutput(this, 'BaseUrl', { value: baseUrl, description: 'The public base URL: uploads go to BASE/api/1/upload' });
    new CfnOutput(this, 'ApiKeyParameter', { value: names.apiKey, description: 'SSM SecureString holding the API key' });
    new CfnOutput(this, 'FloodLimitsParameter', {
      value: names.floodLimits,
      description: 'SSM parameter of the flood limits (JSON); edits survive every deploy',
    });
    new CfnOutput(this, 'IdPadding', {
      value: settings.functionEnv['ID_PADDING'] ?? SETTINGS.ID_PADDING.default,
      description: 'The id codec padding (ID_PADDING): npm run admin reads it to turn ids into links',
    });
    new CfnOutput(this, 'BucketName', { value: bucket.bucketName });
    new CfnOutput(this, 'TableName', { value: table.tableName });
    new CfnOutput(this, 'DistributionId', { value: this.distribution.distributionId });
    new CfnOutput(this, 'DirectApiUrl', {
      value: this.api.url,
      description: 'The execute-api address around CloudFront: every call there must be refused (npm run smoke checks)',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.monitoring.topic.topicArn,
      description: 'SNS topic of the alarms: subscribe to it (or deploy with -c alarmEmail=...)',
    });
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
    new CfnOutput(this, 'DistributionDomainName', {
      value: this.distribution.distributionDomainName,
      description: 'Where a custom domain points (CNAME or alias)',
    });
  }

  /** A log group of the stack: kept a month, removed with the stack. */
  private logGroup(id: string, logGroupName?: string): logs.LogGroup {
    return new logs.LogGroup(this, id, {
      retention: LOG_RETENTION,
      removalPolicy: RemovalPolicy.DESTROY,
      ...(logGroupName === undefined ? {} : { logGroupName }),
    });
  }

  /**
   * Every function's logs go to a log group with a retention: CDK's own providers (the bucket's auto-delete) get one
   * here; a function of this stack without one fails the synth, rather than logging forever.
   */
  private giveEveryFunctionALogGroup(): void {
    for (const construct of this.node.findAll()) {
      if (!CfnResource.isCfnResource(construct) || construct.cfnResourceType !== 'AWS::Lambda::Function') continue;
      if (construct instanceof lambda.CfnFunction) {
        if (!construct.loggingConfig) throw new Error(`the function ${construct.node.path} has no log group of the stack`);
        continue;
      }
      const group = this.logGroup(`${construct.node.scope?.node.id ?? construct.node.id}Logs`.replace(/[^A-Za-z0-9]/g, ''));
      construct.node.addDependency(group);
      construct.addPropertyOverride('LoggingConfig.LogGroup', group.logGroupName);
    }
  }

  /** The logical id CloudFormation knows a construct's resource by (cdk-nag names findings with it). */
  private logicalIdOf(construct: Construct): string {
    return this.getLogicalId(construct.node.defaultChild as CfnElement);
  }
}
