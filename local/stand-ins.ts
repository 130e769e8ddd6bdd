import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import s3rverAccounts from 's3rver/lib/models/account';
import { removeIncompleteObjects } from './s3-repair';
import { startSignatureGate, type Credentials } from './signature-gate';
import { startSsmServer } from './ssm-server';

export const STAND_IN_REGION = 'us-east-1';

export interface StandIns {
  s3: string;
  dynamodb: string;
  ssm: string;
  /** What a request must be signed with to pass: the data folder's own (random) credentials. */
  credentials: Credentials;
  /**
   * The stand-ins' own sockets, behind the gates, in a folder only this user may enter: for a tool of this process's
   * owner that stands for the network and changes requests on the way (the bench's latency proxy), which a gate
   * would refuse.
   */
  sockets: { s3: string; dynamodb: string; ssm: string };
  close(): Promise<void>;
}

/** New random credentials: an access key id and a secret no other data folder shares. */
function newCredentials(): Credentials {
  return {
    accessKeyId: `LOCAL${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64url'),
  };
}

/** The data folder's credentials, made on its first start and kept (readable by its owner only). */
function credentialsOf(dataDir: string | undefined): Credentials {
  if (!dataDir) return newCredentials();
  const file = join(dataDir, 'stand-in-credentials.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Credentials;
  const credentials = newCredentials();
  writeFileSync(file, JSON.stringify(credentials), { mode: 0o600 });
  return credentials;
}

/** Where a stand-in listens: a socket in a folder only this user may enter (a named pipe on Windows). */
function socketIn(folder: string, name: string): string {
  return process.platform === 'win32'
    ? `\\\\.\\pipe\\image-upload-${randomBytes(8).toString('hex')}-${name}`
    : join(folder, `${name}.sock`);
}

/**
 * Starts s3rver (S3), dynalite (DynamoDB) and our SSM Parameter Store, each on a socket in a private folder and behind
 * a gate on 127.0.0.1 that lets through only requests signed with the data folder's credentials (`signature-gate.ts`,
 * `docs/local.md`). With a data folder everything persists there (made private to its owner); without one it lives
 * in memory (a temporary folder for s3rver).
 */
export async function startStandIns(options: { dataDir?: string } = {}): Promise<StandIns> {
  const { dataDir } = options;
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    chmodSync(dataDir, 0o700);
  }
  const credentials = credentialsOf(dataDir);
  // mkdtemp makes the folder readable by its owner only
  const sockets = mkdtempSync(join(tmpdir(), 'image-upload-stand-ins-'));
  const s3Dir = dataDir ? join(dataDir, 's3') : mkdtempSync(join(tmpdir(), 's3rver-'));
  mkdirSync(s3Dir, { recursive: true });
  // A marker of a run in progress: found at start, the last run was killed, and s3rver may hold objects half written.
  const running = dataDir ? join(dataDir, '.running') : undefined;
  if (running && existsSync(running)) {
    for (const key of removeIncompleteObjects(s3Dir))
      process.stderr.write(`removed an object the last run left half written: ${key}\n`);
  }
  if (running) writeFileSync(running, String(process.pid));

  const s3Socket = socketIn(sockets, 's3');
  // s3rver knows one access key of its own: the gate has checked the signature, s3rver checks the key's name
  s3rverAccounts.DUMMY_ACCOUNT.createKeyPair(credentials.accessKeyId, credentials.secretAccessKey);
  const s3rver = new S3rver({ directory: s3Dir, silent: true, resetOnClose: false });
  // what `run()` does, on the socket
  await s3rver.configureBuckets();
  (s3rver as unknown as { httpServer: Server }).httpServer = await (
    s3rver as unknown as { listen(path: string): Promise<Server> }
  ).listen(s3Socket);

  if (dataDir) mkdirSync(join(dataDir, 'dynamodb'), { recursive: true });
  const dynamo: Server = dynalite({
    ...(dataDir ? { path: join(dataDir, 'dynamodb') } : {}),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  const dynamoSocket = socketIn(sockets, 'dynamodb');
  await new Promise<void>((resolve) => dynamo.listen(dynamoSocket, resolve));

  const ssmSocket = socketIn(sockets, 'ssm');
  const ssm = await startSsmServer({
    accessKeyId: credentials.accessKeyId,
    socketPath: ssmSocket,
    ...(dataDir ? { file: join(dataDir, 'ssm-parameters.json') } : {}),
  });

  const gate = (socketPath: string, s3 = false) => startSignatureGate({ socketPath, credentials, region: STAND_IN_REGION, s3 });
  const gates = await Promise.all([gate(s3Socket, true), gate(dynamoSocket), gate(ssmSocket)]);
  const [s3Gate, dynamoGate, ssmGate] = gates;

  return {
    s3: s3Gate.url,
    dynamodb: dynamoGate.url,
    ssm: ssmGate.url,
    credentials,
    sockets: { s3: s3Socket, dynamodb: dynamoSocket, ssm: ssmSocket },
    async close() {
      await Promise.all(gates.map((one) => one.close()));
      await Promise.all([s3rver.close(), new Promise<void>((resolve) => dynamo.close(() => resolve())), ssm.close()]);
      rmSync(sockets, { recursive: true, force: true });
      if (!dataDir) rmSync(s3Dir, { recursive: true, force: true });
      if (running) rmSync(running, { force: true });
    },
  };
}

/** The environment the AWS SDK reads to reach the stand-ins. */
export function standInEnvironment(standIns: Pick<StandIns, 's3' | 'dynamodb' | 'ssm' | 'credentials'>): Record<string, string> {
  return {
    AWS_REGION: STAND_IN_REGION,
    AWS_ACCESS_KEY_ID: standIns.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: standIns.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_S3: standIns.s3,
    AWS_ENDPOINT_URL_DYNAMODB: standIns.dynamodb,
    AWS_ENDPOINT_URL_SSM: standIns.ssm,
    // s3rver stores aws-chunked framing as data when the SDK sends checksum trailers; checksums only where required.
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}
