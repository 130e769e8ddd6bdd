import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tags } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../../lib/app';

/** The stack without bundling (fast); the full synth with bundling is in synth.test.ts. */
function synth(context: Record<string, unknown> = {}): Template {
  const { stack } = buildApp({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  return Template.fromStack(stack);
}

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

describe('the stack', () => {
  const template = synth();
  const resources = template.toJSON()['Resources'] as Resources;
  const ofType = (type: string): Array<Record<string, unknown>> =>
    Object.values(resources)
      .filter((resource) => resource.Type === type)
      .map((resource) => resource.Properties);
  /** The logical id of the template's one resource of this type. */
  const logicalIdOf = (type: string): string => {
    const ids = Object.entries(resources).filter(([, resource]) => resource.Type === type);
    expect(ids).toHaveLength(1);
    return ids[0]?.[0] ?? '';
  };

  it('passes cdk-nag AwsSolutions and Serverless with every accepted finding acknowledged (synth would throw otherwise)', () => {
    expect(() => buildApp({ context: { 'aws:cdk:bundling-stacks': [] } }).app.synth()).not.toThrow();
  });

  it('takes multipart, images and octet streams as binary, and not */*', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', {
      BinaryMediaTypes: ['multipart/form-data', 'image/*', 'application/octet-stream'],
    });
  });

  it('sends every method and path to the function through one root proxy: its router is the only route table', () => {
    const paths = ofType('AWS::ApiGateway::Resource').map((resource) => resource['PathPart']);
    expect(paths).toEqual(['{proxy+}']);
    const methods = ofType('AWS::ApiGateway::Method');
    expect(methods.map((method) => method['HttpMethod'])).toEqual(['ANY', 'ANY']);
    for (const method of methods) expect(method['Integration']).toMatchObject({ Type: 'AWS_PROXY' });
  });

  it("answers the gateway's own errors in the envelope of the contract", () => {
    const responses = ofType('AWS::ApiGateway::GatewayResponse');
    const byType: Record<string, Record<string, unknown>> = Object.fromEntries(
      responses.map((response) => [String(response['ResponseType']), response]),
    );
    const body = (type: string): unknown =>
      JSON.parse(String((byType[type]?.['ResponseTemplates'] as Record<string, string>)['application/json']));
    expect(byType['REQUEST_TOO_LARGE']?.['StatusCode']).toBe('413');
    expect(body('REQUEST_TOO_LARGE')).toEqual({
      status_code: 413,
      error: {
        message: 'Request too large - max 4.6 MB per request; larger images: the two-step upload (POST /api/1/upload-url)',
        code: 400,
      },
      status_txt: 'Payload Too Large',
    });
    expect(body('DEFAULT_5XX')).toEqual({
      status_code: 503,
      error: { message: 'Service unavailable, try again', code: 900 },
      status_txt: 'Service Unavailable',
    });
    expect(byType['DEFAULT_5XX']?.['StatusCode']).toBe('503');
    // Lambda throttled or unreachable: 503 in the envelope, to be retried, not the gateway's bare 500
    expect(byType['INTEGRATION_FAILURE']?.['StatusCode']).toBe('503');
    expect(body('INTEGRATION_FAILURE')).toMatchObject({ status_code: 503, error: { code: 900 } });
    for (const type of ['THROTTLED', 'INTEGRATION_FAILURE'])
      expect(byType[type]?.['ResponseParameters']).toMatchObject({ 'gatewayresponse.header.Retry-After': "'1'" });
    expect(Object.keys(byType).sort()).toEqual([
      'DEFAULT_5XX',
      'INTEGRATION_FAILURE',
      'INTEGRATION_TIMEOUT',
      'MISSING_AUTHENTICATION_TOKEN',
      'REQUEST_TOO_LARGE',
      'THROTTLED',
    ]);
  });

  it("throttles the stage to what a new account's 10 concurrent functions run (one for the sweep), and logs errors without data traces", () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([
        Match.objectLike({ ThrottlingRateLimit: 18, ThrottlingBurstLimit: 9, LoggingLevel: 'ERROR', DataTraceEnabled: false }),
      ]),
    });
  });

  it("follows the account's concurrency, or the API's reserved one, and warns when the throttle lets more through", () => {
    const stageOf = (context: Record<string, unknown>) => {
      const { stack } = buildApp({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
      const settings = Template.fromStack(stack).findResources('AWS::ApiGateway::Stage');
      const [stage] = Object.values(settings) as Array<{ Properties: { MethodSettings: Array<Record<string, unknown>> } }>;
      const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('Lambda refuses them'));
      return { ...stage?.Properties.MethodSettings[0], warned: warnings.length > 0 };
    };
    expect(stageOf({ accountConcurrency: 1000 })).toMatchObject({ ThrottlingBurstLimit: 999, ThrottlingRateLimit: 1998 });
    expect(stageOf({ accountConcurrency: 1000, reservedConcurrency: 50 })).toMatchObject({ ThrottlingBurstLimit: 50 });
    expect(stageOf({ throttleBurstLimit: 100 })).toMatchObject({ ThrottlingBurstLimit: 100, warned: true });
    expect(stageOf({})).toMatchObject({ warned: false });
    // Lambda keeps 100 unreserved: what AWS would refuse at create is refused at synth
    expect(() => synth({ reservedConcurrency: 5 })).toThrow(/needs an accountConcurrency above 100/);
    expect(() => synth({ accountConcurrency: 1000, reservedConcurrency: 901 })).toThrow(/must be at most 900/);
    expect(stageOf({ accountConcurrency: 1000, reservedConcurrency: 900 })).toMatchObject({ ThrottlingBurstLimit: 900 });
  });

  it('warns at synth that no one receives the alarms, unless an e-mail or a topic of your own is given', () => {
    const warned = (context: Record<string, unknown>) => {
      const { stack } = buildApp({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
      return Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('NO ONE WILL RECEIVE THE ALARMS')).length;
    };
    expect(warned({})).toBe(1);
    expect(warned({ alarmEmail: 'ops@example.com' })).toBe(0);
    expect(warned({ alarmTopicArn: 'arn:aws:sns:us-east-1:123456789012:ops' })).toBe(0);
    const own = synth({ alarmTopicArn: 'arn:aws:sns:us-east-1:123456789012:ops' });
    own.resourceCountIs('AWS::SNS::Topic', 0);
    own.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmActions: ['arn:aws:sns:us-east-1:123456789012:ops'] });
    expect(() => synth({ alarmTopicArn: 'ops' })).toThrow(/alarmTopicArn/);
  });

  it("runs the API on Node.js 24, arm64, with the measured memory and a timeout under the gateway's 29 s", () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: 1769,
      Timeout: 28,
      Environment: {
        Variables: Match.objectLike({
          ORIGIN_VERIFY: 'required',
          PARAMETER_PREFIX: '/image-upload',
          BUCKET_NAME: Match.anyValue(),
          TABLE_NAME: Match.anyValue(),
        }),
      },
    });
  });

  it('keeps the bucket private, encrypted, TLS-only, with incomplete uploads and abandoned staged uploads cleaned up', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      // removed files kept as noncurrent versions for 30 days (restorable), but staged bytes and replaced block lists
      VersioningConfiguration: { Status: 'Enabled' },
      LifecycleConfiguration: {
        Rules: [
          Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
          Match.objectLike({ NoncurrentVersionExpiration: { NoncurrentDays: 30 }, Status: 'Enabled' }),
          Match.objectLike({ ExpiredObjectDeleteMarker: true, Status: 'Enabled' }),
          Match.objectLike({
            Prefix: 'staging/',
            ExpirationInDays: 1,
            NoncurrentVersionExpiration: { NoncurrentDays: 1 },
            Status: 'Enabled',
          }),
          Match.objectLike({ Prefix: 'moderation/', NoncurrentVersionExpiration: { NoncurrentDays: 1 } }),
        ],
      },
    });
    const keptAWeek = synth({ keepDeletedDays: 7 });
    keptAWeek.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ NoncurrentVersionExpiration: { NoncurrentDays: 7 } })]),
      },
    });
    // the sweep keeps a removed image's record, restorable, as long as the bucket keeps its files
    for (const [synthesized, days] of [
      [template, '30'],
      [keptAWeek, '7'],
    ] as const)
      synthesized.hasResourceProperties('AWS::Lambda::Function', {
        Handler: 'index.handler',
        Timeout: 240,
        Environment: { Variables: Match.objectLike({ KEEP_DELETED_DAYS: days }) },
      });
    // no function's role may remove a version: only the operator's takedown does
    const actions = JSON.stringify(Object.values(template.findResources('AWS::IAM::Policy')));
    expect(actions).not.toMatch(/s3:DeleteObjectVersion|s3:PutBucketVersioning|s3:PutLifecycleConfiguration|s3:\*/);
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('keeps the images and records after a destroy or an update, but lets a failed first deploy remove them', () => {
    template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'Retain' });
    template.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'RetainExceptOnCreate',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it("turns the table's deletion protection on last, after every other resource, from the setup step", () => {
    const [protectId, protect] = Object.entries(resources).find(([id]) => id.startsWith('ProtectRecords')) ?? [];
    expect(protect?.Type).toBe('AWS::CloudFormation::CustomResource');
    const table = Object.keys(resources).find((id) => resources[id]?.Type === 'AWS::DynamoDB::GlobalTable');
    expect(protect?.Properties['ProtectTable']).toEqual({ Ref: table });
    // as a property of the table, protection would stop a failed first deploy from removing it
    expect(JSON.stringify(resources[table ?? '']?.Properties)).not.toContain('DeletionProtectionEnabled');
    const dependsOn = new Set((protect as { DependsOn?: string[] } | undefined)?.DependsOn ?? []);
    const others = Object.keys(resources).filter((id) => id !== protectId && resources[id]?.Type !== 'AWS::CDK::Metadata');
    expect(others.filter((id) => !dependsOn.has(id))).toEqual([]);
    expect(grantsOf('SetupFunction')['dynamodb:UpdateTable']).toEqual([expect.stringContaining(String(table))]);
    // and again after any update of the table's definition, which could reconcile the protection away
    const digestOf = (change?: (table: dynamodb.TableV2) => void): unknown => {
      const { stack } = buildApp({ context: { 'aws:cdk:bundling-stacks': [] } });
      const found = stack.node.findAll().find((child): child is dynamodb.TableV2 => child instanceof dynamodb.TableV2);
      if (found && change) change(found);
      const synthesized = Template.fromStack(stack).toJSON()['Resources'] as Resources;
      return Object.entries(synthesized).find(([id]) => id.startsWith('ProtectRecords'))?.[1]?.Properties['TableDefinition'];
    };
    expect(protect?.Properties['TableDefinition']).toMatch(/^[0-9a-f]{64}$/);
    expect(digestOf()).toBe(protect?.Properties['TableDefinition']);
    expect(digestOf((changed) => Tags.of(changed).add('Team', 'images'))).not.toBe(protect?.Properties['TableDefinition']);
  });

  it('lets the API function sign, read and remove staged uploads and read the block list, the sweep remove staged uploads, and no more', () => {
    const onStaging = (prefix: string) =>
      Object.entries(grantsOf(prefix))
        .filter(([, resources]) => resources.some((resource) => resource.includes('/staging/*')))
        .map(([action]) => action)
        .sort();
    expect(onStaging('ApiFunction')).toEqual(['s3:DeleteObject', 's3:GetObject', 's3:PutObject']);
    expect(onStaging('SweepFunction')).toEqual(['s3:DeleteObject']);
    expect(onStaging('SetupFunction')).toEqual([]);
    // the operator's lists (the blocked pictures): the API function reads them, and nothing else touches them
    const onModeration = (prefix: string) =>
      Object.entries(grantsOf(prefix))
        .filter(([, resources]) => resources.some((resource) => resource.includes('/moderation/*')))
        .map(([action]) => action);
    expect([onModeration('ApiFunction'), onModeration('SweepFunction'), onModeration('SetupFunction')]).toEqual([
      ['s3:GetObject'],
      [],
      [],
    ]);
    // the bucket is behind /images/* only (the API behind the rest): the staging prefix is never served
    const behaviors = Object.values(template.findResources('AWS::CloudFront::Distribution')).flatMap((distribution) =>
      (
        (distribution as { Properties: { DistributionConfig: { CacheBehaviors?: Array<{ PathPattern: string }> } } }).Properties
          .DistributionConfig.CacheBehaviors ?? []
      ).map((behavior) => behavior.PathPattern),
    );
    expect(behaviors.sort()).toEqual(['/api/*', '/images/*']);
  });

  it('lets the functions put, look at and remove images, and list the bucket so that a file not there answers 404', () => {
    const policies = Object.values(template.findResources('AWS::IAM::Policy')) as Array<{
      Properties: { PolicyDocument: { Statement: Array<{ Action: unknown; Resource: unknown }> } };
    }>;
    const imageActions = (role: string) =>
      policies
        .filter((policy) => JSON.stringify(policy.Properties).includes(role))
        .flatMap((policy) => policy.Properties.PolicyDocument.Statement)
        .filter((statement) => JSON.stringify(statement.Resource).includes('/images/*') || statement.Action === 's3:ListBucket')
        .map((statement) => statement.Action);
    const roles = Object.keys(template.findResources('AWS::IAM::Role'));
    const role = (prefix: string) => roles.find((name) => name.startsWith(prefix)) ?? prefix;
    expect(imageActions(role('ApiFunctionServiceRole'))).toEqual([
      ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'],
      's3:ListBucket',
    ]);
    expect(imageActions(role('SweepFunctionServiceRole'))).toEqual([['s3:GetObject', 's3:DeleteObject'], 's3:ListBucket']);
  });

  it('lets the distribution, and only it, read the images and list the bucket, so a missing file answers 404', () => {
    const statements = Object.values(template.findResources('AWS::S3::BucketPolicy')).flatMap(
      (policy) =>
        (policy as { Properties: { PolicyDocument: { Statement: Array<Record<string, unknown>> } } }).Properties.PolicyDocument
          .Statement,
    );
    const granted = statements.filter((statement) => JSON.stringify(statement['Principal']).includes('cloudfront'));
    expect(granted).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Action: ['s3:GetObject', 's3:ListBucket'],
        Condition: { StringEquals: { 'AWS:SourceArn': expect.anything() as unknown } },
      }),
    ]);
    // the files under images/ and the bucket itself (for the listing): never staging/, moderation/ or every file
    const [objects, bucket] = granted[0]?.['Resource'] as [unknown, unknown];
    expect(objects).toEqual({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalIdOf('AWS::S3::Bucket'), 'Arn'] }, '/images/*']] });
    expect(bucket).toEqual({ 'Fn::GetAtt': [logicalIdOf('AWS::S3::Bucket'), 'Arn'] });
  });

  it('makes the table on demand, with point-in-time recovery, TTL and the sweep index', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      Replicas: [Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'sweep',
          KeySchema: [
            { AttributeName: 'sweepShard', KeyType: 'HASH' },
            { AttributeName: 'sweepAtMs', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    });
  });

  it('grants data actions on named resources only: no wildcard resource anywhere', () => {
    const statements = ofType('AWS::IAM::Policy').flatMap(
      (policy) => (policy['PolicyDocument'] as { Statement: Array<Record<string, unknown>> }).Statement,
    );
    for (const statement of statements) {
      const actions = ([] as string[]).concat(statement['Action'] as string | string[]);
      const resources = ([] as unknown[]).concat(statement['Resource']);
      if (actions.some((action) => /^(s3|dynamodb|ssm):/.test(action))) expect(resources).not.toContain('*');
    }
    const ssmResources = statements
      .filter((statement) => ([] as string[]).concat(statement['Action'] as string).includes('ssm:GetParameters'))
      .flatMap((statement) => [].concat(statement['Resource'] as never));
    const names = JSON.stringify(ssmResources);
    for (const name of ['api-key', 'flood-limits', 'id-salt', 'public-url', 'origin-secret'])
      expect(names).toContain(`image-upload/${name}`);
    expect(JSON.stringify(statements)).not.toMatch(/"(s3|dynamodb|ssm):\*"/);
  });

  /** The actions a function's role allows, each with the resources it allows them on (as JSON, for reading). */
  function grantsOf(functionPrefix: string): Record<string, string[]> {
    const [, fn] = Object.entries(resources).find(
      ([id, resource]) => id.startsWith(functionPrefix) && resource.Type === 'AWS::Lambda::Function',
    ) ?? [undefined, undefined];
    const role = (fn?.Properties['Role'] as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const grants: Record<string, string[]> = {};
    for (const policy of ofType('AWS::IAM::Policy')) {
      if (!(policy['Roles'] as Array<{ Ref: string }>).some((ref) => ref.Ref === role)) continue;
      for (const statement of (policy['PolicyDocument'] as { Statement: Array<Record<string, unknown>> }).Statement)
        for (const action of ([] as string[]).concat(statement['Action'] as string | string[]))
          grants[action] = [
            ...(grants[action] ?? []),
            ...([] as unknown[]).concat(statement['Resource']).map((r) => JSON.stringify(r)),
          ];
    }
    return grants;
  }

  it("gives each function's role exactly the actions its code sends (the IAM twin proves them sufficient)", () => {
    const api = grantsOf('ApiFunction');
    expect(Object.keys(api).sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      's3:DeleteObject',
      's3:GetObject',
      's3:ListBucket',
      's3:PutObject',
      'ssm:GetParameters',
    ]);
    const sweep = grantsOf('SweepFunction');
    expect(Object.keys(sweep).sort()).toEqual([
      'cloudfront:CreateInvalidation',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
      's3:DeleteObject',
      's3:GetObject',
      's3:ListBucket',
      'ssm:GetParameters',
    ]);
    // the API reads its settings, not the distribution id (it never purges: the sweep does)
    expect(api['ssm:GetParameters']).toHaveLength(5);
    expect(JSON.stringify(api['ssm:GetParameters'])).not.toContain('distribution-id');
    // the sweep reads one parameter, the distribution id: not the key, not the salt
    expect(sweep['ssm:GetParameters']).toHaveLength(1);
    expect(sweep['ssm:GetParameters']?.[0]).toContain('parameter/image-upload/distribution-id');
    expect(sweep['dynamodb:Query']?.[0]).toContain('/index/sweep');
    // the sweep never writes a file; under staging/ it only deletes what no token can use any more
    expect(JSON.stringify(sweep['s3:DeleteObject'])).toContain('/staging/*');
    expect(JSON.stringify(sweep['s3:GetObject'])).not.toContain('/staging/');
    expect(grantsOf('SetupFunction')).toEqual({
      'ssm:GetParameter': expect.any(Array) as unknown,
      'ssm:PutParameter': expect.any(Array) as unknown,
      // the table's deletion protection, turned on last
      'dynamodb:DescribeTable': expect.any(Array) as unknown,
      'dynamodb:UpdateTable': expect.any(Array) as unknown,
      // the upload page's CORS rule, on the bucket and nothing else
      's3:PutBucketCORS': [JSON.stringify({ 'Fn::GetAtt': [logicalIdOf('AWS::S3::Bucket'), 'Arn'] })],
    });
  });

  it("lets the upload page's origin, and no other, PUT to the bucket from a browser: a step after the distribution", () => {
    const [id, cors] = Object.entries(resources).find(([name]) => name.startsWith('UploadPageCors')) ?? [];
    expect(id).toBeDefined();
    expect(cors?.Properties).toEqual({
      ServiceToken: expect.anything() as unknown,
      CorsBucket: { Ref: logicalIdOf('AWS::S3::Bucket') },
      CorsOrigin: {
        'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [logicalIdOf('AWS::CloudFront::Distribution'), 'DomainName'] }]],
      },
    });
  });

  it('puts CloudFront in front: images from S3 through origin access control with long caching, the rest to the API with a secret header', () => {
    const [distribution] = ofType('AWS::CloudFront::Distribution');
    const config = distribution?.['DistributionConfig'] as Record<string, unknown>;
    const behaviors = config['CacheBehaviors'] as Array<Record<string, unknown>>;
    const images = behaviors.find((behavior) => behavior['PathPattern'] === '/images/*');
    const api = behaviors.find((behavior) => behavior['PathPattern'] === '/api/*');
    expect(images?.['CachePolicyId']).toBe('658327ea-f89d-4fab-a63d-7e88639e58f6'); // CachingOptimized
    expect(api?.['ViewerProtocolPolicy']).toBe('https-only');
    const fallback = config['DefaultCacheBehavior'] as Record<string, unknown>;
    expect(fallback['CachePolicyId']).toBe('4135ea2d-6df8-44a3-9df3-4b5a84be39ad'); // CachingDisabled
    expect(fallback['OriginRequestPolicyId']).toBe('b689b0a8-53d0-40ab-baf2-68738e2966ac'); // AllViewerExceptHostHeader
    const origins = config['Origins'] as Array<Record<string, unknown>>;
    expect(
      origins.some((origin) => JSON.stringify(origin['OriginCustomHeaders']).includes('"HeaderName":"x-origin-verify"')),
    ).toBe(true);
    expect(origins.some((origin) => origin['OriginAccessControlId'] !== undefined)).toBe(true);
    expect(JSON.stringify(fallback['FunctionAssociations'])).toContain('viewer-request');
    expect(JSON.stringify(api?.['FunctionAssociations'])).toContain('viewer-request');
    expect(images?.['FunctionAssociations']).toBeUndefined();
    // what the function does is proven in viewer-request.test.ts
    template.hasResourceProperties('AWS::CloudFront::Function', {
      FunctionConfig: Match.objectLike({ Runtime: 'cloudfront-js-2.0' }),
    });
    template.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: { SecurityHeadersConfig: Match.objectLike({ ContentTypeOptions: { Override: true } }) },
    });
    // the files: browsers and shared caches keep them hours (a takedown leaves them), the edge a year (purged)
    const policies = template.findResources('AWS::CloudFront::ResponseHeadersPolicy');
    const imagePolicyId = (images?.['ResponseHeadersPolicyId'] as { Ref: string }).Ref;
    const imagePolicy = (policies[imagePolicyId] as { Properties: { ResponseHeadersPolicyConfig: Record<string, unknown> } })
      .Properties.ResponseHeadersPolicyConfig;
    expect(imagePolicy['CustomHeadersConfig']).toEqual({
      Items: [{ Header: 'Cache-Control', Value: 'public, max-age=14400', Override: true }],
    });
    expect(imagePolicy['SecurityHeadersConfig']).toMatchObject({
      ContentSecurityPolicy: { ContentSecurityPolicy: "default-src 'none'; sandbox", Override: true },
      ContentTypeOptions: { Override: true },
    });
  });

  it('runs the sweep every 5 minutes and writes the public URL to SSM', () => {
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)', State: 'ENABLED' });
    template.hasResourceProperties('AWS::SSM::Parameter', { Name: '/image-upload/public-url', Value: Match.anyValue() });
  });

  it('leaves the parameters the operator edits (key, flood limits) to the setup step, never to a stack resource', () => {
    const names = ofType('AWS::SSM::Parameter').map((parameter) => parameter['Name']);
    expect(names.sort()).toEqual(['/image-upload/distribution-id', '/image-upload/public-url']);
    template.hasResourceProperties('AWS::CloudFormation::CustomResource', {
      ParameterPrefix: '/image-upload',
      Creates: [
        '/image-upload/api-key',
        '/image-upload/flood-limits',
        '/image-upload/id-salt',
        '/image-upload/origin-secret',
        '/image-upload/origin-secret-deployed',
      ],
    });
  });

  it("lists every output in docs/deployment.md's outputs table", () => {
    const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'deployment.md'), 'utf8');
    const table = doc.slice(doc.indexOf('| output '), doc.indexOf('\n\n', doc.indexOf('| output ')));
    const documented = [...table.matchAll(/`(\w+)`/g)].map((match) => match[1]);
    const outputs = Object.keys(template.toJSON()['Outputs'] as Record<string, unknown>);
    expect(outputs.filter((name) => !documented.includes(name))).toEqual([]);
  });

  it('names in its outputs what npm run admin needs, the id padding included', () => {
    for (const name of ['BucketName', 'TableName', 'BaseUrl', 'ApiKeyParameter']) template.hasOutput(name, {});
    template.hasOutput('IdPadding', { Value: '999' });
    synth({ idPadding: '12' }).hasOutput('IdPadding', { Value: '12' });
  });
});

