import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetParametersCommand, SSMClient } from '@aws-sdk/client-ssm';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startFreshLocalProcess } from '../support/local-process';

/**
 * What another user of this machine can do to `npm start`'s stores (`docs/local.md`): the stand-ins answer only
 * requests signed with the data folder's own credentials, which only its owner can read.
 */
jest.setTimeout(60_000);

const API_KEY = 'local-mode-key-0123456789';
let server: Awaited<ReturnType<typeof startFreshLocalProcess>>;
let endpoints: Record<string, string>;

beforeAll(async () => {
  server = await startFreshLocalProcess('local-mode', { API_KEY });
  endpoints = JSON.parse(readFileSync(join(server.dataDir, 'endpoints.json'), 'utf8')) as Record<string, string>;
});

afterAll(() => server?.stop());

const credentials = (secretAccessKey = endpoints['secretAccessKey'] ?? '') => ({
  accessKeyId: endpoints['accessKeyId'] ?? '',
  secretAccessKey,
});

describe('the local stores, as another user of the machine meets them', () => {
  it('keep the data folder, its credentials and endpoints.json to their owner', () => {
    expect(statSync(server.dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(server.dataDir, 'endpoints.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(server.dataDir, 'stand-in-credentials.json')).mode & 0o777).toBe(0o600);
    expect(endpoints['accessKeyId']).toMatch(/^LOCAL[0-9A-F]{16}$/);
    expect(endpoints['secretAccessKey']?.length).toBeGreaterThanOrEqual(40);
  });

  it('refuse anonymous requests: no listing or writing the bucket, no table, no parameter', async () => {
    const bucketUrl = `${endpoints['s3']}/${endpoints['bucket']}`;
    expect((await fetch(bucketUrl)).status).toBe(403);
    expect((await fetch(`${bucketUrl}/images/planted.html`, { method: 'PUT', body: '<script>alert(1)</script>' })).status).toBe(
      403,
    );
    const json = (target: string) => ({
      method: 'POST',
      headers: { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': target },
      body: JSON.stringify({ Names: [`${endpoints['parameterPrefix']}/api-key`], WithDecryption: true }),
    });
    const ssm = await fetch(endpoints['ssm'] ?? '', json('AmazonSSM.GetParameters'));
    expect(ssm.status).toBe(403);
    expect(await ssm.text()).not.toContain(API_KEY);
    expect((await fetch(endpoints['dynamodb'] ?? '', json('DynamoDB_20120810.ListTables'))).status).toBe(403);
  });

  it('refuse a request signed with the right key name and another secret (the SSM stand-in once checked the name only)', async () => {
    const forged = new SSMClient({
      region: 'us-east-1',
      endpoint: endpoints['ssm'] ?? '',
      credentials: credentials('S3RVER'),
      maxAttempts: 1,
    });
    await expect(
      forged.send(new GetParametersCommand({ Names: [`${endpoints['parameterPrefix']}/api-key`], WithDecryption: true })),
    ).rejects.toThrow();
    forged.destroy();
    const dynamodb = new DynamoDBClient({
      region: 'us-east-1',
      endpoint: endpoints['dynamodb'] ?? '',
      credentials: credentials('guess'),
      maxAttempts: 1,
    });
    await expect(dynamodb.send(new ListTablesCommand({}))).rejects.toThrow();
    dynamodb.destroy();
  });

  it("answer their owner's tools, signed with endpoints.json's credentials", async () => {
    const ssm = new SSMClient({ region: 'us-east-1', endpoint: endpoints['ssm'] ?? '', credentials: credentials() });
    const read = await ssm.send(
      new GetParametersCommand({ Names: [`${endpoints['parameterPrefix']}/api-key`], WithDecryption: true }),
    );
    expect(read.Parameters?.[0]?.Value).toBe(API_KEY);
    ssm.destroy();
  });

  it('serve under /images/ only the image types the service stores, whatever else lands in the bucket', async () => {
    const s3 = new S3Client({
      region: 'us-east-1',
      endpoint: endpoints['s3'] ?? '',
      forcePathStyle: true,
      credentials: credentials(),
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    const put = (key: string, ContentType: string) =>
      s3.send(new PutObjectCommand({ Bucket: endpoints['bucket'], Key: key, Body: '<script>alert(1)</script>', ContentType }));
    await put('images/2026/11/25/planted.html', 'text/html');
    await put('images/2026/11/25/planted.svg', 'image/svg+xml');
    s3.destroy();
    for (const name of ['planted.html', 'planted.svg']) {
      const answer = await fetch(`${server.url}/images/2026/11/25/${name}`);
      expect([name, answer.status, answer.headers.get('content-type')]).toEqual([name, 404, 'text/plain; charset=utf-8']);
    }
  });
});
