import { request as httpRequest } from 'node:http';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256, REFUSALS } from '../../local/signature-gate';
import { STAND_IN_REGION, startStandIns, type StandIns } from '../../local/stand-ins';

/**
 * The gate in front of `npm start`'s stand-ins refuses what S3 refuses: a header `x-amz-*` that was not signed (an
 * `x-amz-copy-source` added to a presigned PUT made the stand-in S3 copy another object into staging), a changed
 * length, an expired URL; each with its reason, in S3's XML.
 */
const BUCKET = 'gate-test';
let standIns: StandIns;
let s3: S3Client;

beforeAll(async () => {
  standIns = await startStandIns();
  s3 = new S3Client({
    region: STAND_IN_REGION,
    endpoint: standIns.s3,
    forcePathStyle: true,
    credentials: standIns.credentials,
  });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'images/kept.png', Body: 'the stored image' }));
});

afterAll(async () => {
  s3?.destroy();
  await standIns?.close();
});

/** Sends a request as given (no client adds or checks anything): its status and body. */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** A presigned PUT of `length` bytes to a staging key, as the service signs its upload URLs (the length signed). */
function presignedPut(key: string, length: number, options: { expiresIn?: number; signingDate?: Date } = {}) {
  return getSignedUrl(s3, new PutObjectCommand({ Bucket: BUCKET, Key: key, ContentLength: length }), {
    expiresIn: options.expiresIn ?? 900,
    signableHeaders: new Set(['content-length']),
    ...(options.signingDate ? { signingDate: options.signingDate } : {}),
  });
}

async function stored(key: string): Promise<string | undefined> {
  try {
    return await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body?.transformToString();
  } catch (error) {
    if ((error as Error).name === 'NoSuchKey') return undefined;
    throw error;
  }
}

describe("npm start's signature gate", () => {
  it('takes a presigned PUT sent as it was signed', async () => {
    const url = await presignedPut('staging/plain', 5);
    expect(await send(url, 'PUT', { 'Content-Length': '5' }, 'bytes')).toMatchObject({ status: 200 });
    expect(await stored('staging/plain')).toBe('bytes');
  });

  it('refuses an x-amz-copy-source added to a presigned PUT, naming it, and copies nothing', async () => {
    const url = await presignedPut('staging/copied', 0);
    const answer = await send(url, 'PUT', { 'Content-Length': '0', 'x-amz-copy-source': `/${BUCKET}/images/kept.png` });
    expect(answer.status).toBe(403);
    expect(answer.body).toContain('<Code>AccessDenied</Code>');
    expect(answer.body).toContain(`${REFUSALS.unsignedHeaders} x-amz-copy-source`);
    expect(await stored('staging/copied')).toBeUndefined();
  });

  it('refuses an unsigned x-amz-* header beside a signed Authorization header too', async () => {
    const signer = new SignatureV4({
      credentials: standIns.credentials,
      region: STAND_IN_REGION,
      service: 's3',
      sha256: NodeSha256,
      uriEscapePath: false,
    });
    const { hostname, port } = new URL(standIns.s3);
    const signed = await signer.sign({
      method: 'GET',
      protocol: 'http:',
      hostname,
      port: Number(port),
      path: `/${BUCKET}/images/kept.png`,
      headers: { host: `${hostname}:${port}`, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    });
    const target = `${standIns.s3}/${BUCKET}/images/kept.png`;
    expect(await send(target, 'GET', signed.headers)).toMatchObject({ status: 200, body: 'the stored image' });
    const added = await send(target, 'GET', { ...signed.headers, 'x-amz-meta-extra': '1' });
    expect(added.status).toBe(403);
    expect(added.body).toContain(`${REFUSALS.unsignedHeaders} x-amz-meta-extra`);
  });

  it('says a PUT of another length than signed does not match its signature, and stores nothing', async () => {
    const url = await presignedPut('staging/short', 10);
    const answer = await send(url, 'PUT', { 'Content-Length': '5' }, 'bytes');
    expect(answer.status).toBe(403);
    expect(answer.body).toContain('a part of it that was signed (its length, a header, the body) changed since');
    expect(await stored('staging/short')).toBeUndefined();
  });

  it('says a presigned URL has expired', async () => {
    const url = await presignedPut('staging/late', 5, { expiresIn: 60, signingDate: new Date(Date.now() - 120_000) });
    const answer = await send(url, 'PUT', { 'Content-Length': '5' }, 'bytes');
    expect(answer.status).toBe(403);
    expect(answer.body).toContain(REFUSALS.expired);
  });

  it('says an unsigned request is not signed, and the SDK reads the refusal as S3 words it', async () => {
    expect((await send(`${standIns.s3}/${BUCKET}/images/kept.png`, 'GET', {})).body).toContain(REFUSALS.unsigned);
    const other = new S3Client({
      region: STAND_IN_REGION,
      endpoint: standIns.s3,
      forcePathStyle: true,
      credentials: { accessKeyId: standIns.credentials.accessKeyId, secretAccessKey: 'another-secret' },
      maxAttempts: 1,
    });
    await expect(other.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'images/kept.png' }))).rejects.toMatchObject({
      name: 'AccessDenied',
      message: REFUSALS.mismatch,
    });
    other.destroy();
  });
});