describe('a fresh account', () => {
  const template = synth({ removalPolicy: 'destroy' });
  const resources = template.toJSON()['Resources'] as Resources;
  const functions = Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::Lambda::Function');

  it('with removalPolicy=destroy, removes the bucket and table with the stack, and protects nothing', () => {
    template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Delete' });
    template.hasResource('AWS::DynamoDB::GlobalTable', { DeletionPolicy: 'Delete' });
    expect(Object.keys(resources).some((id) => id.startsWith('ProtectRecords'))).toBe(false);
  });

  it('reserves no concurrency on any function (a new account may have only 10)', () => {
    expect(functions.length).toBeGreaterThanOrEqual(4);
    for (const [, fn] of functions) expect(fn.Properties['ReservedConcurrentExecutions']).toBeUndefined();
  });

  it('runs every function on Node.js 24', () => {
    for (const [, fn] of functions) expect(fn.Properties['Runtime']).toBe('nodejs24.x');
  });

  it('logs every function, and the gateway, to a log group of the stack that keeps lines a month', () => {
    const groups = Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::Logs::LogGroup');
    for (const [, group] of groups) expect(group.Properties['RetentionInDays']).toBe(30);
    const groupIds = new Set(groups.map(([id]) => id));
    for (const [id, fn] of functions) {
      const target = (fn.Properties['LoggingConfig'] as { LogGroup?: { Ref?: string } } | undefined)?.LogGroup?.Ref;
      expect([id, target && groupIds.has(target)]).toEqual([id, true]);
    }
    expect(JSON.stringify(groups.map(([, group]) => group.Properties['LogGroupName']))).toContain('API-Gateway-Execution-Logs_');
  });
});

