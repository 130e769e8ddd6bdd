import { networkInterfaces } from 'node:os';
import { S3Client } from '@aws-sdk/client-s3';
import { startDevServer } from '../../local/dev-server';

describe('the local server', () => {
  const handler = async () => ({ statusCode: 200, body: 'ok' });
  const s3 = new S3Client({ region: 'us-east-1' });

  it('listens on 127.0.0.1 unless told another host, so other machines cannot reach it', async () => {
    const server = await startDevServer({ handler, s3, bucket: 'b', port: 0 });
    try {
      expect(server.host).toBe('127.0.0.1');
      expect(await (await fetch(`http://127.0.0.1:${server.port}/`)).text()).toBe('ok');
      const external = Object.values(networkInterfaces())
        .flat()
        .find((address) => address?.family === 'IPv4' && !address.internal);
      // from this machine's own network address (where it has one), as another machine would come
      if (external) await expect(fetch(`http://${external.address}:${server.port}/`)).rejects.toThrow();
    } finally {
      await server.close();
    }
    const everywhere = await startDevServer({ handler, s3, bucket: 'b', port: 0, host: '0.0.0.0' });
    expect(everywhere.host).toBe('0.0.0.0');
    await everywhere.close();
  });
});
