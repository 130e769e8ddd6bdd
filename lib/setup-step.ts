import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { type CfnResource, CustomResource, Duration, Lazy, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct, IConstruct } from 'constructs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as cr from 'aws-cdk-lib/custom-resources';
import type { SettingsParameters } from '../functions/adapters/parameter-names';
import { acknowledge, acknowledgeNoTracing, acknowledgeServerless } from './nag-suppressions';
import { acknowledgeLogsRole, FUNCTIONS, RUNTIME } from './service-functions';
import { StackPart } from './stack-part';

/** The attributes the setup step answers (`functions/setup/handler.ts`). */
const SETUP_ANSWERS = ['OriginSecret', 'PreviousOriginSecret', 'OriginSecretSha256'] as const;

export interface SetupStepProps {
  /** The start of the parameters' names (`-c parameterPrefix`, or the stack's name in kebab case). */
  prefix: string;
  names: SettingsParameters;
  /** A new value (any text) rotates the origin secret (`-c originSecretRotation`); empty: none asked. */
  rotation: string;
}

/**
 * The stack's setup step (a custom resource and its function): the parameters the operator owns (the key, the flood
 * limits) and the secrets (id salt, origin secret), made once when missing and never overwritten by a deploy; and,
 * for retained data, the table's deletion protection, turned on last.
 */
export class SetupStep extends StackPart {
  readonly fn: nodejs.NodejsFunction;
  readonly provider: cr.Provider;
  readonly resource: CustomResource;
  /** The value CloudFront sends to the API in the origin header, and the one it sent before a rotation. */
  readonly originSecrets: { current: string; previous: string };
  /** SHA-256 of the current origin secret, which the API function accepts whatever the parameter says. */
  readonly originSecretSha256: string;
  private readonly prefix: string;
  private readonly rotation: string;

  constructor(scope: Construct, id: string, props: SetupStepProps) {
    super(scope, id);
    const { prefix, names } = props;
    this.prefix = prefix;
    this.rotation = props.rotation;
    this.fn = new nodejs.NodejsFunction(this.scope, 'SetupFunction', {
      entry: path.join(FUNCTIONS, 'setup', 'handler.ts'),
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.seconds(30),
      logGroup: this.logGroup('SetupLogs'),
      // the SDK version the code was tested with, not the runtime's (timeouts and retries depend on it)
      bundling: { bundleAwsSDK: true },
    });
    const owned = [names.apiKey, names.floodLimits, names.idSalt, names.originSecret, names.originSecretDeployed];
    this.fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['ssm:GetParameter', 'ssm:PutParameter'],
        resources: owned.map((name) => this.parameterArn(name)),
      }),
    );
    this.provider = new cr.Provider(this.scope, 'SetupProvider', {
      onEventHandler: this.fn,
      logGroup: this.logGroup('SetupProviderLogs'),
    });
    acknowledge(
      this.provider,
      `IAM5[Resource::<${this.logicalIdOf(this.fn)}.Arn>:*]`,
      "The provider framework may invoke any version of the setup function; CDK's own construct.",
    );
    acknowledge(this.provider, 'L1', "The provider framework's own function; CDK chooses its runtime.");
    acknowledgeServerless(this.provider, 'LambdaDefaultMemorySize', "The provider framework's own function; CDK sizes it.");
    for (const scope of [this.fn, this.provider])
      acknowledgeServerless(
        scope,
        'LambdaDLQ',
        'Invoked synchronously by CloudFormation through the provider: a failure fails the deploy, which CloudFormation reports and rolls back; a DLQ holds only asynchronous invocations.',
      );
    acknowledgeNoTracing([this.fn, this.provider]);
    for (const scope of [this.fn, this.provider]) acknowledgeLogsRole(scope);
    this.resource = new CustomResource(this.scope, 'Setup', {
      serviceToken: this.provider.serviceToken,
      // The names it looks after and the attributes it answers: a change of either (a parameter added, an attribute
      // the stack reads) runs the setup again on the next deploy, so that a stack deployed before gets them.
      properties: { ParameterPrefix: prefix, Creates: owned, Answers: SETUP_ANSWERS, ...this.rotationProperty() },
    });
    this.originSecrets = {
      current: this.answer('OriginSecret'),
      previous: this.answer('PreviousOriginSecret'),
    };
    this.originSecretSha256 = this.answer('OriginSecretSha256');
  }

  /** An attribute of the setup step's answer, one it lists in `Answers`. */
  private answer(name: (typeof SETUP_ANSWERS)[number]): string {
    return this.resource.getAttString(name);
  }

  private rotationProperty(): { OriginSecretRotation?: string } {
    return this.rotation === '' ? {} : { OriginSecretRotation: this.rotation };
  }

  /**
   * Drops a rotation's old origin secret from the parameter once these (the distribution, the firewall, the API
   * function) have the new one: CloudFormation updates it after them, and waits for the distribution to be deployed.
   */
  settleAfter(...dependencies: IConstruct[]): void {
    const settled = new CustomResource(this.scope, 'OriginSecretSettled', {
      serviceToken: this.provider.serviceToken,
      properties: { ParameterPrefix: this.prefix, SettleOriginSecret: 'true', ...this.rotationProperty() },
    });
    for (const dependency of dependencies) settled.node.addDependency(dependency);
  }

  /**
   * Lets the upload page of `baseUrl` PUT a two-step upload's bytes to the bucket from a browser (its CORS rule,
   * `functions/adapters/browser-uploads.ts`): a step of its own, after the distribution, whose address the rule names
   * (the bucket, which the distribution reads from, cannot name it itself).
   */
  openToUploadPage(bucket: s3.IBucket, baseUrl: string): void {
    new CustomResource(this.scope, 'UploadPageCors', {
      serviceToken: this.provider.serviceToken,
      properties: { CorsBucket: bucket.bucketName, CorsOrigin: baseUrl },
    });
    this.fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:PutBucketCORS'], resources: [bucket.bucketArn] }));
  }

  /**
   * Turns the table's deletion protection on, as the stack's last resource: as a property of the table it would stop
   * a failed first deploy from removing the table. It runs again after every update of the table's definition (its
   * digest is a property), so that an update which could reconcile the protection away is followed by turning it on.
   * Call once every other resource exists.
   */
  protectLast(table: dynamodb.TableV2): void {
    const stack = Stack.of(this);
    const definition = Lazy.string({ produce: () => tableDigest(stack, table) });
    const protection = new CustomResource(this.scope, 'ProtectRecords', {
      serviceToken: this.provider.serviceToken,
      properties: { ProtectTable: table.tableName, TableDefinition: definition },
    });
    this.fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['dynamodb:DescribeTable', 'dynamodb:UpdateTable'], resources: [table.tableArn] }),
    );
    // after everything else of the stack: the other parts, and the rest of this one
    const others = [...stack.node.children, ...this.node.children].filter((child) => child !== this && child !== protection);
    for (const child of others) protection.node.addDependency(child);
  }
}

/** A digest of the table's resource as the template holds it: any change of its definition changes it. */
function tableDigest(stack: Stack, table: dynamodb.TableV2): string {
  const resource = table.node.defaultChild as CfnResource;
  const rendered = (resource as unknown as { _toCloudFormation(): unknown })._toCloudFormation();
  return createHash('sha256')
    .update(JSON.stringify(stack.resolve(rendered)))
    .digest('hex');
}
