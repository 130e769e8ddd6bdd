import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { SSMClient } from '@aws-sdk/client-ssm';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { OperatorParameters } from '../functions/adapters/operator-parameters';
import { buildPurger } from '../functions/roots/purger';
import { buildStores, clock } from '../functions/roots/stores';
import { loadConfig } from '../functions/config';
import { Admin } from '../functions/core/admin/admin';
import { AdminError } from '../functions/core/admin/admin-error';
import { DependencyError } from '../functions/core/errors';
import { IdCodecs } from '../functions/core/image/id-codec';
import { NO_METRICS } from '../functions/core/metrics';
import type { Logger } from '../functions/core/ports';
import { blockedPictureHashes } from '../functions/imaging/fingerprint-copies';
import { IN_FORCE, wholeNumber, type KeyParameter } from './admin-verbs';
import { readNamedFile } from './named-file';

/**
 * Where `npm run admin` works (docs/operations.md): the local service's stand-ins, from its data folder, or a deployed
 * stack, from its outputs; and the operator's tools built on that target's stores.
 */

/** What the commands need to know of where the service runs. */
export interface Target {
  env: Record<string, string>;
  publicUrl: string;
  idPadding: number;
  /** The local service's stand-ins (`npm start`), rather than a stack's stores. */
  local?: boolean;
  /** When a block or a ban made now is in force where the target's uploads are checked. */
  inForce: string;
}

/** What the endpoints file must name: the stores and where they answer. */
const ENDPOINTS = ['bucket', 'table', 'parameterPrefix', 's3', 'dynamodb', 'ssm'];

/** The endpoints file `npm start` writes at each start; one that is not its JSON, or lacks a store, is named. */
function readEndpoints(file: string): Record<string, string | number | undefined> {
  let endpoints: unknown;
  try {
    endpoints = JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    const why = cause instanceof SyntaxError ? 'is not JSON' : `cannot be read (${String(cause)})`;
    throw new AdminError(`${file} ${why}: npm start writes it anew, start it once`, { cause });
  }
  const read = (typeof endpoints === 'object' && endpoints !== null ? endpoints : {}) as Record<string, unknown>;
  const missing = ENDPOINTS.filter((name) => typeof read[name] !== 'string' || read[name] === '');
  if (missing.length > 0)
    throw new AdminError(`${file} does not name ${missing.join(', ')}: npm start writes it anew, start it once`);
  return read as Record<string, string | number | undefined>;
}

/** The local service: its endpoints, names and credentials from `DATA_DIR/endpoints.json`. */
export function localTarget(dataDir: string): Target {
  const file = join(resolve(dataDir), 'endpoints.json');
  if (!existsSync(file)) throw new AdminError(`no ${file}: start the service once (npm start), or name a stack`);
  const endpoints = readEndpoints(file);
  const text = (name: string): string => String(endpoints[name] ?? '');
  const env: Record<string, string> = {
    BUCKET_NAME: text('bucket'),
    TABLE_NAME: text('table'),
    PARAMETER_PREFIX: text('parameterPrefix'),
    AWS_ENDPOINT_URL_S3: text('s3'),
    AWS_ENDPOINT_URL_DYNAMODB: text('dynamodb'),
    AWS_ENDPOINT_URL_SSM: text('ssm'),
    AWS_REGION: text('region') || 'us-east-1',
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
  };
  // the stand-ins' own credentials; external stores use the operator's, from the usual variables
  if (endpoints['accessKeyId']) env['AWS_ACCESS_KEY_ID'] = text('accessKeyId');
  if (endpoints['secretAccessKey']) env['AWS_SECRET_ACCESS_KEY'] = text('secretAccessKey');
  return {
    env,
    publicUrl: text('publicUrl') || 'http://localhost:3000',
    idPadding: Number(endpoints['idPadding'] ?? 999),
    // external stores (AWS_ENDPOINT_URL_* at npm start) are named by their endpoints, not "the local service"
    local: Boolean(endpoints['accessKeyId']),
    inForce: localInForce(endpoints['moderationCacheSeconds']),
  };
}

/** A deployed stack, from its outputs (BucketName, TableName, BaseUrl, ApiKeyParameter, IdPadding). */
export function stackTarget(outputs: Record<string, string>, idPadding: string | undefined): Target {
  for (const name of ['BucketName', 'TableName', 'BaseUrl', 'ApiKeyParameter']) {
    if (!outputs[name]) throw new AdminError(`the stack has no output ${name}: is it this service's stack?`);
  }
  return {
    env: {
      BUCKET_NAME: outputs['BucketName'] ?? '',
      TABLE_NAME: outputs['TableName'] ?? '',
      PARAMETER_PREFIX: (outputs['ApiKeyParameter'] ?? '').replace(/\/api-key$/, ''),
    },
    publicUrl: (outputs['BaseUrl'] ?? '').replace(/\/+$/, ''),
    // stacks deployed before the output existed: the default, or --id-padding
    idPadding: wholeNumber('--id-padding', idPadding ?? outputs['IdPadding'] ?? '999', 0, 1_000_000),
    inForce: IN_FORCE,
  };
}

