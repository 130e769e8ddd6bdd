import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/**
 * Runs a bundled function as Lambda's Node.js runtime does: a process of its own with only the environment it is given,
 * the bundle's `handler` loaded once (the cold start) and called for each event with a context. Results come back on
 * file descriptor 3, so that the function's own log lines (stdout) stay apart. `TWIN_CLOCK_OFFSET_MS` moves the
 * process's clock forward (an expiry that is minutes away).
 */
const RUNNER = `
const { writeSync } = require('node:fs');
const { createInterface } = require('node:readline');
const offset = Number(process.env.TWIN_CLOCK_OFFSET_MS || 0);
if (offset) { const now = Date.now; Date.now = () => now() + offset; }
const { handler } = require(process.env.TWIN_ENTRY);
const started = Date.now();
const context = (id) => ({
  awsRequestId: id, functionName: 'twin', functionVersion: '$LATEST', invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:twin',
  memoryLimitInMB: '1769', logGroupName: 'twin', logStreamName: 'twin', callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 28000,
});
createInterface({ input: process.stdin }).on('line', async (line) => {
  const { id, event } = JSON.parse(line);
  try {
    const result = await handler(event, context(id));
    writeSync(3, JSON.stringify({ id, result }) + '\\n');
  } catch (error) {
    writeSync(3, JSON.stringify({ id, error: String(error && error.stack || error) }) + '\\n');
  }
});
`;

export interface LambdaTwin {
  invoke<T = unknown>(event: unknown): Promise<T>;
  /** What the function wrote to stdout and stderr (its logs). */
  output(): string;
  stop(): Promise<void>;
}

export function startLambdaTwin(bundleDir: string, env: Record<string, string>): LambdaTwin {
  const child: ChildProcess = spawn(process.execPath, ['-e', RUNNER], {
    cwd: bundleDir,
    env: { PATH: process.env['PATH'] ?? '', ...env, TWIN_ENTRY: join(bundleDir, 'index.js') },
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const waiting = new Map<string, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let buffered = '';
  (child.stdio[3] as Readable).on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let newline: number;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const answer = JSON.parse(buffered.slice(0, newline)) as { id: string; result?: unknown; error?: string };
      buffered = buffered.slice(newline + 1);
      const waiter = waiting.get(answer.id);
      waiting.delete(answer.id);
      if (answer.error !== undefined) waiter?.reject(new Error(`the function failed: ${answer.error}`));
      else waiter?.resolve(answer.result);
    }
  });
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (code) => {
      for (const waiter of waiting.values()) waiter.reject(new Error(`the function's process exited (${code}):\n${output}`));
      resolve();
    }),
  );
  let next = 0;
  return {
    invoke<T>(event: unknown): Promise<T> {
      const id = `twin-${(next += 1)}`;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: (value) => resolve(value as T), reject });
        (child.stdin as Writable).write(`${JSON.stringify({ id, event })}\n`);
      });
    },
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
