import { randomBytes } from 'node:crypto';
import { createHandler } from '../../functions/api/handler';
import { localContext, toApiGatewayEvent } from '../../local/api-gateway-event';
import { provision } from '../../local/provision';
import { standInEnvironment, startStandIns } from '../../local/stand-ins';
import { makeBenchFixtures } from './fixtures';

/**
 * The whole upload as Lambda runs it (parse, key, flood, duplicates, imaging, S3 and DynamoDB writes) against the
 * local stand-ins: the duration the cost note in the README is computed from. The stand-ins run in this process, so
 * the figure includes their work too; in AWS the stores answer over the network instead.
 */
export async function measureHandler(iterations: number): Promise<{ input: string; p50Ms: number }[]> {
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
  process.env['POWERTOOLS_LOG_LEVEL'] = 'SILENT';
  const standIns = await startStandIns();
  try {
    Object.assign(process.env, standInEnvironment(standIns));
    const names = { bucket: 'bench', table: 'bench-table', parameterPrefix: '/bench' };
    const { apiKey } = await provision({ endpoints: standIns, ...names });
    const handler = createHandler({
      BUCKET_NAME: names.bucket,
      TABLE_NAME: names.table,
      PARAMETER_PREFIX: names.parameterPrefix,
      PUBLIC_URL: 'https://img.example.test',
      DUPLICATES: 'allow',
    });
    await provisionFloodOff(standIns.ssm);
    const results: { input: string; p50Ms: number }[] = [];
    for (const fixture of (await makeBenchFixtures()).filter(
      (item) => item.name.startsWith('JPEG') || item.name.startsWith('PNG'),
    )) {
      const times: number[] = [];
      for (let run = 0; run < iterations + 2; run += 1) {
        const form = new FormData();
        form.append('source', new Blob([fixture.bytes]), `bench-${randomBytes(4).toString('hex')}.bin`);
        form.append('key', apiKey);
        const request = new Request('https://img.example.test/api/1/upload', { method: 'POST', body: form });
        const rawHeaders: string[] = [];
        request.headers.forEach((value, name) => rawHeaders.push(name, value));
        const event = toApiGatewayEvent({
          method: 'POST',
          url: '/api/1/upload',
          rawHeaders,
          body: Buffer.from(await request.arrayBuffer()),
          sourceIp: '203.0.113.1',
        });
        const started = process.hrtime.bigint();
        const response = await handler(event, localContext(event.requestContext.requestId));
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        if (response.statusCode !== 200) throw new Error(`upload failed: ${response.body}`);
        if (run >= 2) times.push(ms);
      }
      times.sort((a, b) => a - b);
      results.push({ input: fixture.name, p50Ms: times[Math.floor(times.length / 2)] ?? 0 });
    }
    return results;
  } finally {
    await standIns.close();
  }
}

async function provisionFloodOff(ssmUrl: string): Promise<void> {
  const { PutParameterCommand, SSMClient } = await import('@aws-sdk/client-ssm');
  const ssm = new SSMClient({
    region: 'us-east-1',
    endpoint: ssmUrl,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  await ssm.send(
    new PutParameterCommand({
      Name: '/bench/flood-limits',
      Value: '{"minute":0,"hour":0,"day":0,"week":0,"month":0}',
      Type: 'String',
      Overwrite: true,
    }),
  );
  ssm.destroy();
}
