import { Agent, request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { S3Client } from '@aws-sdk/client-s3';
import { DEFAULT_INVOCATIONS, KEEP_ALIVE_MS, startDevServer, Turns } from '../../local/dev-server';

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

  it("keeps an idle connection past Node's 5 s, and says for how long: a client reusing it is not met by a closed socket", async () => {
    const server = await startDevServer({ handler, s3, bucket: 'b', port: 0 });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; reused: boolean; keepAlive: string }>((resolve, reject) => {
        const sent = request({ host: '127.0.0.1', port: server.port, path: '/', agent }, (response) => {
          response.resume();
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              reused: sent.reusedSocket,
              keepAlive: String(response.headers['keep-alive']),
            }),
          );
        });
        sent.on('error', reject);
        sent.end();
      });
    try {
      expect(await get()).toEqual({ status: 200, reused: false, keepAlive: `timeout=${KEEP_ALIVE_MS / 1000}` });
      await new Promise((resolve) => setTimeout(resolve, 5_500));
      // with Node's default the server had closed it at 5 s, and the agent would have had to open another
      expect(await get()).toMatchObject({ status: 200, reused: true });
    } finally {
      agent.destroy();
      await server.close();
    }
  });

  /** A handler that takes 100 ms and answers its path, and the most requests it ever ran at once. */
  const counting = () => {
    let running = 0;
    const seen = { most: 0 };
    const slow = async (event: { path: string }) => {
      running += 1;
      seen.most = Math.max(seen.most, running);
      await new Promise((resolve) => setTimeout(resolve, 100));
      running -= 1;
      return { statusCode: 200, body: event.path };
    };
    return { slow, seen };
  };

  it('runs at most `invocations` requests at once', async () => {
    for (const invocations of [1, 3]) {
      const { slow, seen } = counting();
      const server = await startDevServer({ handler: slow, s3, bucket: 'b', port: 0, invocations });
      try {
        const bodies = await Promise.all(
          Array.from({ length: 10 }, async (_, n) => (await fetch(`http://127.0.0.1:${server.port}/r${n}`)).text()),
        );
        expect(bodies).toEqual(Array.from({ length: 10 }, (_, n) => `/r${n}`));
        expect(seen.most).toBe(invocations);
      } finally {
        await server.close();
      }
    }
  });

  it('starts the requests that wait in the order they came, each as soon as one ends, failed or not', async () => {
    const turns = new Turns(2);
    const started: number[] = [];
    const ends: Array<() => void> = [];
    const task = (n: number) => () => {
      started.push(n);
      return new Promise<number>((resolve, reject) => ends.push(() => (n === 1 ? reject(new Error('failed')) : resolve(n))));
    };
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    const results = Array.from({ length: 5 }, (_, n) => turns.run(task(n)).catch((error: Error) => error.message));
    await tick();
    expect(started).toEqual([0, 1]);
    ends[1]?.();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    ends[0]?.();
    await tick();
    expect(started).toEqual([0, 1, 2, 3]);
    for (let n = 2; n < 5; n += 1) {
      ends[n]?.();
      await tick();
    }
    expect(started).toEqual([0, 1, 2, 3, 4]);
    await expect(Promise.all(results)).resolves.toEqual([0, 'failed', 2, 3, 4]);
  });

  // the line is the route's, read from the path as the handler routes it (decoded): `/%61pi/1/upload` is an upload
  it.each(['/api/1/upload', '/%61pi/1/upload', '/api/1/%75pload'])(
    'answers pages while every slot of the API is held, each line with its own slots: %s',
    async (uploadPath) => {
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      const handler = async (event: { path: string }) => {
        if (event.path.startsWith('/api/')) await held;
        return { statusCode: 200, body: event.path };
      };
      const server = await startDevServer({ handler, s3, bucket: 'b', port: 0, invocations: 1 });
      try {
        const base = `http://127.0.0.1:${server.port}`;
        const uploads = [fetch(`${base}${uploadPath}`), fetch(`${base}${uploadPath}`)];
        const page = await fetch(`${base}/image/abc`);
        expect([page.status, await page.text()]).toEqual([200, '/image/abc']);
        release();
        expect(await Promise.all(uploads.map(async (upload) => (await upload).status))).toEqual([200, 200]);
      } finally {
        release();
        await server.close();
      }
    },
  );

  it('runs a few requests at once by default', async () => {
    const { slow, seen } = counting();
    const server = await startDevServer({ handler: slow, s3, bucket: 'b', port: 0 });
    try {
      const statuses = await Promise.all(
        Array.from({ length: DEFAULT_INVOCATIONS * 3 }, async () => (await fetch(`http://127.0.0.1:${server.port}/`)).status),
      );
      expect(statuses).toEqual(Array.from({ length: DEFAULT_INVOCATIONS * 3 }, () => 200));
      expect(seen.most).toBe(DEFAULT_INVOCATIONS);
    } finally {
      await server.close();
    }
  });
});
