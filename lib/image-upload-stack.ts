import * as path from 'node:path';
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import { TABLE_SCHEMA } from '../functions/adapters/table-schema';
import { DEFAULT_FLOOD_LIMITS } from '../functions/core/flood';

/** The image upload service: API Gateway -> Lambda -> S3 + DynamoDB, settings in SSM. */
export class ImageUploadStack extends Stack {
  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);
    const parameterPrefix = '/image-upload';

    const bucket = new s3.Bucket(this, 'Images', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const table = new dynamodb.Table(this, 'Records', {
      partitionKey: { name: TABLE_SCHEMA.partitionKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const floodLimits = new ssm.StringParameter(this, 'FloodLimits', {
      parameterName: `${parameterPrefix}/flood-limits`,
      stringValue: JSON.stringify(DEFAULT_FLOOD_LIMITS),
      description: 'Uploads allowed per client IP and window; 0 turns a window off',
    });

    const fn = new nodejs.NodejsFunction(this, 'Api', {
      entry: path.join(__dirname, '..', 'functions', 'api', 'handler.ts'),
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 1024,
      timeout: Duration.seconds(28),
      environment: {
        BUCKET_NAME: bucket.bucketName,
        TABLE_NAME: table.tableName,
        PARAMETER_PREFIX: parameterPrefix,
      },
      bundling: {
        externalModules: ['@aws-sdk/*'],
        nodeModules: ['sharp'],
        environment: { npm_config_os: 'linux', npm_config_cpu: 'arm64', npm_config_libc: 'glibc' },
      },
    });
    bucket.grantPut(fn);
    bucket.grantDelete(fn);
    table.grantReadWriteData(fn);
    floodLimits.grantRead(fn);

    const api = new apigateway.LambdaRestApi(this, 'Gateway', {
      handler: fn,
      binaryMediaTypes: ['multipart/form-data', 'image/*', 'application/octet-stream'],
    });
    fn.addEnvironment('PUBLIC_URL', api.url.replace(/\/$/, ''));

    new CfnOutput(this, 'BaseUrl', { value: api.url });
  }
}
