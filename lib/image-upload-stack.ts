import { Annotations, CfnOutput, CfnResource, Stack, type StackProps } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { parameterNames, type SettingsParameters } from '../functions/adapters/parameter-names';
import { SETTINGS } from '../functions/settings-table';
import { Edge } from './edge';
import type { EdgeGuardStack } from './edge-guard-stack';
import { Gateway } from './gateway';
import { Monitoring } from './monitoring';
import { API_TIMEOUT, ServiceFunctions } from './service-functions';
import type { DeploymentSettings } from './settings';
import { readDeploymentSettings } from './settings-reader';
import { SetupStep } from './setup-step';
import { logGroupIn } from './stack-part';
import { Storage } from './storage';

/**
 * The image upload service: CloudFront in front of API Gateway (the function) and S3 (the files), DynamoDB for the
 * records, SSM for the key and the flood limits, and an EventBridge schedule for the expiration sweep. Each part is a
 * construct of its own (`docs/architecture.md`, `StackPart`) that makes its resources in the stack's scope, so that
 * their logical ids, and so a deployed stack's resources, stay what they were.
 */
export class ImageUploadStack extends Stack {
  readonly apiFunction: nodejs.NodejsFunction;
  readonly sweepFunction: nodejs.NodejsFunction;
  readonly distribution: cloudfront.Distribution;
  readonly api: apigateway.RestApi;
  readonly monitoring: Monitoring;

  constructor(scope: Construct, id: string, props: StackProps & { edgeGuard?: EdgeGuardStack } = {}) {
    const { edgeGuard, ...stackProps } = props;
    super(scope, id, stackProps);
    const settings = readDeploymentSettings(this.node);
    const names = parameterNames(settings.parameterPrefix);
    const storage = new Storage(this, 'StoragePart', settings);
    const setup = new SetupStep(this, 'SetupStepPart', {
      prefix: settings.parameterPrefix,
      names,
      rotation: settings.originSecretRotation,
    });
    const functions = new ServiceFunctions(this, 'FunctionsPart', {
      settings,
      storage,
      names,
      originSecretSha256: setup.originSecretSha256,
    });
    functions.api.node.addDependency(setup.resource);
    const gateway = new Gateway(this, 'GatewayPart', {
      settings,
      apiFunction: functions.api,
      originSecrets: setup.originSecrets,
    });
    const bucket = storage.bucket as s3.IBucket;
    const edge = new Edge(this, 'EdgePart', {
      settings,
      api: gateway.api,
      bucket,
      originSecret: setup.originSecrets.current,
      names,
      ...(edgeGuard ? { guard: edgeGuard } : {}),
    });
    setup.settleAfter(edge.distribution, functions.api, ...(gateway.firewall ? [gateway.firewall] : []));
    setup.openToUploadPage(bucket, edge.baseUrl);
    functions.grantPurge(edge.distribution);
    this.apiFunction = functions.api;
    this.sweepFunction = functions.sweep;
    this.api = gateway.api;
    this.distribution = edge.distribution;
    this.monitoring = new Monitoring(this, 'Monitoring', {
      namespace: settings.stackName,
      apiFunction: functions.api,
      sweepFunction: functions.sweep,
      api: gateway.api,
      accessLogs: gateway.accessLogs,
      table: storage.table,
      alarmEmail: settings.alarmEmail,
      alarmTopicArn: settings.alarmTopicArn,
      accountConcurrency: settings.accountConcurrency,
      apiTimeout: API_TIMEOUT,
      firewallRate: gateway.firewall?.rateMetric,
    });
    this.warnOfSettings(settings);
    this.giveEveryFunctionALogGroup();
    if (settings.removal === 'retain') setup.protectLast(storage.table);
    this.outputs(settings, names, storage, edge.baseUrl);
  }

  /** What synth says loudly: alarms nobody receives, a throttle above what the functions can run. */
  private warnOfSettings(settings: DeploymentSettings): void {
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
  }

  private outputs(settings: DeploymentSettings, names: SettingsParameters, storage: Storage, baseUrl: string): void {
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
    new CfnOutput(this, 'BucketName', { value: storage.bucket.bucketName });
    new CfnOutput(this, 'TableName', { value: storage.table.tableName });
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
      const group = logGroupIn(this, `${construct.node.scope?.node.id ?? construct.node.id}Logs`.replace(/[^A-Za-z0-9]/g, ''));
      construct.node.addDependency(group);
      construct.addPropertyOverride('LoggingConfig.LogGroup', group.logGroupName);
    }
  }
}
