import { DescribeTableCommand, DynamoDBClient, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { OperatorParameters } from '../adapters/operator-parameters';
import { parameterNames } from '../adapters/parameter-names';

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
  const parameters = new OperatorParameters(ssm, parameterNames(prefix));
  const physicalId = `${prefix.replace(/\/+$/, '')}/setup`;
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  await parameters.ensure('apiKey');
  await parameters.ensure('idSalt');
  await parameters.ensure('floodLimits');
  const originSecret = await parameters.ensure('originSecret');
  return { PhysicalResourceId: physicalId, Data: { OriginSecret: originSecret }, NoEcho: true };
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
