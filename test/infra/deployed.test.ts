import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CloudFrontClient,
  CreateDistributionCommand,
  GetInvalidationCommand,
  ListInvalidationsCommand,
} from '@aws-sdk/client-cloudfront';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { CreateTableCommand, DynamoDBClient, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { runnableCopy } from '../support/bundles';
import { makePng } from '../support/images';
import { startLambdaTwin, type LambdaTwin } from '../support/lambda-twin';
import { motoAvailable, startMoto, type Moto } from '../support/moto';
import { eventFrom, multipartUpload, urlencodedUpload } from '../support/test-service';

const ROOT = join(__dirname, '..', '..');

type Resource = { Type: string; Properties: Record<string, unknown>; Metadata?: Record<string, unknown> };
type TemplateJson = { Resources: Record<string, Resource> };

/**
 * The one full `cdk synth` of the run, as an operator's `cdk deploy` does it: the pinned CLI, cdk.json's app, esbuild
 * bundling on this machine (no Docker), sharp's Linux arm64 binary installed into the function's asset by npm, and
 * cdk-nag's checks (the CLI fails on any unacknowledged finding). The twin below lets URL sources reach 127.0.0.1.
 */
let out: string;
let template: TemplateJson;

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'cdk-out-'));
  execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'aws-cdk', 'bin', 'cdk'),
      'synth',
      '--quiet',
      '--output',
      out,
      '-c',
      'urlFetchAllowHosts=127.0.0.1',
    ],
    { cwd: ROOT, stdio: 'pipe', env: { ...process.env, CDK_DISABLE_VERSION_CHECK: 'true' } },
  );
  template = JSON.parse(readFileSync(join(out, 'ImageUpload.template.json'), 'utf8')) as TemplateJson;
}, 300_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

function resourceOf(logicalIdPrefix: string, type: string): [string, Resource] {
  const found = Object.entries(template.Resources).find(([id, r]) => id.startsWith(logicalIdPrefix) && r.Type === type);
  if (!found) throw new Error(`no ${type} ${logicalIdPrefix}`);
  return found;
}

function assetOf(logicalIdPrefix: string): string {
  const assetPath = resourceOf(logicalIdPrefix, 'AWS::Lambda::Function')[1].Metadata?.['aws:asset:path'];
  if (typeof assetPath !== 'string') throw new Error(`no asset for ${logicalIdPrefix}`);
  return join(out, assetPath);
}

