import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LocalProcess {
  url: string;
  apiKey: string;
  pid: number;
  output(): string;
  stop(): Promise<void>;
}

const ROOT = join(__dirname, '..', '..');

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Runs `start` on a free port; again on another when the port was taken between finding it free and the server's
 * listen (by one of the many servers the suites start, the stand-ins' gates among them): a race of the suites' own
 * making, not the server's.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (error) {
      if (attempt === 3 || !/EADDRINUSE/.test(String(error))) throw error;
    }
  }
}

/**
 * `npm start`'s script (`NAME=value ... node <arguments>`): the environment it sets and Node's arguments, so that the
 * suites and the bench run the server as `npm start` does, its allocator and V8 settings included; one process (tsx's
 * CLI would run the server in a child of its own, hiding its pid and memory).
 */
export function npmStartCommand(): { env: Record<string, string>; args: string[] } {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const script = /^((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)node\s+(.+)$/.exec(manifest.scripts.start);
  if (!script) throw new Error(`npm start is expected to run node directly: ${manifest.scripts.start}`);
  const settings = (script[1] ?? '').split(/\s+/).filter(Boolean);
  // each NAME=value split at its first '=' (a value may hold more)
  const env = Object.fromEntries(
    settings.map((setting) => [setting.slice(0, setting.indexOf('=')), setting.slice(setting.indexOf('=') + 1)]),
  );
  const args = (script[2] ?? '').split(/\s+/);
  return { env, args };
}

/** Runs `npm start`'s entry point as its own process, with only the given environment (no stand-ins of the tests). */
export async function startLocalProcess(env: Record<string, string>): Promise<LocalProcess> {
  const cleanEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('AWS_') && !name.startsWith('JEST') && name !== 'NODE_ENV')
      cleanEnv[name] = value;
  }
  const start = npmStartCommand();
  const child: ChildProcess = spawn(process.execPath, start.args, {
    cwd: ROOT,
    env: { ...cleanEnv, ...start.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the local server did not start:\n${output}`)), 20_000);
    const check = (): void => {
      if (/API key:/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the local server exited with ${code}:\n${output}`));
    });
  });
  const apiKey = /API key:\s+(\S+)/.exec(output)?.[1] ?? '';
  const url = /running at (\S+)/.exec(output)?.[1] ?? '';
  return {
    url,
    apiKey,
    pid: child.pid ?? 0,
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * `npm start` as the end-to-end suites run it: a data folder of its own (`image-upload-<name>-...`), a free port, and
 * `PUBLIC_URL` at that port, besides `env`. Stopping it also removes the folder.
 */
export async function startFreshLocalProcess(
  name: string,
  env: Record<string, string>,
): Promise<LocalProcess & { dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), `image-upload-${name}-`));
  const removeData = (): void => rmSync(dataDir, { recursive: true, force: true });
  try {
    const server = await onFreePort((port) =>
      startLocalProcess({ PORT: String(port), DATA_DIR: dataDir, PUBLIC_URL: `http://127.0.0.1:${port}`, ...env }),
    );
    return {
      ...server,
      dataDir,
      async stop() {
        await server.stop();
        removeData();
      },
    };
  } catch (error) {
    removeData();
    throw error;
  }
}

/** `npm run admin` as an operator runs it (its own process), with these arguments. */
export function runAdmin(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'scripts', 'admin.ts'), ...args],
    { encoding: 'utf8', timeout: 30_000, env },
  );
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}
