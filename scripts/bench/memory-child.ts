import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { APIGatewayProxyHandler } from 'aws-lambda';
import { eventOfRequest, localContext } from '../../local/api-gateway-event';

/**
 * One Lambda-like instance for `npm run load:memory`: loads the bundled handler (argv[2]), then runs `MEMORY_UPLOADS`
 * uploads of the 12 MP JPEG in `MEMORY_INPUT`, `MEMORY_CONCURRENCY` at a time, printing a JSON line of its RSS every 50 uploads.
 */
function rssMiB(): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024;
}

async function main(): Promise<void> {
  const uploads = Number(process.env['MEMORY_UPLOADS'] ?? 1000);
  const concurrency = Number(process.env['MEMORY_CONCURRENCY'] ?? 1);
  const apiKey = process.env['MEMORY_API_KEY'] ?? '';
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle as Lambda loads it
  const { handler } = require(process.argv[2] ?? '') as { handler: APIGatewayProxyHandler };
  // made by the parent: making it here would count sharp's work on it in this process's memory
  const jpeg = readFileSync(process.env['MEMORY_INPUT'] ?? '');
  const upload = async (): Promise<void> => {
    const form = new FormData();
    // a fresh image each time (bytes past the image's end): never a duplicate
    form.append('source', new Blob([Buffer.concat([jpeg, randomBytes(8)])]), 'memory.jpg');
    form.append('key', apiKey);
    const request = new Request('https://img.example.test/api/1/upload', { method: 'POST', body: form });
    const event = await eventOfRequest(request, '203.0.113.9');
    const response = await handler(event, localContext(event.requestContext.requestId), () => undefined);
    if (!response || response.statusCode !== 200) throw new Error(`upload failed: ${response?.body ?? 'no answer'}`);
  };
  const startedMs = Date.now();
  const report = (done: number): void => {
    const { heapUsed, external } = process.memoryUsage();
    process.stdout.write(
      `${JSON.stringify({ done, rssMiB: rssMiB(), heapMiB: heapUsed / 1048576, externalMiB: external / 1048576, seconds: (Date.now() - startedMs) / 1000 })}\n`,
    );
  };
  report(0);
  for (let done = 0; done < uploads;) {
    const batch = Math.min(concurrency, uploads - done);
    await Promise.all(Array.from({ length: batch }, upload));
    const before = done;
    done += batch;
    if (Math.floor(done / 50) > Math.floor(before / 50) || done === uploads) report(done);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
