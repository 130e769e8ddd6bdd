import { createServer, type Server, type Socket } from 'node:net';
import { STORE_CALL_LIMITS } from '../../functions/roots/stores';
import { makePng } from '../support/images';
import { createTestService, multipartUpload } from '../support/test-service';

jest.setTimeout(60_000);

describe('store timeouts', () => {
  it("bounds every store call below the gateway's 29 s, retries included", () => {
    const backoffAllowanceMs = 1_000;
    for (const limits of Object.values(STORE_CALL_LIMITS)) {
      expect(limits.maxAttempts * (limits.connectionTimeoutMs + limits.requestTimeoutMs) + backoffAllowanceMs).toBeLessThan(
        29_000,
      );
    }
  });

  it('answers 503 code 900 in bounded time when DynamoDB accepts connections and never answers', async () => {
    const sockets: Socket[] = [];
    const blackHole: Server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const address = blackHole.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const real = process.env['AWS_ENDPOINT_URL_DYNAMODB'];
    const service = await createTestService();
    const bytes = await makePng(12, 12);
    try {
      // the handler builds its clients on its first request, from the environment of that moment
      process.env['AWS_ENDPOINT_URL_DYNAMODB'] = `http://127.0.0.1:${port}`;
      const started = Date.now();
      const response = await service.send(multipartUpload({ key: service.apiKey, source: { bytes, filename: 'slow.png' } }));
      const elapsedMs = Date.now() - started;
      expect(response.statusCode).toBe(503);
      expect(JSON.parse(response.body)).toMatchObject({ error: { code: 900, message: 'Service unavailable, try again' } });
      const { maxAttempts, connectionTimeoutMs, requestTimeoutMs } = STORE_CALL_LIMITS.small;
      expect(elapsedMs).toBeGreaterThanOrEqual(requestTimeoutMs);
      expect(elapsedMs).toBeLessThan(maxAttempts * (connectionTimeoutMs + requestTimeoutMs) + 2_000);
    } finally {
      process.env['AWS_ENDPOINT_URL_DYNAMODB'] = real;
      sockets.forEach((socket) => socket.destroy());
      await new Promise((resolve) => blackHole.close(resolve));
    }
  });
});
