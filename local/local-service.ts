import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { allowBrowserUploads } from '../functions/adapters/browser-uploads';
import { createHandler } from '../functions/roots/handler';
import { createSweepHandler } from '../functions/roots/sweep';
import { ConfigError, loadConfig } from '../functions/config';
import { SETTINGS } from '../functions/settings-table';
import { METRIC_SERVICE } from '../functions/core/metrics';
import { DEFAULT_INVOCATIONS, startDevServer } from './dev-server';
import { externalClients, localClients, provision, type Endpoints, type LocalClients, type Provisioned } from './provision';
import { STAND_IN_REGION, standInEnvironment, startStandIns } from './stand-ins';
import { TerminalLogger } from './terminal-logger';

export interface LocalServiceOptions {
  /** Environment of the service: PORT, DATA_DIR, API_KEY, PUBLIC_URL, FLOOD_LIMITS and the function's settings. */
  env: Readonly<Record<string, string | undefined>>;
}

export interface LocalService {
  url: string;
  publicUrl: string;
  apiKey: string;
  /** Where the key and the flood limits came from, and the limits in force (the start's banner says). */
  settings: Omit<Provisioned, 'apiKey'>;
  dataDir: string;
  /** The endpoints of stores the AWS variables named (`npm start` on external stores); undefined on the stand-ins. */
  externalStores: Endpoints | undefined;
  close(): Promise<void>;
}

const DEFAULT_BUCKET = 'image-upload-local';
const DEFAULT_TABLE = 'image-upload-local';

