import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
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
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  ScanCommand,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetBucketCorsCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { GetParameterCommand, GetParametersCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { Template } from 'aws-cdk-lib/assertions';
import { NSFW_MODEL_FILE } from '../../functions/imaging/nsfw-classifier';
import { buildApp } from '../../lib/app';
import { FUNCTIONS } from '../../lib/service-functions';
import { arm64Missing, runOnArm64 } from '../support/arm64';
import { cfnLintAvailable, cfnLintErrors } from '../support/cfn-lint';
import { runnableCopy } from '../support/bundles';
import sharp from 'sharp';
import { makeBmp, makePhoto, makePng } from '../support/images';
import { startLambdaTwin, type LambdaTwin } from '../support/lambda-twin';
import { motoAvailable, startMoto, type Moto } from '../support/moto';
import {
  policiesOf,
  resolveString,
  resolveValue,
  roleOf,
  TWIN_ACCOUNT,
  TWIN_REGION,
  TwinIam,
  withoutAction,
  type Credentials,
  type Resource,
  type TemplateJson,
} from '../support/iam-twin';
import { eventFrom, multipartUpload, PUBLIC_URL, urlencodedUpload } from '../support/test-service';
import type { ImageObject } from '../../functions/core/image/image-object';

const ROOT = join(__dirname, '..', '..');

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

function resourceOf(logicalIdPrefix: string, type: string, from: TemplateJson = template): [string, Resource] {
  const found = Object.entries(from.Resources).find(([id, r]) => id.startsWith(logicalIdPrefix) && r.Type === type);
  if (!found) throw new Error(`no ${type} ${logicalIdPrefix}`);
  return found;
}

function assetOf(logicalIdPrefix: string): string {
  const assetPath = resourceOf(logicalIdPrefix, 'AWS::Lambda::Function')[1].Metadata?.['aws:asset:path'];
  if (typeof assetPath !== 'string') throw new Error(`no asset for ${logicalIdPrefix}`);
  return join(out, assetPath);
}

/** The bytes of every file under a folder. */
function treeBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const path = join(dir, entry.name);
    return sum + (entry.isDirectory() ? treeBytes(path) : entry.isFile() ? statSync(path).size : 0);
  }, 0);
}