describe('monitoring', () => {
  const template = synth();
  const alarms = template.findResources('AWS::CloudWatch::Alarm') as Record<string, { Properties: Record<string, unknown> }>;
  const alarm = (idPrefix: string): Record<string, unknown> => {
    const found = Object.entries(alarms).find(([id]) => id.startsWith(`Monitoring${idPrefix}`));
    if (!found) throw new Error(`no alarm ${idPrefix}`);
    return found[1].Properties;
  };

  it('alarms on every sign of trouble the issue names, each to the alarm topic', () => {
    expect(
      Object.keys(alarms)
        .map((id) => id.replace(/^Monitoring|[0-9A-F]{8}$/g, ''))
        .sort(),
    ).toEqual([
      'Api5xx',
      'ApiErrors',
      'ApiNearTimeout',
      'ApiThrottles',
      'ConcurrencyNearQuota',
      'FirewallRateLimited',
      'GatewayThrottled',
      'SsmReadFailures',
      'SweepBacklog',
      'SweepErrors',
      'SweepFailures',
      'SweepNotRun',
      'TableSystemErrors',
      'TableThrottles',
    ]);
    for (const properties of Object.values(alarms).map((entry) => entry.Properties)) {
      expect(JSON.stringify(properties['AlarmActions'])).toMatch(/MonitoringAlarms/);
    }
  });

  it('alarms on silence and near limits: a sweep not run (missing data breaches), a slow API, the concurrency quota, the rate rule', () => {
    const byId = (name: string): Record<string, unknown> => {
      const found = Object.entries(alarms).find(([id]) => id.startsWith(`Monitoring${name}`));
      if (!found) throw new Error(`no alarm ${name}`);
      return found[1].Properties;
    };
    expect(byId('SweepNotRun')).toMatchObject({
      MetricName: 'Invocations',
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      EvaluationPeriods: 3,
      TreatMissingData: 'breaching',
    });
    // every other alarm takes missing data as calm
    const others = Object.entries(alarms).filter(([id]) => !id.startsWith('MonitoringSweepNotRun'));
    for (const [, { Properties }] of others) expect(Properties['TreatMissingData']).toBe('notBreaching');
    expect(byId('ApiNearTimeout')).toMatchObject({ MetricName: 'Duration', Statistic: 'Maximum', Threshold: 22400 });
    expect(byId('ConcurrencyNearQuota')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'ConcurrentExecutions',
      Threshold: 8,
    });
    expect(byId('FirewallRateLimited')).toMatchObject({ Namespace: 'AWS/WAFV2', MetricName: 'BlockedRequests' });
    // WAF's dimensions are the metric names of the web ACL and the rule, which the stack's name starts
    expect(byId('FirewallRateLimited')['Dimensions']).toEqual(
      expect.arrayContaining([
        { Name: 'WebACL', Value: 'ImageUpload-ApiFirewall' },
        { Name: 'Rule', Value: 'ImageUpload-RatePerViewer' },
      ]),
    );
    const acl = Object.values(template.findResources('AWS::WAFv2::WebACL'))[0] as {
      Properties: { VisibilityConfig: { MetricName: string }; Rules: Array<{ VisibilityConfig: { MetricName: string } }> };
    };
    expect([
      acl.Properties.VisibilityConfig.MetricName,
      ...acl.Properties.Rules.map((rule) => rule.VisibilityConfig.MetricName),
    ]).toEqual(['ImageUpload-ApiFirewall', 'ImageUpload-RatePerViewer', 'ImageUpload-FromTheDistribution']);
    const without = synth({ firewallRateLimit: 0, accountConcurrency: 1000 }).findResources('AWS::CloudWatch::Alarm');
    expect(Object.keys(without).some((id) => id.startsWith('MonitoringFirewallRateLimited'))).toBe(false);
    const quota = Object.entries(without).find(([id]) => id.startsWith('MonitoringConcurrencyNearQuota'))?.[1] as {
      Properties: { Threshold: number };
    };
    expect(quota.Properties.Threshold).toBe(800);
  });

  it("reads the service's own metrics under the names and dimensions the functions write", () => {
    expect(alarm('SweepBacklog')).toMatchObject({
      Namespace: 'ImageUpload',
      MetricName: 'SweepBacklogAge',
      Dimensions: [{ Name: 'service', Value: 'image-upload-sweep' }],
      Statistic: 'Maximum',
      Threshold: 900,
    });
    expect(alarm('SsmReadFailures')).toMatchObject({
      Namespace: 'ImageUpload',
      MetricName: 'StoreErrors',
      Dimensions: expect.arrayContaining([
        { Name: 'service', Value: 'image-upload' },
        { Name: 'Store', Value: 'SSM' },
      ]) as unknown,
    });
    expect(alarm('SweepFailures')).toMatchObject({ MetricName: 'SweepFailed' });
  });

  it("counts the gateway's own throttles from its access log, which never holds a path (delete tokens)", () => {
    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      FilterPattern: '{ $.errorType = "THROTTLED" }',
      MetricTransformations: [Match.objectLike({ MetricName: 'GatewayThrottles', MetricNamespace: 'ImageUpload' })],
    });
    const stage = Object.values(template.findResources('AWS::ApiGateway::Stage'))[0] as {
      Properties: { AccessLogSetting: { Format: string } };
    };
    const format = JSON.parse(stage.Properties.AccessLogSetting.Format) as Record<string, string>;
    expect(format['errorType']).toBe('$context.error.responseType');
    expect(Object.values(format)).not.toContain('$context.path');
  });

  it('e-mails the alarms to the address given in context, and has a dashboard', () => {
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    // the imaging's graph shows what the NSFW classifier costs on Lambda's processor, which no bench here measures
    const dashboard = JSON.stringify(Object.values(template.findResources('AWS::CloudWatch::Dashboard')));
    expect(dashboard).toContain('\\"ImagingTime\\"');
    expect(dashboard).toContain('\\"ClassifierTime\\"');
    synth({ alarmEmail: 'ops@example.com' }).hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
    expect(() => synth({ alarmEmail: 'not-an-address' })).toThrow(/alarmEmail/);
  });
});

