import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import {
  BucketAlreadyExists,
  BucketAlreadyOwnedByYou,
  CreateBucketCommand,
  ListBucketsCommand,
  type BucketLocationConstraint,
  S3Client,
} from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { FIRST_VALUES, OperatorParameters } from '../functions/adapters/operator-parameters';
import { parameterNames } from '../functions/adapters/parameter-names';
import { TABLE_SCHEMA } from '../functions/adapters/table-schema';
import { ConfigError } from '../functions/config';
import { DEFAULT_FLOOD_LIMITS, parseFloodLimits, type FloodLimits } from '../functions/core/flood';
import { FLOOD_WINDOWS } from '../functions/core/ports';
import { STAND_IN_REGION } from './stand-ins';

export interface Endpoints {
  s3: string;
  dynamodb: string;
  ssm: string;
}

export interface ProvisionOptions {
  endpoints: Endpoints;
  /** Stores of the operator's choice (`npm start` on external stores): clients built from the standard variables. */
  clients?: LocalClients;
  bucket: string;
  table: string;
  parameterPrefix: string;
  /** Written over the stored key when given (`new`: a new random one); a random key is made when there is none. */
  apiKey?: string | undefined;
  /** Flood limits JSON written over the stored one when given (`default`: the defaults); defaults when there is none. */
  floodLimits?: string | undefined;
}

/** Where a setting's value came from: this start's environment, the stores (an earlier start, an edit), or neither. */
export type SettingSource = 'environment' | 'stored' | 'default';

export interface Provisioned {
  apiKey: string;
  apiKeySource: SettingSource;
  floodLimits: FloodLimits;
  floodLimitsSource: SettingSource;
}

/** `API_KEY=new`: a new random key; `FLOOD_LIMITS=default`: the contract's limits (`docs/local.md`). */
export const RESET_WORDS = { apiKey: 'new', floodLimits: 'default' } as const;

/** The flood limits of `FLOOD_LIMITS`, checked as typed: every mistake named, as a bad setting is. */
function checkedFloodLimits(text: string): string {
  if (text === RESET_WORDS.floodLimits) return FIRST_VALUES.floodLimits.make();
  const { problems } = parseFloodLimits(text);
  if (problems.length > 0)
    throw new ConfigError(problems.map((problem) => `FLOOD_LIMITS: ${problem.replace('the flood-limits parameter', 'it')}`));
  return text;
}

export interface LocalClients {
  s3: S3Client;
  dynamodb: DynamoDBClient;
  ssm: SSMClient;
}

/**
 * SDK clients for the stand-ins, for local tooling (never used by the handler, which reads the environment); signed
 * with the stand-ins' credentials, which `standInEnvironment` put in the standard variables.
 */
export function localClients(endpoints: Endpoints): LocalClients {
  const common = { region: STAND_IN_REGION };
  return {
    s3: new S3Client({
      ...common,
      endpoint: endpoints.s3,
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    }),
    dynamodb: new DynamoDBClient({ ...common, endpoint: endpoints.dynamodb }),
    ssm: new SSMClient({ ...common, endpoint: endpoints.ssm }),
  };
}

/** SDK clients for stores the standard AWS variables point at (endpoints, region, credentials). */
export function externalClients(): LocalClients {
  // an S3 endpoint of one's own (moto_server, LocalStack, MinIO) takes path-style addressing
  const pathStyle = Boolean(process.env['AWS_ENDPOINT_URL_S3'] || process.env['AWS_ENDPOINT_URL']);
  return { s3: new S3Client({ forcePathStyle: pathStyle }), dynamodb: new DynamoDBClient({}), ssm: new SSMClient({}) };
}