describe('cdk synth with bundling', () => {
  it('puts sharp and its Linux arm64 binary into the API function asset', () => {
    const asset = assetOf('ApiFunction');
    expect(existsSync(join(asset, 'index.js'))).toBe(true);
    const binaries = readdirSync(join(asset, 'node_modules', '@img', 'sharp-linux-arm64', 'lib'));
    expect(binaries.some((file) => /^sharp-linux-arm64.*\.node$/.test(file))).toBe(true);
    expect(existsSync(join(asset, 'node_modules', '@img', 'sharp-libvips-linux-arm64'))).toBe(true);
  });

  it("puts onnxruntime with only Lambda's binary, and the NSFW model beside index.js, into the API function asset", () => {
    const asset = assetOf('ApiFunction');
    const binaries = join(asset, 'node_modules', 'onnxruntime-node', 'bin', 'napi-v6');
    expect(readdirSync(binaries)).toEqual(['linux']);
    expect(readdirSync(join(binaries, 'linux'))).toEqual(['arm64']);
    expect(readdirSync(join(binaries, 'linux', 'arm64')).sort()).toEqual(['libonnxruntime.so.1', 'onnxruntime_binding.node']);
    const model = readFileSync(join(asset, 'models', NSFW_MODEL_FILE));
    expect(model.equals(readFileSync(join(FUNCTIONS, 'imaging', 'models', NSFW_MODEL_FILE)))).toBe(true);
    // within Lambda's 250 MB for an unzipped function
    expect(treeBytes(asset)).toBeLessThan(150 * 1024 * 1024);
  });

  it('keeps what only some requests need out of the API bundle: the HEIC decoder beside it, no CloudFront client', () => {
    const asset = assetOf('ApiFunction');
    const bundle = readFileSync(join(asset, 'index.js'), 'utf8');
    expect(existsSync(join(asset, 'node_modules', 'heic-decode', 'package.json'))).toBe(true);
    expect(existsSync(join(asset, 'node_modules', 'libheif-js', 'package.json'))).toBe(true);
    expect(existsSync(join(asset, 'node_modules', 'bmp-ts', 'package.json'))).toBe(true);
    expect(bundle).not.toContain('libheif');
    expect(bundle).not.toContain('CloudFrontClient');
    // the sweep purges: its bundle has the client
    expect(readFileSync(join(assetOf('SweepFunction'), 'index.js'), 'utf8')).toContain('CloudFrontClient');
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

/**
 * What the arm64 check runs, in the API asset's folder with its own modules: a JPEG of noise made and decoded by sharp,
 * squeezed to the model's input, scored by onnxruntime with the asset's model. Prints the five scores as JSON.
 */
const ASSET_PROGRAM = `
const sharp = require(require.resolve('sharp', { paths: [process.cwd()] }));
const ort = require(require.resolve('onnxruntime-node', { paths: [process.cwd()] }));
(async () => {
  const pixels = Buffer.alloc(448 * 448 * 3);
  let state = 7;
  for (let i = 0; i < pixels.length; i += 1) pixels[i] = (state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 24;
  const jpeg = await sharp(pixels, { raw: { width: 448, height: 448, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
  const rgb = await sharp(jpeg).resize(224, 224, { fit: 'fill' }).raw().toBuffer();
  const session = await ort.InferenceSession.create(require('node:fs').readFileSync('models/${NSFW_MODEL_FILE}'));
  const { scores } = await session.run({ pixels: new ort.Tensor('uint8', rgb, [1, 224, 224, 3]) });
  process.stdout.write(JSON.stringify([process.arch, Array.from(scores.data)]));
})();
`;

/** qemu and the arm64 libraries: `.ci/run` installs them; CI must not pass without them, elsewhere the check skips. */
function arm64Runnable(): boolean {
  const missing = arm64Missing();
  if (!missing) return true;
  if (process.env['CI']) throw new Error(`the arm64 check cannot run: ${missing}`);
  process.stderr.write(`the arm64 check is skipped: ${missing}\n`);
  return false;
}

describe("the API asset's arm64 binaries", () => {
  (arm64Runnable() ? it : it.skip)(
    'load and run under qemu (sharp, onnxruntime, the model), scoring what this machine scores',
    () => {
      const asset = assetOf('ApiFunction');
      const [arch, arm64Scores] = JSON.parse(runOnArm64(ASSET_PROGRAM, asset)) as [string, number[]];
      expect(arch).toBe('arm64');
      const copy = runnableCopy(asset);
      try {
        const here = JSON.parse(execFileSync(process.execPath, ['-e', ASSET_PROGRAM], { cwd: copy, encoding: 'utf8' })) as [
          string,
          number[],
        ];
        expect(here[0]).toBe(process.arch);
        expect(arm64Scores).toHaveLength(5);
        arm64Scores.forEach((score, index) => expect(Math.abs(score - (here[1][index] ?? NaN))).toBeLessThan(1e-4));
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    },
    300_000,
  );
});

describe('cfn-lint', () => {
  (cfnLintAvailable() ? it : it.skip)('finds no error in the synthesized template', () => {
    expect(cfnLintErrors(join(out, 'ImageUpload.template.json'))).toEqual({ errors: [], errorBit: 0 });
  });
});

/**
 * The deployed twin: the function bundles exactly as `cdk synth` wrote them (with this machine's sharp binary beside
 * the arm64 one), each in a process of its own with the environment the template gives it and the session credentials
 * of the role the template gives it, invoked with API Gateway events shaped as CloudFront forwards them, against
 * moto_server standing in for S3, DynamoDB, SSM and CloudFront with IAM enforced (test/support/moto-iam-server.py):
 * a call the role does not allow is refused as AWS would refuse it. Every answer of 500 or more fails the suite, and
 * so does any refusal in a function's log.
 */
const twinSuite = motoAvailable() ? describe : describe.skip;
if (!motoAvailable()) process.stderr.write('moto_server is not installed: the deployed twin is skipped\n');

twinSuite('the deployed twin under IAM (bundles, template environment and roles, moto)', () => {
  let moto: Moto;
  let twinIam: TwinIam;
  let api: LambdaTwin;
  let sweep: LambdaTwin;
  let setup: LambdaTwin;
  let images: Server;
  let imagesUrl: string;
  const copies: string[] = [];
  const twins: LambdaTwin[] = [];
  const physical: Record<string, string> = {};
  const sessions: Record<string, Credentials> = {};
  const narrowed: { api?: Credentials; sweep?: Credentials } = {};
  let adminSession: Credentials;
  let operator: Credentials;
  let clients: {
    s3: S3Client;
    dynamodb: DynamoDBClient;
    ssm: SSMClient;
    cloudfront: CloudFrontClient;
  };
  const bucket = 'twin-images';
  const tableName = 'twin-records';
  let distributionId: string;
  let apiKey: string;
  let originSecret: string;

  /** A copy of the stack in moto: its template, its resources' names, and its functions' sessions. */
  interface Copy {
    template: TemplateJson;
    physical: Record<string, string>;
    sessions: Record<string, Credentials>;
  }
  /** The copy every test but one runs (`ImageUpload`, synthesized with bundling). */
  const first = (): Copy => ({ template, physical, sessions });
  let staging: Copy;
  const stagingBucket = 'twin-staging-images';

  let adminStack: Promise<void> | undefined;
  /**
   * `npm run admin -- --stack ImageUploadTwin ...` in an operator's session of the role docs/operations.md describes,
   * not a function's; the stack's outputs as CloudFormation answers them for its name (made once).
   */
  async function adminCli(baseUrl: string, args: string[]): Promise<SpawnSyncReturns<string>> {
    adminStack ??= (async () => {
      const cloudformation = new CloudFormationClient({ region: TWIN_REGION, endpoint: moto.endpoint, credentials: operator });
      const outputs = {
        BucketName: bucket,
        TableName: tableName,
        DistributionId: distributionId,
        BaseUrl: baseUrl,
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
    })();
    await adminStack;
    const cli = [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'scripts', 'admin.ts')];
    return spawnSync(process.execPath, [...cli, '--stack', 'ImageUploadTwin', ...args], {
      encoding: 'utf8',
      env: {
        PATH: process.env['PATH'] ?? '',
        AWS_REGION: TWIN_REGION,
        AWS_ACCESS_KEY_ID: adminSession.accessKeyId,
        AWS_SECRET_ACCESS_KEY: adminSession.secretAccessKey,
        AWS_SESSION_TOKEN: adminSession.sessionToken ?? '',
        AWS_ENDPOINT_URL: moto.endpoint,
      },
    });
  }

  const functionId = (prefix: string, copy = first()): string => resourceOf(prefix, 'AWS::Lambda::Function', copy.template)[0];
  const policiesOfFunction = (prefix: string, copy = first()) =>
    policiesOf(copy.template, roleOf(copy.template, functionId(prefix, copy)), copy.physical);

  /** The environment Lambda gives a function: the template's variables, the region, its role's session, moto's endpoint. */
  function lambdaEnv(
    prefix: string,
    credentials: Credentials,
    extra: Record<string, string> = {},
    copy = first(),
  ): Record<string, string> {
    const variables = (
      resourceOf(prefix, 'AWS::Lambda::Function', copy.template)[1].Properties['Environment'] as
        { Variables: Record<string, unknown> } | undefined
    )?.Variables;
    const env: Record<string, string> = {
      AWS_REGION: TWIN_REGION,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_SESSION_TOKEN: credentials.sessionToken ?? '',
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      AWS_LAMBDA_FUNCTION_NAME: prefix,
      ...extra,
    };
    for (const [name, value] of Object.entries(variables ?? {})) env[name] = resolveString(value, copy.physical);
    return env;
  }

  /**
   * A function of the template in a process of its own, as its role's session (or another's, to show a refusal). Every
   * copy runs the bundle synthesized with the first: the code is the same, the environment and role its own.
   */
  function twinOf(prefix: string, extra: Record<string, string> = {}, session?: Credentials, copy = first()): LambdaTwin {
    const credentials = session ?? copy.sessions[prefix];
    if (!credentials) throw new Error(`no session for ${prefix}`);
    const bundle = runnableCopy(assetOf(prefix));
    copies.push(bundle);
    const twin = startLambdaTwin(bundle, lambdaEnv(prefix, credentials, extra, copy));
    twins.push(twin);
    return twin;
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

  /** The API's answer; one of 500 or more (a refused call ends as 503) fails the test at once, with the log. */
  async function call(request: Request, secret?: string, through: LambdaTwin = api): Promise<APIGatewayProxyResult> {
    const response = await through.invoke<APIGatewayProxyResult>(await throughCloudFront(request, secret));
    if (response.statusCode >= 500 && through === api)
      throw new Error(`${request.method} ${request.url} answered ${response.statusCode}: ${response.body}\n${api.output()}`);
    return response;
  }

  /** The versions and delete markers of a file: what a restore could bring back. */
  const versionsOf = async (key: string): Promise<Array<{ VersionId?: string | undefined; IsLatest?: boolean | undefined }>> => {
    const page = await clients.s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: key }));
    return [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].filter((version) => version.Key === key);
  };

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

  /**
   * What the provider framework hands the setup function for a custom resource of the template (`Setup`, ...): its
   * properties as the template writes them, with `changes` (a later deploy's) over them.
   */
  const setupEvent = (
    type: 'Create' | 'Update' | 'Delete',
    resource = 'Setup',
    copy = first(),
    changes: { properties?: Record<string, string>; old?: Record<string, string> } = {},
  ): Record<string, unknown> => {
    const [logicalId, { Properties }] = resourceOf(resource, 'AWS::CloudFormation::CustomResource', copy.template);
    // the provider framework's own token stands for its function's ARN
    const properties = Object.fromEntries(Object.entries(Properties).filter(([name]) => name !== 'ServiceToken'));
    const token = 'arn:aws:lambda:us-east-1:123456789012:function:provider';
    return {
      RequestType: type,
      ServiceToken: token,
      ResponseURL: 'https://cloudformation-custom-resource-response.invalid/',
      StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/ImageUpload/twin',
      RequestId: `twin-${type}`,
      LogicalResourceId: logicalId,
      ResourceType: 'AWS::CloudFormation::CustomResource',
      ResourceProperties: { ...(resolveValue(properties, copy.physical) as object), ...changes.properties, ServiceToken: token },
      ...(type === 'Create' ? {} : { PhysicalResourceId: `twin-${logicalId}`, OldResourceProperties: changes.old ?? {} }),
    };
  };

  /** Runs the setup step of a copy, keeping what it answers where `Fn::GetAtt` finds it (the API's environment). */
  async function runSetup(
    twin: LambdaTwin,
    event: Record<string, unknown>,
    copy = first(),
  ): Promise<{ Data?: Record<string, string>; NoEcho?: boolean }> {
    const result = await twin.invoke<{ Data?: Record<string, string>; NoEcho?: boolean }>(event);
    for (const [name, value] of Object.entries(result.Data ?? {}))
      copy.physical[`${String(event['LogicalResourceId'])}.${name}`] = value;
    return result;
  }

  /** A role that may not read the first copy's API key: its read is refused as AWS refuses it. */
  async function expectKeyRefusedTo(credentials: Credentials): Promise<void> {
    const client = new SSMClient({ region: TWIN_REGION, endpoint: moto.endpoint, credentials });
    await expect(
      client.send(new GetParametersCommand({ Names: ['/image-upload/api-key'], WithDecryption: true })),
    ).rejects.toMatchObject({ name: 'AccessDeniedException' });
    client.destroy();
  }

  const parameter = async (name: string): Promise<{ value: string | undefined; type: string | undefined }> => {
    const found = (await clients.ssm.send(new GetParameterCommand({ Name: name, WithDecryption: true }))).Parameter;
    return { value: found?.Value, type: found?.Type };
  };

  const uploadOf = (response: APIGatewayProxyResult) => (JSON.parse(response.body) as { image: ImageObject }).image;

  /** A copy's resources, made from its template's own definitions where the functions depend on them; its distribution. */
  async function deployResources(copy: Copy, names: { bucket: string; table: string }): Promise<string> {
    const [bucketId] = resourceOf('Images', 'AWS::S3::Bucket', copy.template);
    await clients.s3.send(new CreateBucketCommand({ Bucket: names.bucket }));
    const versioning = (copy.template.Resources[bucketId]?.Properties['VersioningConfiguration'] as { Status?: string })?.Status;
    if (versioning === 'Enabled')
      await clients.s3.send(
        new PutBucketVersioningCommand({ Bucket: names.bucket, VersioningConfiguration: { Status: 'Enabled' } }),
      );
    copy.physical[bucketId] = names.bucket;
    copy.physical[`${bucketId}.Arn`] = `arn:aws:s3:::${names.bucket}`;
    const [tableId, table] = resourceOf('Records', 'AWS::DynamoDB::GlobalTable', copy.template);
    const { AttributeDefinitions, KeySchema, GlobalSecondaryIndexes, BillingMode } = table.Properties;
    copy.physical[tableId] = names.table;
    copy.physical[`${tableId}.Arn`] = `arn:aws:dynamodb:${TWIN_REGION}:${TWIN_ACCOUNT}:table/${names.table}`;
    await clients.dynamodb.send(
      new CreateTableCommand({
        TableName: names.table,
        AttributeDefinitions,
        KeySchema,
        GlobalSecondaryIndexes,
        BillingMode,
      } as CreateTableCommandInput),
    );
    const [distributionLogicalId] = resourceOf('Distribution', 'AWS::CloudFront::Distribution', copy.template);
    const distribution = await clients.cloudfront.send(
      new CreateDistributionCommand({
        DistributionConfig: {
          CallerReference: `twin-${names.bucket}-${Date.now()}`,
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
    const id = distribution.Distribution?.Id ?? '';
    copy.physical[distributionLogicalId] = id;
    copy.physical[`${distributionLogicalId}.DomainName`] = distribution.Distribution?.DomainName ?? '';
    // the parameters the stack itself writes
    for (const [, resource] of Object.entries(copy.template.Resources).filter(([, r]) => r.Type === 'AWS::SSM::Parameter')) {
      await clients.ssm.send(
        new PutParameterCommand({
          Name: resolveString(resource.Properties['Name'], copy.physical),
          Value: resolveString(resource.Properties['Value'], copy.physical),
          Type: 'String',
        }),
      );
    }
    return id;
  }

  beforeAll(async () => {
    moto = await startMoto({ iam: true });
    twinIam = new TwinIam(moto.endpoint);
    operator = await twinIam.operator();
    const common = { region: TWIN_REGION, endpoint: moto.endpoint, credentials: operator };
    clients = {
      s3: new S3Client({ ...common, forcePathStyle: true }),
      dynamodb: new DynamoDBClient(common),
      ssm: new SSMClient(common),
      cloudfront: new CloudFrontClient(common),
    };

    distributionId = await deployResources(first(), { bucket, table: tableName });
    // each function's role, as the template writes it, and a session of it (what Lambda gives the function)
    for (const prefix of ['SetupFunction', 'ApiFunction', 'SweepFunction'])
      sessions[prefix] = await twinIam.session(prefix, policiesOfFunction(prefix));
    // and copies with one action taken away, which must fail
    narrowed.api = await twinIam.session('ApiNarrowed', withoutAction(policiesOfFunction('ApiFunction'), 'ssm:GetParameters'));
    narrowed.sweep = await twinIam.session(
      'SweepNarrowed',
      withoutAction(policiesOfFunction('SweepFunction'), 'dynamodb:DeleteItem'),
    );
    // a second copy in the same account and region, as `cdk deploy -c stackName=ImageUploadStaging` makes it
    const { stack: stagingStack } = buildApp({
      context: { 'aws:cdk:bundling-stacks': [], stackName: 'ImageUploadStaging', urlFetchAllowHosts: '127.0.0.1' },
    });
    staging = { template: Template.fromStack(stagingStack).toJSON() as TemplateJson, physical: {}, sessions: {} };
    await deployResources(staging, { bucket: stagingBucket, table: 'twin-staging-records' });
    for (const prefix of ['SetupFunction', 'ApiFunction'])
      staging.sessions[prefix] = await twinIam.session(`Staging${prefix}`, policiesOfFunction(prefix, staging));
    // the operator role docs/operations.md ("Who may run it") describes, for npm run admin
    const tableArn = `arn:aws:dynamodb:${TWIN_REGION}:${TWIN_ACCOUNT}:table/${tableName}`;
    const parameterArn = (name: string) => `arn:aws:ssm:${TWIN_REGION}:${TWIN_ACCOUNT}:parameter/image-upload/${name}`;
    adminSession = await twinIam.session('ImageUploadOperator', {
      inline: {
        operator: {
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Action: 'cloudformation:DescribeStacks', Resource: '*' },
            {
              Effect: 'Allow',
              Action: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Scan', 'BatchGetItem'].map((a) => `dynamodb:${a}`),
              Resource: tableArn,
            },
            {
              Effect: 'Allow',
              Action: ['s3:GetObject', 's3:GetObjectVersion', 's3:DeleteObject', 's3:DeleteObjectVersion'],
              Resource: `arn:aws:s3:::${bucket}/images/*`,
            },
            {
              Effect: 'Allow',
              Action: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
              Resource: `arn:aws:s3:::${bucket}/moderation/*`,
            },
            { Effect: 'Allow', Action: ['s3:ListBucket', 's3:ListBucketVersions'], Resource: `arn:aws:s3:::${bucket}` },
            { Effect: 'Allow', Action: 'ssm:GetParameters', Resource: ['id-salt', 'distribution-id'].map(parameterArn) },
            // key show and key rotate only
            { Effect: 'Allow', Action: ['ssm:GetParameter', 'ssm:PutParameter'], Resource: parameterArn('api-key') },
            {
              Effect: 'Allow',
              Action: 'cloudfront:CreateInvalidation',
              Resource: `arn:aws:cloudfront::${TWIN_ACCOUNT}:distribution/${distributionId}`,
            },
          ],
        },
      },
      managed: [],
    });
    await moto.enforceIam();

    // a URL source on this machine, which the synthesized URL_FETCH_ALLOW_HOSTS lets the function reach
    const png = await makePng(48, 40);
    images = createServer((_request, response) => response.writeHead(200, { 'Content-Type': 'image/png' }).end(png));
    await new Promise<void>((done) => images.listen(0, '127.0.0.1', done));
    imagesUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/cat%20photo.png`;

    setup = twinOf('SetupFunction');
    // five minutes and a second from now: an expiration of 300 s is due
    sweep = twinOf('SweepFunction', { TWIN_CLOCK_OFFSET_MS: '301000' });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([...twins.map((twin) => twin.stop()), moto?.stop()]);
    twinIam?.destroy();
    images?.close();
    for (const copy of copies) rmSync(copy, { recursive: true, force: true });
  });

  it('refuses what no role allows: a call without a known identity, and one outside its role', async () => {
    const stranger = new SSMClient({
      region: TWIN_REGION,
      endpoint: moto.endpoint,
      credentials: { accessKeyId: 'AKIASTRANGER0000000', secretAccessKey: 'stranger' },
    });
    await expect(stranger.send(new GetParameterCommand({ Name: '/image-upload/api-key' }))).rejects.toThrow();
    stranger.destroy();
    await expectKeyRefusedTo(sessions['SweepFunction'] as Credentials);
  });

  it('setup (custom resource): creates the key, salt, origin secret and flood limits; updates and deletes keep them', async () => {
    const created = await runSetup(setup, setupEvent('Create'));
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
    // the API function's environment holds the digest of the secret CloudFront sends, which the setup step answered:
    // it starts once the step ran, as in AWS; bans and blocks read at every upload, so that one made by the operator's
    // tool is in force at once
    api = twinOf('ApiFunction', { POWERTOOLS_METRICS_DISABLED: 'false', MODERATION_CACHE_SECONDS: '0' });

    const edited = JSON.stringify({ minute: 40, hour: 0, day: 0, week: 0, month: 0 });
    await clients.ssm.send(
      new PutParameterCommand({ Name: '/image-upload/flood-limits', Value: edited, Type: 'String', Overwrite: true }),
    );
    await setup.invoke(setupEvent('Update'));
    await setup.invoke(setupEvent('Delete'));
    expect((await parameter('/image-upload/flood-limits')).value).toBe(edited);
    expect((await parameter('/image-upload/api-key')).value).toBe(apiKey);
  });

  it("setup's last step turns the table's deletion protection on, and its removal leaves it on", async () => {
    const protection = async () =>
      (await clients.dynamodb.send(new DescribeTableCommand({ TableName: tableName }))).Table?.DeletionProtectionEnabled;
    expect(await protection()).toBeFalsy();
    await setup.invoke(setupEvent('Create', 'ProtectRecords'));
    expect(await protection()).toBe(true);
    await setup.invoke(setupEvent('Update', 'ProtectRecords'));
    await setup.invoke(setupEvent('Delete', 'ProtectRecords'));
    expect(await protection()).toBe(true);
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
    // the bundled NSFW classifier ran (NSFW_POLICY's default, flag), onnxruntime and model as the asset holds them
    const records = await clients.dynamodb.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'begins_with(pk, :image)',
        ExpressionAttributeValues: { ':image': { S: 'IMG#' } },
      }),
    );
    expect(records.Items?.map((item) => Number(item['nsfwScore']?.N))).toEqual([expect.any(Number)]);
    expect(records.Items?.[0]?.['nsfw']).toEqual({ BOOL: false });
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

  it('uploads a HEIC photo and a BMP, their decoders loaded by a worker from beside the bundle', async () => {
    const heic = readFileSync(join(ROOT, 'test', 'fixtures', 'gradient.heic'));
    const response = await call(multipartUpload({ key: apiKey, source: { bytes: heic, filename: 'phone.heic' } }));
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ image: { mime: 'image/jpeg', width: 96, height: 64 } });
    const bmp = makeBmp(50, 40, 24);
    const bmpResponse = await call(multipartUpload({ key: apiKey, source: { bytes: bmp, filename: 'scan.bmp' } }));
    expect(bmpResponse.statusCode).toBe(200);
    expect(JSON.parse(bmpResponse.body)).toMatchObject({ image: { mime: 'image/png', width: 50, height: 40 } });
  });

  it('uploads base64 in a urlencoded body (imgBB mode) and a URL source', async () => {
    const base64 = await call(urlencodedUpload({ key: apiKey, image: (await makePng(30, 20)).toString('base64') }));
    expect(base64.statusCode).toBe(200);
    expect(JSON.parse(base64.body)).toMatchObject({ status: 200, data: { id: expect.any(String) as unknown } });
    const fromUrl = await call(urlencodedUpload({ key: apiKey, source: imagesUrl }));
    expect(fromUrl.statusCode).toBe(200);
    expect(JSON.parse(fromUrl.body)).toMatchObject({ image: { original_filename: 'cat photo.png', width: 48 } });
  });

  it('uploads in two steps: an upload URL signed by the role, the PUT to it, the finish from the staged file', async () => {
    const bytes = await makePng(120, 90);
    const ticketResponse = await call(
      new Request(`${PUBLIC_URL}/api/1/upload-url`, {
        method: 'POST',
        headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ size: String(bytes.length), filename: 'staged.png' }).toString(),
      }),
    );
    expect(ticketResponse.statusCode).toBe(200);
    const ticket = (
      JSON.parse(ticketResponse.body) as {
        upload: { url: string; method: string; headers: Record<string, string>; token: string };
      }
    ).upload;
    expect(ticket.url.startsWith(`${moto.endpoint}/${bucket}/staging/`)).toBe(true);
    // the client's PUT, authorized by the signature of the API's role (moto checks both)
    const put = await fetch(ticket.url, { method: ticket.method, headers: ticket.headers, body: bytes });
    expect([put.status, await put.text()]).toEqual([200, '']);
    const finished = await call(
      new Request(`${PUBLIC_URL}/api/1/upload`, {
        method: 'POST',
        headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ upload_token: ticket.token }).toString(),
      }),
    );
    expect(finished.statusCode).toBe(200);
    expect(JSON.parse(finished.body)).toMatchObject({ image: { original_filename: 'staged.png', width: 120 } });
    // the staged file is gone once the image is stored
    expect((await objectKeys()).filter((key) => key.startsWith('staging/'))).toEqual([]);
  });

  it("lets the upload page's origin, and no other, PUT a two-step upload from a browser: the setup step's CORS rule", async () => {
    // the stack's step after the distribution, run by the setup function under its role
    const event = setupEvent('Create', 'UploadPageCors');
    const site = String((event['ResourceProperties'] as Record<string, string>)['CorsOrigin']);
    expect(site).toMatch(/^https:\/\/[^/]+$/);
    await runSetup(setup, event);
    const rules = (await clients.s3.send(new GetBucketCorsCommand({ Bucket: bucket }))).CORSRules;
    expect(rules).toEqual([
      expect.objectContaining({ AllowedOrigins: [site], AllowedMethods: ['PUT'], AllowedHeaders: ['content-type'] }),
    ]);
    // the page names the store in its CSP: one URL signed under the API's role, no call made
    const page = await call(new Request(`${PUBLIC_URL}/upload`));
    expect(String(page.headers?.['Content-Security-Policy'])).toContain(`connect-src 'self' ${new URL(moto.endpoint).origin};`);
    // what a browser asks S3 before the PUT, from the site and from another origin
    const ticket = await call(
      new Request(`${PUBLIC_URL}/api/1/upload-url`, {
        method: 'POST',
        headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ size: '10', filename: 'page.png' }).toString(),
      }),
    );
    const { url } = (JSON.parse(ticket.body) as { upload: { url: string } }).upload;
    const preflight = (origin: string, method = 'PUT'): Promise<Response> =>
      fetch(url, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'content-type' },
      });
    // moto's server echoes any Origin back (flask-cors), so what tells the rule's answer is the status: S3 refuses, 403,
    // a preflight that no rule allows
    const allowed = await preflight(site);
    expect([allowed.status, allowed.headers.get('access-control-allow-methods')]).toEqual([200, 'PUT']);
    expect((await preflight('https://elsewhere.example')).status).toBe(403);
    // removed with the step
    await runSetup(setup, setupEvent('Delete', 'UploadPageCors'));
    await expect(clients.s3.send(new GetBucketCorsCommand({ Bucket: bucket }))).rejects.toMatchObject({
      name: 'NoSuchCORSConfiguration',
    });
    await runSetup(setup, setupEvent('Create', 'UploadPageCors'));
  });

  it('serves the viewer page and the delete confirmation page, which deletes nothing', async () => {
    const page = await call(new Request(uploaded.url_viewer));
    expect(page.statusCode).toBe(200);
    expect(page.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('twin photo');
    const before = await objectKeys();
    const confirm = await call(new Request(uploaded.delete_url));
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('<form');
    expect(await objectKeys()).toEqual(before);
  });

  it('deletes through the delete links at once, and the next sweep invalidates the three files in CloudFront', async () => {
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
    expect((await call(new Request(uploaded.url_viewer))).statusCode).toBe(404);
    // the bucket keeps the deleted files as noncurrent versions, for a restore; the API's role may not remove them
    const kept = await versionsOf(keys[0]?.slice(1) ?? '');
    expect(kept.map((version) => version.IsLatest)).toEqual([false, true]);
    const asApi = new S3Client({
      region: TWIN_REGION,
      endpoint: moto.endpoint,
      forcePathStyle: true,
      credentials: sessions['ApiFunction'] as Credentials,
    });
    await expect(
      asApi.send(new DeleteObjectCommand({ Bucket: bucket, Key: keys[0]?.slice(1), VersionId: kept[0]?.VersionId })),
    ).rejects.toMatchObject({ name: 'AccessDenied' });
    asApi.destroy();
    // the API never invalidates (its role may not): the sweep purges the run's removals together, and forgets them
    expect(await invalidatedPaths()).toEqual([]);
    expect(await sweep.invoke({})).toEqual({ removed: 1, failed: 0, purgedPaths: 3 });
    expect(await invalidatedPaths()).toEqual(expect.arrayContaining(keys));
  });

  it('sweeps an expired image: its files, its record, and its cached copies', async () => {
    const response = await call(
      multipartUpload({ key: apiKey, expiration: '300', source: { bytes: await makePng(70, 50), filename: 'soon.png' } }),
    );
    const key = new URL(uploadOf(response).url).pathname.slice(1);
    expect(await objectKeys()).toContain(key);
    const result = await sweep.invoke<{ removed: number; failed: number; purgedPaths: number }>({});
    expect(result).toEqual({ removed: 1, failed: 0, purgedPaths: 3 });
    expect(await objectKeys()).not.toContain(key);
    expect(await invalidatedPaths()).toContain(`/${key}`);
  });

  it("settles the name claims of stored uploads past their grace (a later run), adding the day's figures", async () => {
    // sixteen minutes on: every upload's name claim is past its fifteen minutes of grace
    const later = twinOf('SweepFunction', { TWIN_CLOCK_OFFSET_MS: String(16 * 60_000) });
    const result = await later.invoke<{ removed: number; failed: number }>({});
    expect(result.failed).toBe(0);
    const day = new Date().toISOString().slice(0, 10);
    const figures = await clients.dynamodb.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: `STATS#${day}` } }, ConsistentRead: true }),
    );
    // the five uploads still held (HEIC, BMP, base64, URL, two-step); the deleted and the expired ones were not stored
    // long
    expect(figures.Item?.['uploads']?.N).toBe('5');
  });

  it('takes an image down with npm run admin --stack, as the documented operator role: files, record, and one invalidation', async () => {
    const image = uploadOf(
      await call(
        multipartUpload({
          key: apiKey,
          source: {
            bytes: await sharp(await makePhoto(41, 180, 120))
              .png()
              .toBuffer(),
            filename: 'abuse.png',
          },
        }),
      ),
    );
    const admin = (...args: string[]) => adminCli(new URL(image.url).origin, args);
    // a viewer reports it from its page; the operator sees the report, and the takedown resolves it and blocks it
    const report = new Request(`${image.url_viewer}/report`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'same-origin' },
      body: 'reason=illegal&note=seen+elsewhere',
    });
    const reported = await call(report);
    expect([reported.statusCode, reported.body.includes('Report sent')]).toEqual([200, true]);
    const reports = await admin('reports');
    expect([reports.status, reports.stderr]).toEqual([0, '']);
    expect(reports.stdout).toContain('\t1 report (illegal 1)\t');
    const run = await admin('takedown', image.url_viewer, '--block');
    expect([run.status, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toMatch(/^took down \w+: removed images\/.+abuse\.png/);
    expect(run.stdout).toContain("resolved 1 viewer's report of it");
    const picture = /blocked its picture \(PDQ ([0-9a-f, ]+)\) and (\d+) hashes of its crops: /.exec(run.stdout);
    const ownHashes = picture?.[1]?.split(', ').length ?? 0;
    const blockedHashes = ownHashes + Number(picture?.[2] ?? 0);
    // the API function reads the list the operator's tool wrote (its role may read it): an edited copy is refused
    const edited = await sharp(await makePhoto(41, 180, 120))
      .resize({ width: 150 })
      .webp()
      .toBuffer();
    const again = await call(multipartUpload({ key: apiKey, source: { bytes: edited, filename: 'again.webp' } }));
    expect([again.statusCode, (JSON.parse(again.body) as { error?: { code?: number } }).error?.code]).toEqual([403, 151]);
    const blocks = await admin('blocks');
    expect([blocks.status, blocks.stderr]).toEqual([0, '']);
    expect(blockedHashes).toBeGreaterThan(1);
    // a batch a part: its own hashes, its crops'
    expect(blocks.stdout).toContain(`blocked pictures: ${blockedHashes}, in 2 batches\n  batch 1\t${ownHashes} picture`);
    expect(blocks.stdout).toContain(`\n  batch 2\t${blockedHashes - ownHashes} pictures\t`);
    const keys = [image.url, image.thumb.url].map((url) => new URL(url).pathname);
    expect(await objectKeys()).not.toContain(keys[0]?.slice(1));
    // a takedown keeps nothing: no version of its files is left to restore
    for (const key of keys) expect(await versionsOf(key.slice(1))).toEqual([]);
    expect(await invalidatedPaths()).toEqual(expect.arrayContaining(keys));
    expect((await call(new Request(image.url_viewer))).statusCode).toBe(404);
    // and the day's figures, with what waits in the staging place
    const stats = await admin('stats', '--days', '1');
    expect([stats.status, stats.stderr]).toEqual([0, '']);
    expect(stats.stdout).toMatch(/\n\d{4}-\d\d-\d\d\t5\t[^\n]*\nstaged now: 0 files, 0 B /);
    // the key, read and written again as the operator role (the same key: the other tests use it)
    const key = await admin('key', 'show');
    expect([key.status, key.stdout]).toEqual([0, `${apiKey}\n`]);
    expect((await admin('key', 'rotate', apiKey)).status).toBe(0);
    // nothing of it is kept to restore
    const restore = await admin('restore', image.url_viewer);
    expect([restore.status, restore.stderr]).toEqual([
      1,
      `no image ${image.url_viewer}: unknown, taken down, or removed for good\n`,
    ]);
  });

  it('restores with npm run admin an image removed by its delete link and one expired: files, record, viewer, links', async () => {
    const deleted = uploadOf(
      await call(multipartUpload({ key: apiKey, source: { bytes: await makePng(61, 40), filename: 'oops.png' } })),
    );
    const expired = uploadOf(
      await call(
        multipartUpload({ key: apiKey, expiration: '300', source: { bytes: await makePng(62, 40), filename: 'soon.png' } }),
      ),
    );
    const post = new Request(deleted.delete_url, { method: 'POST', headers: { Accept: 'application/json' } });
    expect((await call(post)).statusCode).toBe(200);
    // the sweep, five minutes on: the expired one goes too, and both records stay, removed
    expect(await sweep.invoke({})).toMatchObject({ removed: 2, failed: 0 });
    const keysOf = (image: ImageObject) =>
      [image.url, image.thumb.url, image.medium.url].map((url) => new URL(url).pathname.slice(1));
    const stored = await objectKeys();
    for (const key of [...keysOf(deleted), ...keysOf(expired)]) expect(stored).not.toContain(key);
    // the operator's clock is the real one, five minutes behind the sweep's: the expired image keeps its expiry
    const expiry = (image: ImageObject) => `expires ${String(image.expiration_date_gmt)} UTC`;
    for (const [image, until] of [
      [deleted, 'no expiry'],
      [expired, expiry(expired)],
    ] as const) {
      const run = await adminCli(new URL(image.url).origin, ['restore', image.url_viewer]);
      expect([run.status, run.stderr]).toEqual([0, '']);
      const files = keysOf(image).join(', ');
      expect(run.stdout).toBe(`restored ${image.id_encoded} (${until}): ${files} and its record; ${image.url_viewer}\n`);
      expect((await call(new Request(image.url_viewer))).statusCode).toBe(200);
    }
    expect(await objectKeys()).toEqual(expect.arrayContaining([...keysOf(deleted), ...keysOf(expired)]));
    // the delete link works again; the next sweep (five minutes on) finds the expired one due again, and only it
    expect((await call(new Request(deleted.delete_url))).statusCode).toBe(200);
    expect(await sweep.invoke({})).toMatchObject({ removed: 1, failed: 0 });
    expect((await call(new Request(expired.url_viewer))).statusCode).toBe(404);
    expect((await call(new Request(deleted.url_viewer))).statusCode).toBe(200);
    const again = await adminCli(new URL(deleted.url).origin, ['restore', deleted.id_encoded]);
    expect([again.status, again.stderr]).toEqual([1, `${deleted.id_encoded} is not removed: it is online\n`]);
  });

  it("takes down an image removed by its link, blocking its crops read from its original's kept version, and keeps nothing", async () => {
    const photo = await sharp(await makePhoto(43, 180, 120))
      .png()
      .toBuffer();
    const image = uploadOf(await call(multipartUpload({ key: apiKey, source: { bytes: photo, filename: 'removed.png' } })));
    const post = new Request(image.delete_url, { method: 'POST', headers: { Accept: 'application/json' } });
    expect((await call(post)).statusCode).toBe(200);
    const swept = await sweep.invoke<{ removed: number; failed: number }>({});
    expect([swept.removed > 0, swept.failed]).toEqual([true, 0]);
    const key = new URL(image.url).pathname.slice(1);
    expect(await objectKeys()).not.toContain(key);
    expect((await versionsOf(key)).length).toBeGreaterThan(0);
    const run = await adminCli(new URL(image.url).origin, ['takedown', image.url_viewer, '--block']);
    expect([run.status, run.stderr]).toEqual([0, '']);
    // its crops come from the kept version of its original, as the operator role reads it
    expect(run.stdout).toMatch(/blocked its picture \(PDQ [0-9a-f, ]+\) and \d+ hashes of its crops: /);
    expect(await versionsOf(key)).toEqual([]);
  });

  it('serves a second copy (-c stackName) beside it in one account: its own key, files and parameters', async () => {
    const stagingSetup = twinOf('SetupFunction', {}, undefined, staging);
    await runSetup(stagingSetup, setupEvent('Create', 'Setup', staging), staging);
    const stagingKey = (await parameter('/image-upload-staging/api-key')).value ?? '';
    const stagingSecret = (await parameter('/image-upload-staging/origin-secret')).value ?? '';
    expect([stagingKey.length > 0, stagingKey === apiKey, stagingSecret === originSecret]).toEqual([true, false, false]);
    expect((await parameter('/image-upload/api-key')).value).toBe(apiKey);
    const stagingApi = twinOf('ApiFunction', { POWERTOOLS_METRICS_DISABLED: 'false' }, undefined, staging);
    const upload = async (key: string, secret: string, through: LambdaTwin) =>
      call(multipartUpload({ key, source: { bytes: await makePng(33, 22), filename: 'copy.png' } }), secret, through);
    // each copy takes its own key, and its own origin secret, only
    expect((await upload(apiKey, stagingSecret, stagingApi)).statusCode).toBe(401);
    expect((await upload(stagingKey, originSecret, stagingApi)).statusCode).toBe(403);
    expect((await upload(stagingKey, originSecret, api)).statusCode).toBe(401);
    const stored = await upload(stagingKey, stagingSecret, stagingApi);
    expect(stored.statusCode).toBe(200);
    const stagingKeys = ((await clients.s3.send(new ListObjectsV2Command({ Bucket: stagingBucket }))).Contents ?? []).map(
      (object) => object.Key ?? '',
    );
    expect(stagingKeys.filter((key) => key.startsWith('images/'))).toHaveLength(3);
    expect((await objectKeys()).filter((key) => stagingKeys.includes(key))).toEqual([]);
    // its metrics in a namespace of its own, so that its alarms count only its uploads
    expect(stagingApi.output()).toMatch(/"Namespace":"ImageUploadStaging"[^\n]*"UploadStored":1/);
    // the first copy answers as before, and the second's role reads none of the first's parameters
    expect((await call(new Request(`${PUBLIC_URL}/`))).statusCode).toBe(200);
    await expectKeyRefusedTo(staging.sessions['ApiFunction'] as Credentials);
  });

  it('rotates the origin secret with -c originSecretRotation: old and new served until the settle step, and no hand edit locks out', async () => {
    const page = (secret: string, through: LambdaTwin) => call(new Request(`${PUBLIC_URL}/`), secret, through);
    const statuses = async (through: LambdaTwin, secrets: string[]) =>
      Promise.all(secrets.map(async (secret) => (await page(secret, through)).statusCode));
    const edit = (value: string) =>
      clients.ssm.send(
        new PutParameterCommand({ Name: '/image-upload/origin-secret', Value: value, Type: 'SecureString', Overwrite: true }),
      );
    const before = originSecret;
    const reading = twinOf('ApiFunction', { PARAMETERS_CACHE_SECONDS: '0' });
    // an operator's hand edit: the secret CloudFront was deployed with still passes, and a rotation starts from it
    await edit('edited-by-hand-0123456789');
    expect(await statuses(reading, [before, 'edited-by-hand-0123456789', 'guessed'])).toEqual([200, 200, 403]);

    // the deploy with a new rotation: the setup step makes the new secret, CloudFront and the firewall get it
    const rotation = { OriginSecretRotation: '2026-11-27' };
    const rotated = await runSetup(setup, setupEvent('Update', 'Setup', first(), { properties: rotation }));
    const next = rotated.Data?.['OriginSecret'] ?? '';
    expect([next === before, rotated.Data?.['PreviousOriginSecret'] === before]).toEqual([false, true]);
    expect((await parameter('/image-upload/origin-secret')).value).toBe(`${next}\n${before}`);
    // functions of before the deploy, and of after it, take both while edges still send the old one
    const updated = twinOf('ApiFunction', { PARAMETERS_CACHE_SECONDS: '0' });
    expect(await statuses(reading, [before, next])).toEqual([200, 200]);
    expect(await statuses(updated, [before, next])).toEqual([200, 200]);
    // the settle step, after the distribution is deployed: the old secret is refused
    await runSetup(setup, setupEvent('Update', 'OriginSecretSettled', first(), { properties: rotation }));
    expect((await parameter('/image-upload/origin-secret')).value).toBe(next);
    expect(await statuses(updated, [before, next, 'guessed'])).toEqual([403, 200, 403]);
    originSecret = next;
    api = twinOf('ApiFunction', { POWERTOOLS_METRICS_DISABLED: 'false', MODERATION_CACHE_SECONDS: '0' });
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

  it('was refused nothing: no function of the template logged a denied call, a warning or an error', () => {
    expect(twins.length).toBeGreaterThanOrEqual(4);
    for (const twin of twins) {
      expect(twin.output()).not.toMatch(/AccessDenied|not authorized to perform|SignatureDoesNotMatch|InvalidClientTokenId/);
      // a step that failed and was only logged (the sweep's, a best-effort one) shows here
      expect(
        twin
          .output()
          .split('\n')
          .filter((line) => /"level":"(WARN|ERROR|CRITICAL)"/.test(line)),
      ).toEqual([]);
    }
  });

  describe('with one permission taken from a copy of a role (this suite can fail)', () => {
    it('the API without ssm:GetParameters answers 503 in the envelope, and logs the refusal', async () => {
      const crippled = twinOf('ApiFunction', {}, narrowed.api);
      const response = await call(
        multipartUpload({ key: apiKey, source: { bytes: await makePng(10, 10), filename: 'x.png' } }),
        undefined,
        crippled,
      );
      expect(response.statusCode).toBe(503);
      expect(JSON.parse(response.body)).toMatchObject({ error: { code: 900 } });
      expect(crippled.output()).toMatch(/AccessDeniedException[\s\S]*ssm:GetParameters/);
    });

    it('the sweep without dynamodb:DeleteItem fails to remove a due record, and says so', async () => {
      const image = uploadOf(
        await call(
          multipartUpload({ key: apiKey, expiration: '300', source: { bytes: await makePng(33, 21), filename: 'due.png' } }),
        ),
      );
      const crippled = twinOf('SweepFunction', { TWIN_CLOCK_OFFSET_MS: '301000' }, narrowed.sweep);
      const result = await crippled.invoke<{ removed: number; failed: number }>({});
      expect(result).toMatchObject({ removed: 0, failed: 1 });
      expect(crippled.output()).toMatch(/AccessDeniedException[\s\S]*dynamodb:DeleteItem/);
      // the record stays due: the real sweep removes it
      expect(await sweep.invoke({})).toMatchObject({ removed: 1, failed: 0 });
      expect(await objectKeys()).not.toContain(new URL(image.url).pathname.slice(1));
    });
  });
});
