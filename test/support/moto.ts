import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from './local-process';

export interface Moto {
  /** `http://127.0.0.1:PORT`: one endpoint for every service. */
  endpoint: string;
  /** From now on every request must be signed by a known identity whose policies allow it. */
  enforceIam(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Whether `moto_server` (pip's moto, an emulator of S3, DynamoDB, SSM, CloudFront...) is on this machine. The machine
 * image has it; CI must not pass without it, so a suite that needs it fails in CI and only skips elsewhere.
 */
export function motoAvailable(): boolean {
  try {
    execFileSync('moto_server', ['--help'], { stdio: 'ignore' });
    return true;
  } catch {
    if (process.env['CI']) throw new Error('moto_server is not installed: CI needs it (pip install moto[server])');
    return false;
  }
}

/**
 * Starts moto_server on a free loopback port, and waits until it answers. With `iam`, it is moto's server with IAM
 * checked on resources as AWS does (test/support/moto-iam-server.py), on from `enforceIam()` on, and AWS's managed
 * policies loaded so that a role can attach them.
 */
export async function startMoto(options: { iam?: boolean } = {}): Promise<Moto> {
  const port = await freePort();
  const address = ['-H', '127.0.0.1', '-p', String(port)];
  const child: ChildProcess = options.iam
    ? spawn('python3', [join(__dirname, 'moto-iam-server.py'), ...address], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, MOTO_IAM_LOAD_MANAGED_POLICIES: 'true' },
      })
    : spawn('moto_server', address, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${endpoint}/moto-api/`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`moto_server did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    endpoint,
    async enforceIam() {
      // moto checks nothing for this many more requests: none
      const answer = await fetch(`${endpoint}/moto-api/reset-auth`, { method: 'POST', body: '0' });
      if (!answer.ok) throw new Error(`moto did not turn IAM on: ${answer.status}`);
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