describe('the API firewall', () => {
  it('admits to the stage only requests with the origin secret, and rate-limits each viewer IP, answering in the envelope', () => {
    const template = synth();
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      DefaultAction: { Block: { CustomResponse: { ResponseCode: 403, CustomResponseBodyKey: 'forbidden' } } },
      Rules: [
        Match.objectLike({
          Name: 'RatePerViewer',
          Action: { Block: { CustomResponse: Match.objectLike({ ResponseCode: 429 }) } },
          Statement: {
            RateBasedStatement: Match.objectLike({
              Limit: 3000,
              AggregateKeyType: 'FORWARDED_IP',
              ForwardedIPConfig: { HeaderName: 'x-viewer-address', FallbackBehavior: 'NO_MATCH' },
            }),
          },
        }),
        Match.objectLike({
          Name: 'FromTheDistribution',
          Action: { Allow: {} },
          // the secret CloudFront sends, or the one it sent before a rotation (the same without one)
          Statement: {
            OrStatement: {
              Statements: ['OriginSecret', 'PreviousOriginSecret'].map((attribute) => ({
                ByteMatchStatement: Match.objectLike({
                  FieldToMatch: { SingleHeader: { Name: 'x-origin-verify' } },
                  PositionalConstraint: 'EXACTLY',
                  SearchString: { 'Fn::GetAtt': ['Setup', attribute] },
                }),
              })),
            },
          },
        }),
      ],
    });
    const acl = Object.values(template.findResources('AWS::WAFv2::WebACL'))[0] as {
      Properties: { CustomResponseBodies: Record<string, { Content: string }> };
    };
    expect(JSON.parse(acl.Properties.CustomResponseBodies['forbidden']?.Content ?? '')).toEqual({
      status_code: 403,
      error: { message: 'Forbidden', code: 403 },
      status_txt: 'Forbidden',
    });
    template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      ResourceArn: { 'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp('/stages/')])] },
    });
  });

  it('drops the rate rule with firewallRateLimit=0, and the whole firewall with firewall=false', () => {
    const noRate = synth({ firewallRateLimit: 0 });
    noRate.hasResourceProperties('AWS::WAFv2::WebACL', { Rules: [Match.objectLike({ Name: 'FromTheDistribution' })] });
    const none = synth({ firewall: false });
    none.resourceCountIs('AWS::WAFv2::WebACL', 0);
    none.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
    expect(() => synth({ firewall: 'maybe' })).toThrow(/firewall must be true or false/);
  });
});