export async function outputsOfStack(name: string): Promise<Record<string, string>> {
  const cloudformation = new CloudFormationClient({});
  try {
    const { Stacks } = await cloudformation.send(new DescribeStacksCommand({ StackName: name }));
    return Object.fromEntries((Stacks?.[0]?.Outputs ?? []).map((output) => [output.OutputKey ?? '', output.OutputValue ?? '']));
  } catch (cause) {
    throw new AdminError(`--stack ${name}: ${await stackProblem(cloudformation, cause)}`, { cause });
  } finally {
    cloudformation.destroy();
  }
}

/** Why a stack's outputs could not be read, in the operator's terms: what to set or check. */
async function stackProblem(client: CloudFormationClient, cause: unknown): Promise<string> {
  const message = cause instanceof Error ? cause.message : String(cause);
  const name = cause instanceof Error ? cause.name : '';
  if (/region is missing/i.test(message)) return 'no AWS region is set: set AWS_REGION (or AWS_PROFILE, a profile with one)';
  if (name === 'CredentialsProviderError' || /could not load credentials/i.test(message))
    return 'no AWS credentials were found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY';
  const region = await client.config.region().catch(() => 'its region');
  if (/does not exist/i.test(message)) return `no such stack in ${region}: check its name and AWS_REGION`;
  return `its outputs could not be read in ${region} (${name}: ${message})`;
}

export function outputsOfFile(file: string): Record<string, string> {
  const text = readNamedFile(file, '--outputs');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AdminError(`--outputs ${file}: not JSON, not the file cdk deploy --outputs-file writes`);
  }
  const stacks: unknown[] = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? Object.values(parsed) : [];
  if (stacks.length !== 1) throw new AdminError(`${file} holds ${stacks.length} stacks' outputs: name one with --stack`);
  const [outputs] = stacks;
  if (typeof outputs !== 'object' || outputs === null)
    throw new AdminError(`--outputs ${file}: its stack holds no outputs, not the file cdk deploy --outputs-file writes`);
  return outputs as Record<string, string>;
}

const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

export function adminFor(target: Target): { admin: Admin; key: KeyParameter; close(): void } {
  Object.assign(process.env, target.env);
  const env = { ...process.env, ...target.env, PUBLIC_URL: target.publicUrl };
  const config = loadConfig(env);
  // of the settings, only what the commands use: the ids' salt and the distribution (docs/operations.md, "Who may run it")
  const stores = buildStores(config, env, NO_METRICS, {
    idSalt: config.parameters.idSalt,
    distributionId: config.parameters.distributionId,
  });
  const admin = new Admin({
    images: stores.images,
    objects: stores.objects,
    duplicates: stores.duplicates,
    purger: buildPurger(stores.settings, NO_METRICS),
    reports: stores.reports,
    logger: quiet,
    codecs: new IdCodecs(() => stores.settings.idSalt(), target.idPadding),
    moderation: stores.moderation,
    pictureBlocks: stores.pictureBlocks,
    pictureCrops: blockedPictureHashes,
    stats: stores.stats,
    staged: stores.staged,
    clock,
    publicUrl: target.publicUrl,
  });
  // the API key's parameter, read and written only by `key` (its own rights: docs/operations.md, "Who may run it")
  const ssm = new SSMClient({});
  const parameters = new OperatorParameters(ssm, config.parameters);
  const key: KeyParameter = { read: () => parameters.read('apiKey'), write: (value) => parameters.put('apiKey', value) };
  return {
    admin,
    key,
    close: () => {
      stores.db.destroy();
      ssm.destroy();
    },
  };
}

/**
 * A store that could not be reached, said so: the local service not running (its stand-ins answer only while
 * `npm start` runs), or which store failed and why; undefined for any other error.
 */
export function unreachable(error: unknown, target: Target): AdminError | undefined {
  // the error and its causes: an adapter's DependencyError, or the SDK's own error (the key's parameter is read and
  // written by the SDK's client directly), down to the socket's
  const chain: unknown[] = [];
  for (let cause: unknown = error; cause instanceof Error && chain.length < 10; cause = cause.cause) chain.push(cause);
  const refused = chain.some((cause) => (cause as NodeJS.ErrnoException).code === 'ECONNREFUSED');
  if (target.local && refused) return new AdminError('the local service is not running: start it with `npm start`');
  if (!(error instanceof DependencyError)) return undefined;
  const causes = chain.slice(1);
  const last = causes.at(-1);
  return new AdminError(`${error.what} failed: ${last instanceof Error ? last.message || last.name : 'no answer'}`);
}

/** When `npm start` sees a block or a ban: at its next upload, unless it was started with a moderation cache. */
function localInForce(seconds: string | number | undefined): string {
  if (seconds === 0) return 'in force at the next upload: npm start keeps no moderation cache';
  if (typeof seconds === 'number') return `in force within ${seconds} s, npm start's MODERATION_CACHE_SECONDS`;
  return IN_FORCE;
}
