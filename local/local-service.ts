import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createHandler } from '../functions/api/handler';
import { createSweepHandler } from '../functions/api/sweep';
import { loadConfig } from '../functions/config';
import { startDevServer } from './dev-server';
import { localClients, provision } from './provision';
import { STAND_IN_CREDENTIALS, STAND_IN_REGION, standInEnvironment, startStandIns } from './stand-ins';

export interface LocalServiceOptions {
  /** Environment of the service: PORT, DATA_DIR, API_KEY, PUBLIC_URL, FLOOD_LIMITS and the function's settings. */
  env: Readonly<Record<string, string | undefined>>;
}

export interface LocalService {
  url: string;
  publicUrl: string;
  apiKey: string;
  dataDir: string;
  close(): Promise<void>;
}

const DEFAULT_BUCKET = 'image-upload-local';
const DEFAULT_TABLE = 'image-upload-local';

/**
 * Starts the stand-ins on the data folder, creates what is missing in them, writes `endpoints.json`, and serves the
 * handler over HTTP. The SDK clients of the handler find the stand-ins through the endpoint variables, which are set
 * on this process.
 */
/** An address this machine reaches the server at, for the host it listens on. */
function localAddress(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

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
  const parameterPrefix = (env['PARAMETER_PREFIX'] || '/image-upload').replace(/\/+$/, '');

  // The function's settings, checked now rather than at the first request (the same check Lambda's cold start makes).
  loadConfig({ ...env, BUCKET_NAME: 'check', TABLE_NAME: 'check', PUBLIC_URL: env['PUBLIC_URL'] || 'http://localhost' });
  const sweepSeconds = Number(env['SWEEP_INTERVAL_SECONDS'] || 60);
  if (!(sweepSeconds >= 1))
    throw new Error(`SWEEP_INTERVAL_SECONDS must be a number of seconds, got ${env['SWEEP_INTERVAL_SECONDS']}`);

  const standIns = await startStandIns({ dataDir });
  const endpoints = { s3: standIns.s3, dynamodb: standIns.dynamodb, ssm: standIns.ssm };
  const { apiKey } = await provision({
    endpoints,
    bucket,
    table,
    parameterPrefix,
    apiKey: env['API_KEY'],
    floodLimits: env['FLOOD_LIMITS'],
  });
  Object.assign(process.env, standInEnvironment(endpoints));

  const clients = localClients(endpoints);
  let publicUrl = env['PUBLIC_URL'] || '';
  // With PORT=0 the port is known only once listening; the handler is built on the first request, after that.
  const handlerEnv: Record<string, string | undefined> = {
    ...env,
    BUCKET_NAME: bucket,
    TABLE_NAME: table,
    PARAMETER_PREFIX: parameterPrefix,
  };
  const handler = createHandler(handlerEnv);
  // only this machine by default, as the stand-ins; HOST=0.0.0.0 (or an address) to serve the network
  const host = env['HOST'] || '127.0.0.1';
  const server = await startDevServer({ handler, s3: clients.s3, bucket, port, host });
  publicUrl ||= `http://localhost:${server.port}`;
  handlerEnv['PUBLIC_URL'] = publicUrl.replace(/\/+$/, '');

  // What EventBridge does in AWS: the expiration sweep, every SWEEP_INTERVAL_SECONDS.
  const sweep = createSweepHandler(handlerEnv);
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweepTimer = setInterval(() => {
    sweeping = sweep().catch((error: unknown) => process.stderr.write(`sweep failed: ${String(error)}\n`));
  }, sweepSeconds * 1000);
  sweepTimer.unref();

  writeFileSync(
    join(dataDir, 'endpoints.json'),
    `${JSON.stringify(
      {
        ...endpoints,
        bucket,
        table,
        parameterPrefix,
        region: STAND_IN_REGION,
        accessKeyId: STAND_IN_CREDENTIALS.accessKeyId,
        secretAccessKey: STAND_IN_CREDENTIALS.secretAccessKey,
      },
      null,
      2,
    )}\n`,
  );

  return {
    url: `http://${localAddress(host)}:${server.port}`,
    publicUrl: handlerEnv['PUBLIC_URL'],
    apiKey,
    dataDir,
    async close() {
      clearInterval(sweepTimer);
      await sweeping;
      await server.close();
      clients.s3.destroy();
      clients.dynamodb.destroy();
      clients.ssm.destroy();
      await standIns.close();
    },
  };
}