/** An address this machine reaches the server at, for the host it listens on. */
function localAddress(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * The stores the standard endpoint variables name: `AWS_ENDPOINT_URL_S3`, `..._DYNAMODB` and `..._SSM`, each falling
 * back on `AWS_ENDPOINT_URL`. Undefined when none is set (the stand-ins are used); an error when only some are, rather
 * than a mix of real and stand-in stores.
 */
export function externalEndpoints(env: Readonly<Record<string, string | undefined>>): Endpoints | undefined {
  const common = env['AWS_ENDPOINT_URL'] || undefined;
  const named = {
    s3: env['AWS_ENDPOINT_URL_S3'] || common,
    dynamodb: env['AWS_ENDPOINT_URL_DYNAMODB'] || common,
    ssm: env['AWS_ENDPOINT_URL_SSM'] || common,
  };
  const missing = Object.entries(named).filter(([, url]) => url === undefined);
  if (missing.length === 3) return undefined;
  // a setting's mistake: said in a line (`npm start` prints a ConfigError's message alone)
  if (missing.length > 0)
    throw new ConfigError([
      `external stores need an endpoint for S3, DynamoDB and SSM; set AWS_ENDPOINT_URL or ${missing.map(([name]) => `AWS_ENDPOINT_URL_${name.toUpperCase()}`).join(' and ')}`,
    ]);
  for (const url of Object.values(named)) {
    if (!/^https?:\/\/[^/]/.test(url ?? '')) throw new ConfigError([`an AWS endpoint must be an http(s) URL, got ${url}`]);
  }
  return named as Endpoints;
}

/**
 * Starts the stand-ins on the data folder (or, when the AWS endpoint variables name stores of the operator's own,
 * uses those), creates what is missing in them, writes `endpoints.json`, and serves the handler over HTTP. The SDK
 * clients of the handler find the stores through the endpoint variables, which are set on this process.
 */
export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  const { env } = options;
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  // Metrics are CloudWatch's log lines; locally nobody reads them (POWERTOOLS_METRICS_DISABLED=false shows them).
  process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
  const port = Number(env['PORT'] || 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got ${env['PORT']}`);
  const dataDir = resolve(env['DATA_DIR'] || '.data');
  mkdirSync(dataDir, { recursive: true });
  const bucket = env['BUCKET_NAME'] || DEFAULT_BUCKET;
  const table = env['TABLE_NAME'] || DEFAULT_TABLE;
  const parameterPrefix = (env['PARAMETER_PREFIX'] || SETTINGS.PARAMETER_PREFIX.default).replace(/\/+$/, '');

  // The function's settings, checked now rather than at the first request (the same check Lambda's cold start makes).
  loadConfig({ ...env, BUCKET_NAME: 'check', TABLE_NAME: 'check', PUBLIC_URL: env['PUBLIC_URL'] || 'http://localhost' });
  const invocations = Number(env['LOCAL_INVOCATIONS'] || DEFAULT_INVOCATIONS);
  if (!Number.isInteger(invocations) || invocations < 1)
    throw new Error(`LOCAL_INVOCATIONS must be a whole number of requests, 1 or more, got ${env['LOCAL_INVOCATIONS']}`);
  const sweepSeconds = Number(env['SWEEP_INTERVAL_SECONDS'] || 60);
  if (!(sweepSeconds >= 1))
    throw new Error(`SWEEP_INTERVAL_SECONDS must be a number of seconds, got ${env['SWEEP_INTERVAL_SECONDS']}`);

  const external = externalEndpoints(env);
  const stores = external ? useExternalStores(env, external) : await useStandIns(dataDir);
  const { apiKey, ...settings } = await provision({
    endpoints: stores.endpoints,
    ...(external ? { clients: stores.clients } : {}),
    bucket,
    table,
    parameterPrefix,
    apiKey: env['API_KEY'],
    floodLimits: env['FLOOD_LIMITS'],
  });
  const clients = stores.clients;
  let publicUrl = env['PUBLIC_URL'] || '';
  // With PORT=0 the port is known only once listening; the handler is built on the first request, after that.
  const handlerEnv: Record<string, string | undefined> = {
    // the stand-in S3 keeps no versions: a removed image's record would be kept for a restore that cannot be
    ...(external ? {} : { KEEP_DELETED_DAYS: '0' }),
    // one instance, whose stores answer in the same process: a block or a ban from `npm run admin` is in force at its
    // next upload, rather than within Lambda's 30 s (`docs/local.md`)
    MODERATION_CACHE_SECONDS: '0',
    ...env,
    BUCKET_NAME: bucket,
    TABLE_NAME: table,
    PARAMETER_PREFIX: parameterPrefix,
  };
  // short lines for a person at a terminal; JSON, as in Lambda, when asked (LOG_FORMAT=json) or piped
  const terminal = process.stdout.isTTY && env['LOG_FORMAT'] !== 'json';
  const handler = createHandler(handlerEnv, terminal ? { logger: new TerminalLogger({ serviceName: METRIC_SERVICE.api }) } : {});
  // only this machine by default, as the stand-ins; HOST=0.0.0.0 (or an address) to serve the network
  const host = env['HOST'] || '127.0.0.1';
  const server = await startDevServer({ handler, s3: clients.s3, bucket, port, host, invocations });
  publicUrl ||= `http://localhost:${server.port}`;
  handlerEnv['PUBLIC_URL'] = publicUrl.replace(/\/+$/, '');
  // the upload page PUTs two-step uploads to the stand-in from the browser, as in AWS (the stack's setup step); a
  // bucket of the operator's own keeps its CORS rules (it may be a deployment's, whose page needs its own)
  if (!external) await allowBrowserUploads(clients.s3, bucket, publicUrl);

  // What EventBridge does in AWS: the expiration sweep, every SWEEP_INTERVAL_SECONDS.
  const sweepLogger = terminal ? new TerminalLogger({ serviceName: METRIC_SERVICE.sweep }) : undefined;
  const sweep = createSweepHandler(handlerEnv, undefined, undefined, sweepLogger);
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweepTimer = setInterval(() => {
    sweeping = sweep().catch((error: unknown) => process.stderr.write(`sweep failed: ${String(error)}\n`));
  }, sweepSeconds * 1000);
  sweepTimer.unref();

  const config = loadConfig({ ...handlerEnv, BUCKET_NAME: bucket, TABLE_NAME: table });
  writeFileSync(
    join(dataDir, 'endpoints.json'),
    `${JSON.stringify(
      {
        ...stores.endpoints,
        bucket,
        table,
        parameterPrefix,
        // for `npm run admin`: the links it prints, and the id codec's padding
        publicUrl: handlerEnv['PUBLIC_URL'],
        idPadding: config.idPadding,
        // for `npm run admin`: when a block or a ban it makes is in force here
        moderationCacheSeconds: config.moderationCacheSeconds,
        ...stores.credentials,
      },
      null,
      2,
    )}\n`,
    // the stand-ins' credentials: its owner's only, as the data folder
    { mode: 0o600 },
  );

  return {
    url: `http://${localAddress(host)}:${server.port}`,
    publicUrl: handlerEnv['PUBLIC_URL'],
    apiKey,
    settings,
    dataDir,
    externalStores: external,
    async close() {
      clearInterval(sweepTimer);
      await sweeping;
      await server.close();
      clients.s3.destroy();
      clients.dynamodb.destroy();
      clients.ssm.destroy();
      await stores.close();
    },
  };
}

interface Stores {
  endpoints: Endpoints;
  clients: LocalClients;
  /** What `endpoints.json` tells local tools about credentials: the stand-ins' own, nothing of an operator's. */
  credentials: Record<string, string>;
  close(): Promise<void>;
}

/** The embedded stand-ins, kept in the data folder; the handler reaches them through the endpoint variables. */
async function useStandIns(dataDir: string): Promise<Stores> {
  const standIns = await startStandIns({ dataDir });
  const endpoints = { s3: standIns.s3, dynamodb: standIns.dynamodb, ssm: standIns.ssm };
  Object.assign(process.env, standInEnvironment(standIns));
  return {
    endpoints,
    clients: localClients(endpoints),
    // the data folder's own: endpoints.json is its owner's only, like the folder
    credentials: { region: STAND_IN_REGION, ...standIns.credentials },
    close: () => standIns.close(),
  };
}

/**
 * Stores the AWS variables name (moto_server, LocalStack, an account's own): region and credentials come from the
 * standard variables and files, as for any AWS tool; the region defaults to us-east-1.
 */
function useExternalStores(env: Readonly<Record<string, string | undefined>>, endpoints: Endpoints): Stores {
  const region = env['AWS_REGION'] || env['AWS_DEFAULT_REGION'] || 'us-east-1';
  process.env['AWS_REGION'] = region;
  return { endpoints, clients: externalClients(), credentials: { region }, close: () => Promise.resolve() };
}
