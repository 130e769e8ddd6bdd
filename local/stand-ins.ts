import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { removeIncompleteObjects } from './s3-repair';
import { startSsmServer } from './ssm-server';

/** The only credentials s3rver accepts; the other stand-ins are given the same. */
export const STAND_IN_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;
export const STAND_IN_REGION = 'us-east-1';

export interface StandIns {
  s3: string;
  dynamodb: string;
  ssm: string;
  close(): Promise<void>;
}

/**
 * Starts s3rver (S3), dynalite (DynamoDB) and our SSM Parameter Store on 127.0.0.1, on free ports. With a data
 * folder everything persists there; without one it lives in memory (a temporary folder for s3rver).
 */
export async function startStandIns(options: { dataDir?: string } = {}): Promise<StandIns> {
  const { dataDir } = options;
  const s3Dir = dataDir ? join(dataDir, 's3') : mkdtempSync(join(tmpdir(), 's3rver-'));
  mkdirSync(s3Dir, { recursive: true });
  // A marker of a run in progress: found at start, the last run was killed, and s3rver may hold objects half written.
  const running = dataDir ? join(dataDir, '.running') : undefined;
  if (running && existsSync(running)) {
    for (const key of removeIncompleteObjects(s3Dir))
      process.stderr.write(`removed an object the last run left half written: ${key}\n`);
  }
  if (running) writeFileSync(running, String(process.pid));
  const s3rver = new S3rver({ address: '127.0.0.1', port: 0, directory: s3Dir, silent: true, resetOnClose: false });
  const s3Address = await s3rver.run();

  if (dataDir) mkdirSync(join(dataDir, 'dynamodb'), { recursive: true });
  const dynamo: Server = dynalite({
    ...(dataDir ? { path: join(dataDir, 'dynamodb') } : {}),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  await new Promise<void>((resolve) => dynamo.listen(0, '127.0.0.1', resolve));
  const dynamoPort = (dynamo.address() as AddressInfo).port;

  const ssm = await startSsmServer({
    accessKeyId: STAND_IN_CREDENTIALS.accessKeyId,
    ...(dataDir ? { file: join(dataDir, 'ssm-parameters.json') } : {}),
  });

  return {
    s3: `http://127.0.0.1:${s3Address.port}`,
    dynamodb: `http://127.0.0.1:${dynamoPort}`,
    ssm: ssm.url,
    async close() {
      await Promise.all([s3rver.close(), new Promise<void>((resolve) => dynamo.close(() => resolve())), ssm.close()]);
      if (!dataDir) rmSync(s3Dir, { recursive: true, force: true });
      if (running) rmSync(running, { force: true });
    },
  };
}

/** The environment the AWS SDK reads to reach the stand-ins. */
export function standInEnvironment(standIns: Pick<StandIns, 's3' | 'dynamodb' | 'ssm'>): Record<string, string> {
  return {
    AWS_REGION: STAND_IN_REGION,
    AWS_ACCESS_KEY_ID: STAND_IN_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: STAND_IN_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_S3: standIns.s3,
    AWS_ENDPOINT_URL_DYNAMODB: standIns.dynamodb,
    AWS_ENDPOINT_URL_SSM: standIns.ssm,
    // s3rver stores aws-chunked framing as data when the SDK sends checksum trailers; checksums only where required.
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}