/** Creates the bucket, the table and the parameters that are missing; idempotent. */
export async function provision(options: ProvisionOptions): Promise<Provisioned> {
  const { apiKey: keyGiven, floodLimits: limitsGiven } = options;
  // checked before anything is made
  const limitsText = limitsGiven ? checkedFloodLimits(limitsGiven) : undefined;
  const external = options.clients !== undefined;
  const clients = options.clients ?? localClients(options.endpoints);
  try {
    await ensureBucket(clients.s3, options.bucket);
    await ensureTable(clients.dynamodb, options.table, external);
    const parameters = new OperatorParameters(clients.ssm, parameterNames(options.parameterPrefix));
    if (keyGiven) await parameters.put('apiKey', keyGiven === RESET_WORDS.apiKey ? FIRST_VALUES.apiKey.make() : keyGiven);
    if (limitsText !== undefined) await parameters.put('floodLimits', limitsText);
    await parameters.ensure('idSalt');
    const keyStored = await parameters.read('apiKey');
    const floodLimits = parseFloodLimits(await parameters.ensure('floodLimits')).limits;
    const isDefault = FLOOD_WINDOWS.every((window) => floodLimits[window] === DEFAULT_FLOOD_LIMITS[window]);
    return {
      apiKey: keyStored ?? (await parameters.ensure('apiKey')),
      // a key made now (none stored, or API_KEY=new) is as new as a default
      apiKeySource: keyGiven && keyGiven !== RESET_WORDS.apiKey ? 'environment' : keyStored && !keyGiven ? 'stored' : 'default',
      floodLimits,
      floodLimitsSource:
        limitsGiven && limitsGiven !== RESET_WORDS.floodLimits ? 'environment' : isDefault ? 'default' : 'stored',
    };
  } finally {
    if (!external) {
      clients.s3.destroy();
      clients.dynamodb.destroy();
      clients.ssm.destroy();
    }
  }
}

/** Creates the bucket when the listing of buckets lacks it; any other failure is a failure, never "missing". */
async function ensureBucket(s3: S3Client, bucket: string): Promise<void> {
  const { Buckets } = await s3.send(new ListBucketsCommand({}));
  if (Buckets?.some((existing) => existing.Name === bucket)) return;
  const region = await s3.config.region();
  try {
    // outside us-east-1 S3 wants the bucket's region named
    await s3.send(
      new CreateBucketCommand({
        Bucket: bucket,
        ...(region === 'us-east-1'
          ? {}
          : { CreateBucketConfiguration: { LocationConstraint: region as BucketLocationConstraint } }),
      }),
    );
  } catch (error) {
    // made meanwhile by another start on the same stores
    if (!(error instanceof BucketAlreadyOwnedByYou || error instanceof BucketAlreadyExists)) throw error;
  }
}

/**
 * Creates the table when it is missing. On external stores it also waits until the table is active (AWS takes
 * seconds) and turns its TTL on, the backstop the stack sets in AWS (the stand-in has none).
 */
async function ensureTable(dynamodb: DynamoDBClient, table: string, external: boolean): Promise<void> {
  try {
    await dynamodb.send(new DescribeTableCommand({ TableName: table }));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  await dynamodb.send(
    new CreateTableCommand({
      TableName: table,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: TABLE_SCHEMA.partitionKey, AttributeType: 'S' },
        { AttributeName: TABLE_SCHEMA.sweepIndex.partitionKey, AttributeType: 'S' },
        { AttributeName: TABLE_SCHEMA.sweepIndex.sortKey, AttributeType: 'N' },
      ],
      KeySchema: [{ AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' }],
      GlobalSecondaryIndexes: [
        {
          IndexName: TABLE_SCHEMA.sweepIndex.name,
          KeySchema: [
            { AttributeName: TABLE_SCHEMA.sweepIndex.partitionKey, KeyType: 'HASH' },
            { AttributeName: TABLE_SCHEMA.sweepIndex.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    }),
  );
  if (!external) return;
  await waitUntilTableExists({ client: dynamodb, maxWaitTime: 120 }, { TableName: table });
  await dynamodb.send(
    new UpdateTimeToLiveCommand({
      TableName: table,
      TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.ttlAttribute, Enabled: true },
    }),
  );
}