describe('cdk synth with bundling', () => {
  it('puts sharp and its Linux arm64 binary into the API function asset', () => {
    const asset = assetOf('ApiFunction');
    expect(existsSync(join(asset, 'index.js'))).toBe(true);
    const binaries = readdirSync(join(asset, 'node_modules', '@img', 'sharp-linux-arm64', 'lib'));
    expect(binaries.some((file) => /^sharp-linux-arm64.*\.node$/.test(file))).toBe(true);
    expect(existsSync(join(asset, 'node_modules', '@img', 'sharp-libvips-linux-arm64'))).toBe(true);
  });

  it('bundles the sweep without sharp', () => {
    const asset = assetOf('SweepFunction');
    expect(existsSync(join(asset, 'node_modules'))).toBe(false);
    expect(readFileSync(join(asset, 'index.js'), 'utf8')).not.toContain('sharp-linux');
  });

  it.each(['ApiFunction', 'SweepFunction', 'SetupFunction'])("bundles the AWS SDK into %s (not the runtime's SDK)", (prefix) => {
    const bundle = readFileSync(join(assetOf(prefix), 'index.js'), 'utf8');
    // only the optional signers (SigV4a, CRT), which these calls never use, stay outside
    expect(bundle).not.toMatch(/require\(["']@(aws-sdk\/(?!signature-v4)|smithy\/)/);
  });
});

/** cfn-lint is on the machine image (pip); CI must not pass without it, elsewhere the check skips and says so. */
function cfnLintAvailable(): boolean {
  const probe = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
  if (probe.status === 0) return true;
  if (process.env['CI']) throw new Error('cfn-lint is not installed: CI needs it (pip install cfn-lint)');
  process.stderr.write('cfn-lint is not installed: the template lint is skipped\n');
  return false;
}

describe('cfn-lint', () => {
  (cfnLintAvailable() ? it : it.skip)('finds no error in the synthesized template', () => {
    const lint = spawnSync('cfn-lint', ['--format', 'parseable', '-t', join(out, 'ImageUpload.template.json')], {
      encoding: 'utf8',
    });
    // cfn-lint's exit status is a bit field: 2 errors, 4 warnings, 8 informational findings
    const errors = lint.stdout.split('\n').filter((line) => /:E\d{4}:/.test(line));
    expect(errors).toEqual([]);
    expect(lint.status! & 2).toBe(0);
  });
});

/** A CloudFormation value of the template, with Ref and Fn::GetAtt taken from the twin's own resources. */
function resolve(value: unknown, physical: Record<string, string>): string {
  if (typeof value === 'string') return value;
  const token = value as Record<string, unknown>;
  if (typeof token['Ref'] === 'string') {
    const found = physical[token['Ref']];
    if (found !== undefined) return found;
  }
  const getAtt = token['Fn::GetAtt'] as [string, string] | undefined;
  if (getAtt && physical[getAtt.join('.')] !== undefined) return physical[getAtt.join('.')] as string;
  const join_ = token['Fn::Join'] as [string, unknown[]] | undefined;
  if (join_) return join_[1].map((part) => resolve(part, physical)).join(join_[0]);
  throw new Error(`the twin does not know ${JSON.stringify(value)}`);
}

/**
 * The deployed twin: the function bundles exactly as `cdk synth` wrote them (with this machine's sharp binary beside
 * the arm64 one), each in a process of its own with the environment the template gives it, invoked with API Gateway
 * events shaped as CloudFront forwards them, against moto_server standing in for S3, DynamoDB, SSM and CloudFront.
 */
const twinSuite = motoAvailable() ? describe : describe.skip;
if (!motoAvailable()) process.stderr.write('moto_server is not installed: the deployed twin is skipped\n');

twinSuite('the deployed twin (bundles, template environment, moto)', () => {
  let moto: Moto;
  let api: LambdaTwin;
  let sweep: LambdaTwin;
  let setup: LambdaTwin;
  let images: Server;
  let imagesUrl: string;
  const copies: string[] = [];
  const physical: Record<string, string> = {};
  const region = 'us-east-1';
  let clients: { s3: S3Client; dynamodb: DynamoDBClient; ssm: SSMClient; cloudfront: CloudFrontClient };
  let bucket: string;
  let distributionId: string;
  let apiKey: string;
  let originSecret: string;

  /** The environment Lambda gives a function: the template's variables, the region, credentials, and moto's endpoint. */
  function lambdaEnv(logicalIdPrefix: string, extra: Record<string, string> = {}): Record<string, string> {
    const variables = (
      resourceOf(logicalIdPrefix, 'AWS::Lambda::Function')[1].Properties['Environment'] as
        { Variables: Record<string, unknown> } | undefined
    )?.Variables;
    const env: Record<string, string> = {
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: 'twin',
      AWS_SECRET_ACCESS_KEY: 'twin',
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      AWS_LAMBDA_FUNCTION_NAME: logicalIdPrefix,
      ...extra,
    };
    for (const [name, value] of Object.entries(variables ?? {})) env[name] = resolve(value, physical);
    return env;
  }

  function twinOf(logicalIdPrefix: string, extra: Record<string, string> = {}): LambdaTwin {
    const copy = runnableCopy(assetOf(logicalIdPrefix));
    copies.push(copy);
    return startLambdaTwin(copy, lambdaEnv(logicalIdPrefix, extra));
  }

  /** A request as CloudFront hands it to API Gateway: the origin secret, the viewer's address, CloudFront's headers. */
  async function throughCloudFront(request: Request, secret: string | undefined = originSecret): Promise<APIGatewayProxyEvent> {
    const headers = new Headers(request.headers);
    if (secret !== undefined) headers.set('x-origin-verify', secret);
    headers.set('x-viewer-address', '198.51.100.23');
    headers.set('x-forwarded-for', '198.51.100.23, 130.176.98.12');
    headers.set('via', '2.0 0123456789abcdef.cloudfront.net (CloudFront)');
    headers.set('x-amz-cf-id', 'twin-cf-id');
    headers.set('host', 'abcdef1234.execute-api.us-east-1.amazonaws.com');
    const bodyless = request.method === 'GET' || request.method === 'HEAD';
    const init: RequestInit = { method: request.method, headers, ...(bodyless ? {} : { body: await request.arrayBuffer() }) };
    const event = await eventFrom(new Request(request.url, init), '130.176.98.12');
    event.requestContext.stage = 'v1';
    return event;
  }

  const call = async (request: Request, secret?: string): Promise<APIGatewayProxyResult> =>
    api.invoke<APIGatewayProxyResult>(await throughCloudFront(request, secret));

  const objectKeys = async (): Promise<string[]> =>
    ((await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((object) => object.Key ?? '');

  /** Every path CloudFront was asked to invalidate, over all invalidations. */
  async function invalidatedPaths(): Promise<string[]> {
    const list = await clients.cloudfront.send(new ListInvalidationsCommand({ DistributionId: distributionId }));
    const paths: string[] = [];
    for (const item of list.InvalidationList?.Items ?? []) {
      const got = await clients.cloudfront.send(new GetInvalidationCommand({ DistributionId: distributionId, Id: item.Id }));
      paths.push(...(got.Invalidation?.InvalidationBatch?.Paths?.Items ?? []));
    }
    return paths;
  }

  const setupEvent = (type: 'Create' | 'Update' | 'Delete'): Record<string, unknown> => {
    // the provider framework hands the function the resource's properties, its service token included
    const properties = resourceOf('Setup', 'AWS::CloudFormation::CustomResource')[1].Properties;
    return {
      RequestType: type,
      ServiceToken: 'arn:aws:lambda:us-east-1:000000000000:function:provider',
      ResponseURL: 'https://cloudformation-custom-resource-response.invalid/',
      StackId: 'arn:aws:cloudformation:us-east-1:000000000000:stack/ImageUpload/twin',
      RequestId: `twin-${type}`,
      LogicalResourceId: 'Setup',
      ResourceType: 'AWS::CloudFormation::CustomResource',
      ResourceProperties: { ...properties, ServiceToken: 'arn:aws:lambda:us-east-1:000000000000:function:provider' },
      ...(type === 'Create' ? {} : { PhysicalResourceId: '/image-upload/setup', OldResourceProperties: {} }),
    };
  };

  const parameter = async (name: string): Promise<{ value: string | undefined; type: string | undefined }> => {
    const found = (await clients.ssm.send(new GetParameterCommand({ Name: name, WithDecryption: true }))).Parameter;
    return { value: found?.Value, type: found?.Type };
  };

  beforeAll(async () => {
    moto = await startMoto();
    const common = { region, endpoint: moto.endpoint, credentials: { accessKeyId: 'twin', secretAccessKey: 'twin' } };
    clients = {
      s3: new S3Client({ ...common, forcePathStyle: true }),
      dynamodb: new DynamoDBClient(common),
      ssm: new SSMClient(common),
      cloudfront: new CloudFrontClient(common),
    };

    // the stack's resources, made from the template's own definitions where the function depends on them
    const [bucketId] = resourceOf('Images', 'AWS::S3::Bucket');
    bucket = 'twin-images';
    await clients.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    physical[bucketId] = bucket;
    const [tableId, table] = resourceOf('Records', 'AWS::DynamoDB::GlobalTable');
    const { AttributeDefinitions, KeySchema, GlobalSecondaryIndexes, BillingMode } = table.Properties;
    physical[tableId] = 'twin-records';
    await clients.dynamodb.send(
      new CreateTableCommand({
        TableName: 'twin-records',
        AttributeDefinitions,
        KeySchema,
        GlobalSecondaryIndexes,
        BillingMode,
      } as CreateTableCommandInput),
    );
    const [distributionLogicalId] = resourceOf('Distribution', 'AWS::CloudFront::Distribution');
    const distribution = await clients.cloudfront.send(
      new CreateDistributionCommand({
        DistributionConfig: {
          CallerReference: `twin-${Date.now()}`,
          Comment: 'twin',
          Enabled: true,
          Origins: {
            Quantity: 1,
            Items: [
              {
                Id: 'api',
                DomainName: 'abcdef1234.execute-api.us-east-1.amazonaws.com',
                CustomOriginConfig: { HTTPPort: 80, HTTPSPort: 443, OriginProtocolPolicy: 'https-only' },
              },
            ],
          },
          DefaultCacheBehavior: {
            TargetOriginId: 'api',
            ViewerProtocolPolicy: 'https-only',
            CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
          },
        },
      }),
    );
    distributionId = distribution.Distribution?.Id ?? '';
    physical[distributionLogicalId] = distributionId;
    physical[`${distributionLogicalId}.DomainName`] = distribution.Distribution?.DomainName ?? '';
    // the parameters the stack itself writes
    for (const [, resource] of Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::SSM::Parameter')) {
      await clients.ssm.send(
        new PutParameterCommand({
          Name: resolve(resource.Properties['Name'], physical),
          Value: resolve(resource.Properties['Value'], physical),
          Type: 'String',
        }),
      );
    }

    // a URL source on this machine, which the synthesized URL_FETCH_ALLOW_HOSTS lets the function reach
    const png = await makePng(48, 40);
    images = createServer((_request, response) => response.writeHead(200, { 'Content-Type': 'image/png' }).end(png));
    await new Promise<void>((done) => images.listen(0, '127.0.0.1', done));
    imagesUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/cat%20photo.png`;

    setup = twinOf('SetupFunction');
    api = twinOf('ApiFunction', { POWERTOOLS_METRICS_DISABLED: 'false' });
    // five minutes and a second from now: an expiration of 300 s is due
    sweep = twinOf('SweepFunction', { TWIN_CLOCK_OFFSET_MS: '301000' });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([api?.stop(), sweep?.stop(), setup?.stop(), moto?.stop()]);
    images?.close();
    for (const copy of copies) rmSync(copy, { recursive: true, force: true });
  });

  it('setup (custom resource): creates the key, salt, origin secret and flood limits; updates and deletes keep them', async () => {
    const created = await setup.invoke<{ Data: { OriginSecret: string }; NoEcho: boolean }>(setupEvent('Create'));
    const key = await parameter('/image-upload/api-key');
    const flood = await parameter('/image-upload/flood-limits');
    const secret = await parameter('/image-upload/origin-secret');
    expect(key.type).toBe('SecureString');
    expect(flood).toEqual({
      value: JSON.stringify({ minute: 50, hour: 500, day: 1000, week: 5000, month: 10000 }),
      type: 'String',
    });
    expect((await parameter('/image-upload/id-salt')).value).toMatch(/^[0-9a-f]{64}$/);
    expect(created).toMatchObject({ Data: { OriginSecret: secret.value }, NoEcho: true });
    apiKey = key.value ?? '';
    originSecret = secret.value ?? '';

    const edited = JSON.stringify({ minute: 40, hour: 0, day: 0, week: 0, month: 0 });
    await clients.ssm.send(
      new PutParameterCommand({ Name: '/image-upload/flood-limits', Value: edited, Type: 'String', Overwrite: true }),
    );
    await setup.invoke(setupEvent('Update'));
    await setup.invoke(setupEvent('Delete'));
    expect((await parameter('/image-upload/flood-limits')).value).toBe(edited);
    expect((await parameter('/image-upload/api-key')).value).toBe(apiKey);
  });

  let uploaded: Record<string, unknown> & { url_viewer: string; delete_url: string; id_encoded: string; url: string };
  let duplicateDeleteUrl: string;

  it('uploads a multipart file: 200, the object in S3 with its type, the URL on the public base', async () => {
    const bytes = await makePng(64, 48);
    const response = await call(multipartUpload({ key: apiKey, source: { bytes, filename: 'twin photo.png' } }));
    expect(response.statusCode).toBe(200);
    uploaded = (JSON.parse(response.body) as { image: typeof uploaded }).image;
    expect(uploaded.url).toMatch(/^https:\/\/[a-z0-9]+\.cloudfront\.net\/images\/\d{4}\/\d{2}\/\d{2}\/twin-photo\.png$/);
    const head = await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: new URL(uploaded.url).pathname.slice(1) }));
    expect(head.ContentType).toBe('image/png');
    expect(head.CacheControl).toBe('public, max-age=31536000, immutable');
    expect(await objectKeys()).toHaveLength(3);
    // its metrics, as CloudWatch would read them from the log
    expect(api.output()).toMatch(/"Namespace":"ImageUpload"[^\n]*"UploadStored":1/);
  });

  it('answers a repeated upload with the same image (duplicate), storing nothing new', async () => {
    const bytes = await makePng(64, 48);
    const response = await call(multipartUpload({ key: apiKey, source: { bytes, filename: 'twin photo.png' } }));
    const duplicate = (JSON.parse(response.body) as { image: typeof uploaded }).image;
    expect(duplicate.id_encoded).toBe(uploaded.id_encoded);
    expect(await objectKeys()).toHaveLength(3);
    duplicateDeleteUrl = duplicate.delete_url;
  });

  it('uploads base64 in a urlencoded body (imgBB mode) and a URL source', async () => {
    const base64 = await call(urlencodedUpload({ key: apiKey, image: (await makePng(30, 20)).toString('base64') }));
    expect(base64.statusCode).toBe(200);
    expect(JSON.parse(base64.body)).toMatchObject({ status: 200, data: { id: expect.any(String) as unknown } });
    const fromUrl = await call(urlencodedUpload({ key: apiKey, source: imagesUrl }));
    expect(fromUrl.statusCode).toBe(200);
    expect(JSON.parse(fromUrl.body)).toMatchObject({ image: { original_filename: 'cat photo.png', width: 48 } });
  });

  it('serves the viewer page', async () => {
    const page = await call(new Request(uploaded.url_viewer));
    expect(page.statusCode).toBe(200);
    expect(page.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('twin photo');
  });

  it('deletes through the delete links, and invalidates the three files in CloudFront', async () => {
    const before = await objectKeys();
    const post = (link: string) => call(new Request(link, { method: 'POST', headers: { Accept: 'application/json' } }));
    // the duplicate's link takes its upload away; the first upload's link then deletes the image
    expect(JSON.parse((await post(duplicateDeleteUrl)).body)).toMatchObject({
      success: { message: expect.stringMatching(/^upload deleted/) as unknown },
    });
    expect(await objectKeys()).toEqual(before);
    expect(JSON.parse((await post(uploaded.delete_url)).body)).toMatchObject({ success: { message: 'image deleted' } });
    const keys = ['url', 'thumb', 'medium'].map(
      (field) => new URL(field === 'url' ? uploaded.url : (uploaded[field] as { url: string }).url).pathname,
    );
    expect(await objectKeys()).toEqual(before.filter((key) => !keys.includes(`/${key}`)));
    expect(await invalidatedPaths()).toEqual(expect.arrayContaining(keys));
    expect((await call(new Request(uploaded.url_viewer))).statusCode).toBe(404);
  });

  it('sweeps an expired image: its files, its record, and its cached copies', async () => {
    const response = await call(
      multipartUpload({ key: apiKey, expiration: '300', source: { bytes: await makePng(70, 50), filename: 'soon.png' } }),
    );
    const image = (JSON.parse(response.body) as { image: { url: string } }).image;
    const key = new URL(image.url).pathname.slice(1);
    expect(await objectKeys()).toContain(key);
    const result = await sweep.invoke<{ removed: number; failed: number; purgedPaths: number }>({});
    expect(result).toEqual({ removed: 1, failed: 0, purgedPaths: 3 });
    expect(await objectKeys()).not.toContain(key);
    expect(await invalidatedPaths()).toContain(`/${key}`);
  });

  it('takes an image down with npm run admin --stack: files, record, and one invalidation', async () => {
    const response = await call(
      multipartUpload({ key: apiKey, source: { bytes: await makePng(90, 60), filename: 'abuse.png' } }),
    );
    const image = (JSON.parse(response.body) as { image: { url: string; url_viewer: string; thumb: { url: string } } }).image;
    // the stack's outputs, as CloudFormation answers them for its name
    const cloudformation = new CloudFormationClient({
      region,
      endpoint: moto.endpoint,
      credentials: { accessKeyId: 'twin', secretAccessKey: 'twin' },
    });
    const outputs = {
      BucketName: bucket,
      TableName: 'twin-records',
      DistributionId: distributionId,
      BaseUrl: new URL(image.url).origin,
      ApiKeyParameter: '/image-upload/api-key',
    };
    await cloudformation.send(
      new CreateStackCommand({
        StackName: 'ImageUploadTwin',
        TemplateBody: JSON.stringify({
          Resources: { Placeholder: { Type: 'AWS::SNS::Topic' } },
          Outputs: Object.fromEntries(Object.entries(outputs).map(([name, value]) => [name, { Value: value }])),
        }),
      }),
    );
    cloudformation.destroy();
    const run = spawnSync(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
        join(ROOT, 'scripts', 'admin.ts'),
        '--stack',
        'ImageUploadTwin',
        'takedown',
        image.url_viewer,
      ],
      {
        encoding: 'utf8',
        env: {
          PATH: process.env['PATH'] ?? '',
          AWS_REGION: region,
          AWS_ACCESS_KEY_ID: 'twin',
          AWS_SECRET_ACCESS_KEY: 'twin',
          AWS_ENDPOINT_URL: moto.endpoint,
        },
      },
    );
    expect([run.status, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toMatch(/^took down \w+: removed images\/.+abuse\.png/);
    const keys = [image.url, image.thumb.url].map((url) => new URL(url).pathname);
    expect(await objectKeys()).not.toContain(keys[0]?.slice(1));
    expect(await invalidatedPaths()).toEqual(expect.arrayContaining(keys));
    expect((await call(new Request(image.url_viewer))).statusCode).toBe(404);
  });

  it('refuses a direct call without the origin secret (around CloudFront) with 403 in the envelope', async () => {
    const direct = await call(multipartUpload({ key: apiKey, source: { bytes: await makePng(8, 8), filename: 'x.png' } }), '');
    expect(direct.statusCode).toBe(403);
    expect(JSON.parse(direct.body)).toEqual({
      status_code: 403,
      error: { message: 'Forbidden', code: 403 },
      status_txt: 'Forbidden',
    });
  });
});
