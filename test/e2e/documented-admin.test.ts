import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makePhoto } from '../support/images';
import { documentedCommands } from '../support/doc-commands';
import { runAdmin, startFreshLocalProcess } from '../support/local-process';

/**
 * Every `npm run admin` line of the docs' code blocks, run as written against `npm start`'s data folder, in the order
 * the docs give them: `--stack ImageUpload` becomes `--data-dir` (the stack needs an AWS account; `--stack` itself is
 * tested by `test/e2e/tool-errors.test.ts` and the IAM twin), and each example value is bound to a real one: the image
 * (`Ab3dE`, its viewer URL, its thumb's URL) to a fresh upload, a batch number to a batch `blocks` lists, `NEW_KEY` to a
 * key. Each line must end with exit code 0 and print what it did. `restore` is the one run elsewhere, as the guide says
 * beside it: the local S3 keeps no versions, so the IAM twin runs it (`RUN_ELSEWHERE`).
 */
jest.setTimeout(240_000);

const EXAMPLE_VIEWER = 'https://img.example.com/image/Ab3dE';
const EXAMPLE_THUMB = /^https:\/\/img\.example\.com\/images\/.+\.th\.png$/;
const EXAMPLE_ID = 'Ab3dE';
const NEW_KEY = 'a-new-key-0123456789';
/** Verbs whose documented lines another suite runs, as the docs say next to them: the suite, and what it calls. */
const RUN_ELSEWHERE: Record<string, { suite: string; calls: string }> = {
  restore: { suite: 'test/infra/deployed.test.ts', calls: "['restore', image.url_viewer]" },
};

let server: Awaited<ReturnType<typeof startFreshLocalProcess>>;

beforeAll(async () => {
  server = await startFreshLocalProcess('documented-admin', {
    API_KEY: 'documented-admin-key-0123',
    MODERATION_CACHE_SECONDS: '0',
    PARAMETERS_CACHE_SECONDS: '0',
  });
});

afterAll(async () => {
  await server?.stop();
});

function admin(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return runAdmin(['--data-dir', server.dataDir, ...args]);
}

interface Uploaded {
  id_encoded: string;
  url_viewer: string;
  thumb: { url: string };
}

/** A fresh picture uploaded with the key in force (a documented `key rotate` may have changed it). */
async function upload(seed: number): Promise<Uploaded> {
  const key = admin(['key', 'show']).stdout.trim();
  const form = new FormData();
  form.append('source', new Blob([new Uint8Array(await makePhoto(seed, 320, 240))]), `doc${seed}.jpg`);
  const response = await fetch(`${server.url}/api/1/upload`, { method: 'POST', headers: { 'X-API-Key': key }, body: form });
  expect(response.status).toBe(200);
  return ((await response.json()) as { image: Uploaded }).image;
}

/** The documented line's arguments with its example values bound to real ones. */
async function bound(argv: string[], seed: number): Promise<string[]> {
  const target = argv.indexOf('--stack');
  const args = target < 0 ? [...argv] : [...argv.slice(0, target), ...argv.slice(target + 2)];
  const verb = args[0] ?? '';
  const namesImage = args.some((arg) => arg === EXAMPLE_ID || arg === EXAMPLE_VIEWER || EXAMPLE_THUMB.test(arg));
  const image = namesImage ? await upload(seed) : undefined;
  const batches =
    verb === 'unblock' ? (JSON.parse(admin(['blocks', '--json']).stdout) as { pictures: Array<{ id: number }> }) : undefined;
  return args.map((arg) => {
    if (image && arg === EXAMPLE_VIEWER) return image.url_viewer;
    if (image && EXAMPLE_THUMB.test(arg)) return image.thumb.url;
    if (image && arg === EXAMPLE_ID) return image.id_encoded;
    if (batches && /^\d+$/.test(arg)) return String(batches.pictures.at(-1)?.id ?? arg);
    return arg === 'NEW_KEY' ? NEW_KEY : arg;
  });
}

describe('the admin lines of the docs', () => {
  const lines = documentedCommands().filter(({ name, inline }) => name === 'admin' && !inline);

  it('are there to run: the operations guide shows every kind of verb', () => {
    expect(lines.length).toBeGreaterThan(15);
  });

  it('each runs as written against npm start, in the order the docs give them', async () => {
    const failed: string[] = [];
    let seed = 1;
    for (const { where, line } of lines) {
      const verb = line.split(/\s+/).find((arg, index, all) => !arg.startsWith('-') && all[index - 1] !== '--stack') ?? '';
      if (Object.hasOwn(RUN_ELSEWHERE, verb)) continue;
      const args = await bound(line.split(/\s+/), (seed += 1));
      const run = admin(args);
      if (run.status !== 0 || run.stdout.trim() === '')
        failed.push(`${where}\n  ran: admin ${args.join(' ')}\n  exit ${run.status}: ${run.stderr.trim() || '(no output)'}`);
    }
    expect(failed).toEqual([]);
  });

  it('run elsewhere only where the docs say so beside them, by a suite that runs the verb', () => {
    const operations = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
    for (const [verb, { suite, calls }] of Object.entries(RUN_ELSEWHERE)) {
      expect(lines.some(({ line }) => line.includes(` ${verb} `))).toBe(true);
      const beside = new RegExp(`admin -- --stack ImageUpload ${verb} \\S+ +# run by ${suite.replace(/[./]/g, '\\$&')}`);
      expect(operations).toMatch(beside);
      expect(readFileSync(join(__dirname, '..', '..', suite), 'utf8')).toContain(calls);
    }
  });
});
