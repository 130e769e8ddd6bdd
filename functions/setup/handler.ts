import { DescribeTableCommand, DynamoDBClient, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { FIRST_VALUES, OperatorParameters } from '../adapters/operator-parameters';
import { originSecretLines, parameterNames } from '../adapters/parameter-names';
import { sha256Hex } from '../core/hashes';

export interface SetupResult {
  PhysicalResourceId: string;
  Data?: OriginSecretData;
  /** Keeps the origin secret out of CloudFormation's describe output. */
  NoEcho?: boolean;
}

/** What the stack gives CloudFront, the firewall and the API function (`docs/deployment.md`, "Rotating the origin secret"). */
export interface OriginSecretData {
  /** The secret CloudFront sends from this deploy on. */
  OriginSecret: string;
  /** The one it sent before a rotation (the firewall lets both through); without a rotation, the same. */
  PreviousOriginSecret: string;
  /** SHA-256 (hex) of `OriginSecret`, for the API function's environment: not a secret. */
  OriginSecretSha256: string;
}

const ssm = new SSMClient({});
const dynamodb = new DynamoDBClient({});

/**
 * The stack's setup step (a custom resource): creates the parameters the operator owns when they are missing, and
 * never overwrites them, whatever a deploy changes (a key rotated or flood limits edited in the console stay): the API
 * key, the id salt and the origin secret as random SecureStrings, the flood limits with the defaults. It never
 * returns the key; it returns the origin secret only to CloudFront's origin header and the firewall, with NoEcho. A
 * new `OriginSecretRotation` rotates the origin secret: the parameter then holds the new one and the old one, both
 * accepted, until `SettleOriginSecret` (a later resource, once the distribution sends the new one) drops the old. On
 * delete it leaves the parameters: the id salt must outlive a redeploy over retained data. With `ProtectTable`, it
 * turns the table's deletion protection on instead.
 */
export async function handler(event: CloudFormationCustomResourceEvent): Promise<SetupResult> {
  const table: unknown = event.ResourceProperties['ProtectTable'];
  if (typeof table === 'string' && table !== '') return protectTable(event, table);
  const prefix = String(event.ResourceProperties['ParameterPrefix'] ?? '');
  const parameters = new OperatorParameters(ssm, parameterNames(prefix));
  if (event.ResourceProperties['SettleOriginSecret'] !== undefined) return settleOriginSecret(event, parameters, prefix);
  const physicalId = `${prefix.replace(/\/+$/, '')}/setup`;
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  await parameters.ensure('apiKey');
  await parameters.ensure('idSalt');
  await parameters.ensure('floodLimits');
  let secrets = originSecretLines(await parameters.ensure('originSecret'));
  const [current] = secrets;
  if (current === undefined) throw new Error(`the origin secret parameter under ${prefix} is empty`);
  if (rotationAsked(event)) {
    const next = FIRST_VALUES.originSecret.make();
    await parameters.put('originSecret', `${next}\n${current}`);
    secrets = [next, current];
  }
  const [sent = current, previous = sent] = secrets;
  return {
    PhysicalResourceId: physicalId,
    Data: { OriginSecret: sent, PreviousOriginSecret: previous, OriginSecretSha256: sha256Hex(sent) },
    NoEcho: true,
  };
}

/** A rotation is asked by a deploy whose `OriginSecretRotation` is set and differs from the last deploy's. */
function rotationAsked(event: CloudFormationCustomResourceEvent): boolean {
  if (event.RequestType !== 'Update') return false;
  const asked = String(event.ResourceProperties['OriginSecretRotation'] ?? '');
  return asked !== '' && asked !== String(event.OldResourceProperties['OriginSecretRotation'] ?? '');
}

/**
 * After a rotation, once the distribution and the firewall have the new secret (this resource depends on them, and
 * CloudFormation waits for the distribution to be deployed): the parameter keeps the new secret only, and the old
 * one stops working within the function's cache time.
 */
async function settleOriginSecret(
  event: CloudFormationCustomResourceEvent,
  parameters: OperatorParameters,
  prefix: string,
): Promise<SetupResult> {
  const physicalId = `${prefix.replace(/\/+$/, '')}/origin-secret-settled`;
  if (event.RequestType === 'Delete') return { PhysicalResourceId: physicalId };
  const secrets = originSecretLines(await parameters.ensure('originSecret'));
  const [sent] = secrets;
  if (sent !== undefined && secrets.length > 1) await parameters.put('originSecret', sent);
  return { PhysicalResourceId: physicalId };
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
