import { randomBytes } from 'node:crypto';
import { DescribeTableCommand, DynamoDBClient, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import {
  GetParameterCommand,
  ParameterAlreadyExists,
  ParameterNotFound,
  PutParameterCommand,
  SSMClient,
} from '@aws-sdk/client-ssm';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { parameterNames } from '../adapters/parameter-names';
import { DEFAULT_FLOOD_LIMITS } from '../core/flood';

export interface SetupResult {
  PhysicalResourceId: string;
  Data?: { OriginSecret: string };
  /** Keeps the origin secret out of CloudFormation's describe output. */
  NoEcho?: boolean;
}

const ssm = new SSMClient({});
const dynamodb = new DynamoDBClient({});

/**
 * The stack's setup step (a custom resource): creates the parameters the operator owns when they are missing, and
 * never overwrites them, whatever a deploy changes (a key rotated or flood limits edited in the console stay): the API
 * key, the id salt and the origin secret as random SecureStrings, the flood limits with the defaults. It never
 * returns the key; it returns the origin secret only to CloudFront's origin header, with NoEcho. On delete it leaves
 * the parameters: the id salt must outlive a redeploy over retained data. With `ProtectTable`, it turns the table's
 * deletion protection on instead.
 */
export async function handler(event: CloudFormationCustomResourceEvent): Promise<SetupResult> {
  const table: unknown = event.ResourceProperties['ProtectTable'];
  if (typeof table === 'string' && table !== '') return protectTable(event, table);
  const prefix = String(event.ResourceProperties['ParameterPrefix'] ?? '');
  const names = parameterNames(prefix);
  const physicalId = `${prefix.replace(/\/+$/, '')}/setup`;
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  await ensureParameter(names.apiKey, 'SecureString', () => randomBytes(24).toString('base64url'));
  await ensureParameter(names.idSalt, 'SecureString', () => randomBytes(32).toString('hex'));
  await ensureParameter(names.floodLimits, 'String', () => JSON.stringify(DEFAULT_FLOOD_LIMITS));
  const originSecret = await ensureParameter(names.originSecret, 'SecureString', () => randomBytes(32).toString('hex'));
  return { PhysicalResourceId: physicalId, Data: { OriginSecret: originSecret }, NoEcho: true };
}

/** The parameter's value, created with `make()` when it is missing; an existing one is never changed. */
async function ensureParameter(name: string, type: 'String' | 'SecureString', make: () => string): Promise<string> {
  const existing = await read(name);
  if (existing !== undefined) return existing;
  try {
    await ssm.send(new PutParameterCommand({ Name: name, Value: make(), Type: type, Overwrite: false }));
  } catch (error) {
    if (!(error instanceof ParameterAlreadyExists)) throw error;
  }
  const created = await read(name);
  if (created === undefined) throw new Error(`parameter ${name} could not be created`);
  return created;
}

async function read(name: string): Promise<string | undefined> {
  try {
    return (await ssm.send(new GetParameterCommand({ Name: name, WithDecryption: true }))).Parameter?.Value;
  } catch (error) {
    if (error instanceof ParameterNotFound) return undefined;
    throw error;
  }
}

/**
 * Turns on the table's deletion protection: the stack's last step, so that a first deploy that fails before it
 * removes its (empty) table, as it removes everything else (docs/deployment.md, "Destroy"). Its removal leaves the
 * protection on: the table outlives the stack.
 */
async function protectTable(event: CloudFormationCustomResourceEvent, table: string): Promise<SetupResult> {
  const physicalId = `${table}/deletion-protection`;
  if (event.RequestType === 'Delete') return { PhysicalResourceId: physicalId };
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: table }));
  if (!Table?.DeletionProtectionEnabled)
    await dynamodb.send(new UpdateTableCommand({ TableName: table, DeletionProtectionEnabled: true }));
  return { PhysicalResourceId: physicalId };
}