describe('settings from context', () => {
  it('passes settings to the function and sizes it as asked', () => {
    const template = synth({
      thumbSize: 256,
      naming: 'random',
      memorySize: 2048,
      accountConcurrency: 200,
      reservedConcurrency: 20,
      parameterPrefix: '/imgs',
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      MemorySize: 2048,
      ReservedConcurrentExecutions: 20,
      Environment: { Variables: Match.objectLike({ THUMB_SIZE: '256', NAMING: 'random', PARAMETER_PREFIX: '/imgs' }) },
    });
  });

  it("sets the account's API Gateway logging role unless told the account has one, and then leaves it alone", () => {
    const own = synth();
    own.resourceCountIs('AWS::ApiGateway::Account', 1);
    own.hasResource('AWS::ApiGateway::Account', { DeletionPolicy: 'Retain' });
    const existing = synth({ gatewayAccountRole: false });
    existing.resourceCountIs('AWS::ApiGateway::Account', 0);
    expect(JSON.stringify(existing.toJSON())).not.toContain('AmazonAPIGatewayPushToCloudWatchLogs');
    // the stage still logs errors and access lines, with the account's own role
    existing.hasResourceProperties('AWS::ApiGateway::Stage', { AccessLogSetting: Match.anyValue() });
    expect(() => synth({ gatewayAccountRole: 'maybe' })).toThrow(/gatewayAccountRole/);
  });

  it('fails the synth on a setting the function would refuse at cold start, named by its context key', () => {
    expect(() => synth({ naming: 'clever' })).toThrow(/context naming must be one of original, random, id/);
    expect(() => synth({ timeZone: 'Mars/Olympus' })).toThrow(/context timeZone/);
  });

  it('names every mistake at once, and a key it does not read with the one that was meant', () => {
    expect(() => synth({ thumbSize: 'big', memorySize: 1, priceClass: 'cheap', thumbsize: 320, thumbSyze: 1 })).toThrow(
      [
        'invalid context:',
        '- context thumbsize is not one the stack reads: did you mean thumbSize?',
        '- context thumbSyze is not one the stack reads (docs/settings.md lists them)',
        '- context thumbSize must be a whole number from 16 to 2000, got "big"',
        '- context memorySize must be a whole number from 512 to 10240',
        '- context priceClass must be All, 200 or 100, got cheap',
      ].join('\n'),
    );
  });

  it('refuses a setting of an earlier version, naming what replaced it, and passes the new ones on', () => {
    expect(() => synth({ keyCacheSeconds: 60 })).toThrow(
      'context keyCacheSeconds is no longer read: use parametersCacheSeconds or moderationCacheSeconds',
    );
    expect(() => synth({ floodLimitsCacheSeconds: 60 })).toThrow(/use parametersCacheSeconds$/);
    synth({ parametersCacheSeconds: 60, moderationCacheSeconds: 5 }).hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ PARAMETERS_CACHE_SECONDS: '60', MODERATION_CACHE_SECONDS: '5' }) },
    });
  });

  it('serves a custom domain with its certificate and TLS 1.2', () => {
    const template = synth({
      domainName: 'img.example.com',
      certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc',
    });
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Aliases: ['img.example.com'],
        ViewerCertificate: Match.objectLike({ MinimumProtocolVersion: 'TLSv1.2_2021' }),
      }),
    });
    template.hasResourceProperties('AWS::SSM::Parameter', { Name: '/image-upload/public-url', Value: 'https://img.example.com' });
  });
});

