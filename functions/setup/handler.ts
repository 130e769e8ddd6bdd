import { randomBytes } from 'node:crypto';
import {
  GetParameterCommand,
  ParameterAlreadyExists,
  ParameterNotFound,
  PutParameterCommand,
  SSMClient,
} from '@aws-sdk/client-ssm';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';

export interface SetupResult {
  PhysicalResourceId: string;
  Data?: { OriginSecret: string };
  /** Keeps the origin secret out of CloudFormation's describe output. */
  NoEcho?: boolean;
}

const ssm = new SSMClient({});

/**
 * The stack's setup step (a custom resource): creates the API key, the id salt and the origin secret as
 * SecureString parameters when they are missing, with random values, and never overwrites them (a key rotated in the
 * console stays). It never returns the key; it returns the origin secret only to CloudFront's origin header, with
 * NoEcho. On delete it leaves the parameters: the id salt must outlive a redeploy over retained data.
 */
export async function handler(event: CloudFormationCustomResourceEvent): Promise<SetupResult> {
  const prefix = String(event.ResourceProperties['ParameterPrefix'] ?? '').replace(/\/+$/, '');
  const physicalId = `${prefix}/setup`;
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  await ensureParameter(`${prefix}/api-key`, () => randomBytes(24).toString('base64url'));
  await ensureParameter(`${prefix}/id-salt`, () => randomBytes(32).toString('hex'));
  const originSecret = await ensureParameter(`${prefix}/origin-secret`, () => randomBytes(32).toString('hex'));
  return { PhysicalResourceId: physicalId, Data: { OriginSecret: originSecret }, NoEcho: true };
}

/** The parameter's value, created with `make()` when it is missing; an existing one is never changed. */
async function ensureParameter(name: string, make: () => string): Promise<string> {
  const existing = await read(name);
  if (existing !== undefined) return existing;
  try {
    await ssm.send(new PutParameterCommand({ Name: name, Value: make(), Type: 'SecureString', Overwrite: false }));
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
