import { DescribeTableCommand, DynamoDBClient, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { DeleteBucketCorsCommand, NoSuchBucket, S3Client } from '@aws-sdk/client-s3';
import { GetParameterCommand, ParameterNotFound, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { allowBrowserUploads } from '../adapters/browser-uploads';
import { FIRST_VALUES, OperatorParameters } from '../adapters/operator-parameters';
import { originSecretLines, parameterNames, type SettingsParameters } from '../adapters/parameter-names';
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
const s3 = new S3Client({});

/**
 * The stack's setup step (a custom resource): creates the parameters the operator owns when they are missing, and
 * never overwrites them, whatever a deploy changes (a key rotated or flood limits edited in the console stay): the API
 * key, the id salt and the origin secret as random SecureStrings, the flood limits with the defaults. It never
 * returns the key; it returns the origin secret only to CloudFront's origin header and the firewall, with NoEcho. A
 * new `OriginSecretRotation` rotates the origin secret: the parameter then holds the new one and the old one, both
 * accepted, until `SettleOriginSecret` (a later resource, once the distribution sends the new one) drops the old. On
 * delete it leaves the parameters: the id salt must outlive a redeploy over retained data. With `ProtectTable`, it
 * turns the table's deletion protection on instead; with `CorsBucket`, it lets the upload page's origin PUT to it.
 */
export async function handler(event: CloudFormationCustomResourceEvent): Promise<SetupResult> {
  const table: unknown = event.ResourceProperties['ProtectTable'];
  if (typeof table === 'string' && table !== '') return protectTable(event, table);
  const bucket: unknown = event.ResourceProperties['CorsBucket'];
  if (typeof bucket === 'string' && bucket !== '') return openToUploadPage(event, bucket);
  const prefix = String(event.ResourceProperties['ParameterPrefix'] ?? '');
  const names = parameterNames(prefix);
  const parameters = new OperatorParameters(ssm, names);
  if (event.ResourceProperties['SettleOriginSecret'] !== undefined) return settleOriginSecret(event, parameters, names, prefix);
  const physicalId = `${prefix.replace(/\/+$/, '')}/setup`;
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  await parameters.ensure('apiKey');
  await parameters.ensure('idSalt');
  await parameters.ensure('floodLimits');
  const lines = originSecretLines(await parameters.ensure('originSecret'));
  const [first] = lines;
  if (first === undefined) throw new Error(`the origin secret parameter under ${prefix} is empty`);
  // a stack of before this record: what it handed to CloudFront was the parameter's value
  let deployed = (await readDeployed(names)) ?? { secret: first, rotations: [] };
  const asked = String(event.ResourceProperties['OriginSecretRotation'] ?? '');
  let sent = deployed.secret;
  let previous = lines.find((line) => line !== sent) ?? sent;
  const rotating = event.RequestType === 'Update' && asked !== '';
  if (rotating && deployed.pending !== undefined && deployed.pendingFor === asked) {
    // the rotation's deploy, run again before it settled: the same new secret
    sent = deployed.pending;
    previous = deployed.secret;
  } else if (rotating && !deployed.rotations.includes(asked)) {
    // a word not used before: the same word again, or an old one a rollback sends back, rotates nothing
    sent = FIRST_VALUES.originSecret.make();
    previous = deployed.secret;
    // the new one, then what CloudFront sends now: both accepted until the settle step
    await parameters.put('originSecret', `${sent}\n${previous}`);
    const rotations = [...deployed.rotations, asked].slice(-ROTATIONS_KEPT);
    deployed = { secret: deployed.secret, rotations, pending: sent, pendingFor: asked };
  } else if (deployed.pending !== undefined) {
    // a rollback of a rotation's deploy: CloudFront keeps the deployed secret, and the rotation is given up
    deployed = { secret: deployed.secret, rotations: deployed.rotations };
  }
  await writeDeployed(names, deployed);
  return {
    PhysicalResourceId: physicalId,
    Data: { OriginSecret: sent, PreviousOriginSecret: previous, OriginSecretSha256: sha256Hex(sent) },
    NoEcho: true,
  };
}

/** The setup step's record of the origin secret: the one handed to CloudFront, and a rotation not yet settled. */
interface DeployedOriginSecret {
  secret: string;
  /** The rotation words used, the last few: none rotates again. */
  rotations: string[];
  /** The new secret of a rotation, until the settle step makes it the deployed one. */
  pending?: string;
  /** The rotation word that made `pending`. */
  pendingFor?: string;
}

const ROTATIONS_KEPT = 50;

async function readDeployed(names: SettingsParameters): Promise<DeployedOriginSecret | undefined> {
  try {
    const found = await ssm.send(new GetParameterCommand({ Name: names.originSecretDeployed, WithDecryption: true }));
    const value = JSON.parse(found.Parameter?.Value ?? 'null') as DeployedOriginSecret | null;
    return value && typeof value.secret === 'string' && Array.isArray(value.rotations) ? value : undefined;
  } catch (error) {
    if (error instanceof ParameterNotFound) return undefined;
    throw error;
  }
}

async function writeDeployed(names: SettingsParameters, value: DeployedOriginSecret): Promise<void> {
  await ssm.send(
    new PutParameterCommand({
      Name: names.originSecretDeployed,
      Value: JSON.stringify(value),
      Type: 'SecureString',
      Overwrite: true,
    }),
  );
}

/**
 * After a rotation, once the distribution and the firewall have the new secret (this resource depends on them, and
 * CloudFormation waits for the distribution to be deployed): the new secret is the deployed one, and the parameter
 * keeps it alone, so the old one stops working within the function's cache time.
 */
async function settleOriginSecret(
  event: CloudFormationCustomResourceEvent,
  parameters: OperatorParameters,
  names: SettingsParameters,
  prefix: string,
): Promise<SetupResult> {
  const physicalId = `${prefix.replace(/\/+$/, '')}/origin-secret-settled`;
  if (event.RequestType === 'Delete') return { PhysicalResourceId: physicalId };
  const deployed = await readDeployed(names);
  const asked = String(event.ResourceProperties['OriginSecretRotation'] ?? '');
  if (deployed?.pending !== undefined && deployed.pendingFor === asked) {
    await parameters.put('originSecret', deployed.pending);
    await writeDeployed(names, { secret: deployed.pending, rotations: deployed.rotations });
  }
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

/**
 * The bucket's CORS rule for the upload page's two-step uploads (`adapters/browser-uploads.ts`), for the site's
 * origin (`CorsOrigin`, the distribution's or the custom domain's): put again when it changes; removed with the
 * resource (a bucket already gone has none to remove).
 */
async function openToUploadPage(event: CloudFormationCustomResourceEvent, bucket: string): Promise<SetupResult> {
  const physicalId = `${bucket}/upload-page-cors`;
  if (event.RequestType === 'Delete') {
    try {
      await s3.send(new DeleteBucketCorsCommand({ Bucket: bucket }));
    } catch (error) {
      if (!(error instanceof NoSuchBucket)) throw error;
    }
    return { PhysicalResourceId: physicalId };
  }
  await allowBrowserUploads(s3, bucket, String(event.ResourceProperties['CorsOrigin'] ?? ''));
  return { PhysicalResourceId: physicalId };
}