describe('CDN invalidation', () => {
  it('lets the sweep alone invalidate the distribution, and only it, and tells it its id', () => {
    const template = synth();
    const policies = Object.values(template.findResources('AWS::IAM::Policy')) as Array<{
      Properties: { Roles: Array<{ Ref: string }>; PolicyDocument: { Statement: Array<{ Action: unknown; Resource: unknown }> } };
    }>;
    const invalidating = policies.filter((policy) =>
      policy.Properties.PolicyDocument.Statement.some((statement) => statement.Action === 'cloudfront:CreateInvalidation'),
    );
    expect(invalidating.flatMap((policy) => policy.Properties.Roles.map((role) => role.Ref))).toEqual([
      expect.stringMatching(/^SweepFunctionServiceRole/),
    ]);
    const statement = invalidating[0]?.Properties.PolicyDocument.Statement.find(
      (one) => one.Action === 'cloudfront:CreateInvalidation',
    );
    expect(JSON.stringify(statement?.Resource)).toMatch(/:distribution\/.*"Ref":"Distribution/);
    template.hasResourceProperties('AWS::SSM::Parameter', {
      Name: '/image-upload/distribution-id',
      Value: { Ref: Match.stringLikeRegexp('^Distribution') },
    });
  });
});

describe('more than one copy in an account (-c stackName)', () => {
  /**
   * Every name a resource of the template holds that must be unique in an account or a region (what CloudFormation
   * does not generate): CloudFront's policies and origin access control, parameters, the API, the metric namespaces,
   * the setup step's parameters, and the functions' prefix and namespace. `Fn::Join`s are written out, the region as
   * `{Region}`.
   */
  function accountWideNames(template: Template): string[] {
    const written = (value: unknown): string => {
      if (typeof value === 'string') return value;
      const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
      if (join) return join[1].map(written).join(join[0]);
      if ((value as { Ref?: string }).Ref === 'AWS::Region') return '{Region}';
      throw new Error(`a name that is not written out: ${JSON.stringify(value)}`);
    };
    const names: string[] = [];
    const resources = template.toJSON()['Resources'] as Resources;
    for (const { Type, Properties } of Object.values(resources)) {
      const property = (path: string): unknown => path.split('.').reduce<unknown>((at, key) => (at as never)?.[key], Properties);
      const named: Record<string, string[]> = {
        'AWS::CloudFront::ResponseHeadersPolicy': ['ResponseHeadersPolicyConfig.Name'],
        'AWS::CloudFront::OriginAccessControl': ['OriginAccessControlConfig.Name'],
        'AWS::SSM::Parameter': ['Name'],
        'AWS::ApiGateway::RestApi': ['Name'],
        'AWS::Logs::MetricFilter': ['MetricTransformations.0.MetricNamespace'],
        'AWS::CloudFormation::CustomResource': ['ParameterPrefix'],
        'AWS::Lambda::Function': ['Environment.Variables.PARAMETER_PREFIX', 'Environment.Variables.POWERTOOLS_METRICS_NAMESPACE'],
      };
      for (const path of named[Type] ?? []) {
        const value = property(path);
        if (value !== undefined) names.push(`${Type} ${written(value)}`);
      }
      if (
        Type === 'AWS::CloudWatch::Alarm' &&
        typeof Properties['Namespace'] === 'string' &&
        !/^AWS\//.test(Properties['Namespace'])
      )
        names.push(`${Type} ${Properties['Namespace']}`);
    }
    return [...new Set(names)].sort();
  }

  const production = synth();
  const staging = synth({ stackName: 'ImageUploadStaging' });

  it('keeps the names of the copy deployed before, but for the API, named after its stack', () => {
    expect(accountWideNames(production)).toEqual([
      'AWS::ApiGateway::RestApi ImageUpload',
      'AWS::CloudFormation::CustomResource /image-upload',
      'AWS::CloudFront::OriginAccessControl ImageUpload-{Region}-images',
      'AWS::CloudFront::ResponseHeadersPolicy ImageUpload-{Region}-image-headers',
      'AWS::CloudFront::ResponseHeadersPolicy ImageUpload-{Region}-security-headers',
      'AWS::CloudWatch::Alarm ImageUpload',
      'AWS::Lambda::Function /image-upload',
      'AWS::Lambda::Function ImageUpload',
      'AWS::Logs::MetricFilter ImageUpload',
      'AWS::SSM::Parameter /image-upload/distribution-id',
      'AWS::SSM::Parameter /image-upload/public-url',
    ]);
  });

  it('gives another copy names of its own, the same logical ids for its data, and CloudFront names that differ by region', () => {
    const ours = accountWideNames(production).map((name) => name.split(' ')[1]);
    const theirs = accountWideNames(staging).map((name) => name.split(' ')[1]);
    expect(theirs.filter((name) => ours.includes(name))).toEqual([]);
    expect(theirs).toContain('/image-upload-staging/public-url');
    expect(theirs).toContain('ImageUploadStaging-{Region}-images');
    // what holds data, and what CloudFront serves it by, keeps its logical id whatever the stack's name
    const ids = (template: Template): string[] =>
      Object.entries(template.toJSON()['Resources'] as Resources)
        .filter(([, { Type }]) =>
          ['AWS::S3::Bucket', 'AWS::DynamoDB::GlobalTable', 'AWS::CloudFront::Distribution'].includes(Type),
        )
        .map(([id]) => id)
        .sort();
    expect(ids(staging)).toEqual(ids(production));
    expect(ids(production)).toEqual([
      expect.stringMatching(/^Distribution/),
      expect.stringMatching(/^Images/),
      'Records091F6ECA',
    ]);
    staging.hasResourceProperties('AWS::CloudFormation::CustomResource', {
      Creates: Match.arrayWith(['/image-upload-staging/api-key']),
    });
  });

  it('keeps a parameter prefix given in context, and refuses a name CloudFormation or the derived names cannot take', () => {
    synth({ stackName: 'Other', parameterPrefix: '/shared/other' }).hasResourceProperties('AWS::SSM::Parameter', {
      Name: '/shared/other/public-url',
    });
    for (const bad of ['9lives', 'has space', 'under_score', 'A'.repeat(41)])
      expect(() => synth({ stackName: bad })).toThrow('context stackName must be a letter then up to 39 letters');
    for (const alike of ['image-upload', 'Image-Upload', 'imageUpload'])
      expect(() => synth({ stackName: alike })).toThrow(`context stackName ${alike} would share ImageUpload's parameters`);
  });
});

describe('rotating the origin secret (-c originSecretRotation)', () => {
  it('gives the API function the digest of the secret CloudFront sends, and settles a rotation after everything that sends or checks it', () => {
    const template = synth();
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ ORIGIN_SECRET_SHA256: { 'Fn::GetAtt': ['Setup', 'OriginSecretSha256'] } }) },
    });
    const settled = template.findResources('AWS::CloudFormation::CustomResource', {
      Properties: { SettleOriginSecret: 'true' },
    });
    const [only] = Object.values(settled) as Array<{ DependsOn: string[]; Properties: Record<string, unknown> }>;
    expect(only?.DependsOn).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Distribution/),
        expect.stringMatching(/^ApiFunction/),
        expect.stringMatching(/^ApiFirewallWebAcl/),
      ]),
    );
    expect(only?.Properties['OriginSecretRotation']).toBeUndefined();
  });

  it('lists every attribute the stack reads of the setup step among its properties, so an upgrade runs it again', () => {
    const template = synth();
    const json = JSON.stringify(template.toJSON());
    const read = [...new Set([...json.matchAll(/"Fn::GetAtt":\["Setup","(\w+)"\]/g)].map((match) => match[1]))].sort();
    expect(read).toEqual(['OriginSecret', 'OriginSecretSha256', 'PreviousOriginSecret']);
    template.hasResourceProperties('AWS::CloudFormation::CustomResource', {
      Answers: Match.arrayEquals(['OriginSecret', 'PreviousOriginSecret', 'OriginSecretSha256']),
      Creates: Match.arrayWith(['/image-upload/origin-secret-deployed']),
    });
  });

  it('passes a rotation to the setup step and the settle step, and refuses a value that is not a plain word', () => {
    const template = synth({ originSecretRotation: '2026-11-27' });
    template.hasResourceProperties('AWS::CloudFormation::CustomResource', {
      Creates: Match.anyValue(),
      OriginSecretRotation: '2026-11-27',
    });
    template.hasResourceProperties('AWS::CloudFormation::CustomResource', {
      SettleOriginSecret: 'true',
      OriginSecretRotation: '2026-11-27',
    });
    expect(() => synth({ originSecretRotation: 'two words' })).toThrow('context originSecretRotation must be up to 64');
  });
});

describe('the distribution (-c priceClass)', () => {
  it('serves from the edge locations of the price class asked, every one by default', () => {
    const priceClassOf = (context: Record<string, unknown>) =>
      (Object.values(synth(context).findResources('AWS::CloudFront::Distribution'))[0] as { Properties: Record<string, unknown> })
        .Properties['DistributionConfig'];
    expect(priceClassOf({})).toMatchObject({ PriceClass: 'PriceClass_All' });
    expect(priceClassOf({ priceClass: '100' })).toMatchObject({ PriceClass: 'PriceClass_100' });
    expect(priceClassOf({ priceClass: '200' })).toMatchObject({ PriceClass: 'PriceClass_200' });
    expect(() => synth({ priceClass: 'cheap' })).toThrow('context priceClass must be All, 200 or 100, got cheap');
  });
});
