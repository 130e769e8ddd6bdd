import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { makeJpeg, makePng } from '../support/images';
import { startFreshLocalProcess, type LocalProcess } from '../support/local-process';

/**
 * The snippets of docs/clients.md, run as written against `npm start`: the host, the key and the fetched URL of the
 * page replaced by the local ones, in a folder holding a `photo.jpg`. Each must print the link of an image the server
 * then serves (or, for the delete, its JSON answer).
 */
jest.setTimeout(60_000);

const ROOT = join(__dirname, '..', '..');
const API_KEY = 'docs-key-0123456789';
const DOC = readFileSync(join(ROOT, 'docs', 'clients.md'), 'utf8');

interface Snippet {
  language: 'sh' | 'js' | 'python';
  code: string;
}

const snippets: Snippet[] = [...DOC.matchAll(/```(sh|js|python)\n([\s\S]*?)```/g)].map((match) => ({
  language: match[1] as Snippet['language'],
  code: match[2] ?? '',
}));

let workDir: string;
let server: LocalProcess;
let source: Server;
let sourceUrl: string;

/** Whether python3 with requests is here (the machine image's moto_server brings it); CI must have it. */
function pythonAvailable(): boolean {
  const found = spawnSync('python3', ['-c', 'import requests'], { stdio: 'ignore' }).status === 0;
  if (!found && process.env['CI']) throw new Error('python3 with requests is missing: CI runs the Python snippet');
  return found;
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'snippets-'));
  writeFileSync(join(workDir, 'photo.jpg'), await makeJpeg(320, 200));
  writeFileSync(join(workDir, 'small.png'), await makePng(16, 16));
  const png = await makePng(48, 32);
  source = createServer((_request, response) => response.writeHead(200, { 'Content-Type': 'image/png' }).end(png));
  await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
  sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}/cat.png`;
  server = await startFreshLocalProcess('docs', {
    API_KEY,
    // the URL snippet's picture is on this machine; the service refuses such addresses unless allowed
    URL_FETCH_ALLOW_HOSTS: '127.0.0.1',
    DUPLICATES: 'allow',
  });
});

afterAll(async () => {
  await server?.stop();
  await new Promise((resolve) => source?.close(resolve));
  rmSync(workDir, { recursive: true, force: true });
});

/** The snippet with the local server, key and picture URL in place of the document's. */
function localized(code: string): string {
  return code
    .replaceAll('https://img.example.com', server.url)
    .replaceAll('YOUR_KEY', API_KEY)
    .replaceAll('https://example.com/cat.png', sourceUrl);
}

/** Runs a snippet; asynchronously, so that this process's picture server answers the service meanwhile. */
async function run(snippet: Snippet, env: Record<string, string> = {}): Promise<string> {
  const code = localized(snippet.code);
  const options = { cwd: workDir, encoding: 'utf8' as const, env: { ...process.env, ...env } };
  const exec = promisify(execFile);
  if (snippet.language === 'sh') return (await exec('sh', ['-c', code], options)).stdout;
  if (snippet.language === 'python') return (await exec('python3', ['-c', code], options)).stdout;
  // a module file inside the project, so that its imports (imgbb-uploader) resolve from node_modules
  const folder = join(ROOT, 'cdk.out', 'snippets');
  mkdirSync(folder, { recursive: true });
  const file = join(folder, `snippet-${snippets.indexOf(snippet)}.mjs`);
  writeFileSync(file, code);
  return (await exec(process.execPath, [file], options)).stdout;
}

/** The first link to a stored image in a snippet's output. */
function imageLink(output: string): string {
  const link = new RegExp(`${server.url.replace(/[.:/]/g, '\\$&')}/images/[^"\\s]+`).exec(output)?.[0];
  if (!link) throw new Error(`no image link in:\n${output}`);
  return link;
}

describe('docs/clients.md', () => {
  it('has the snippets the tests run: curl, fetch, imgbb-uploader, the two-step upload and Python', () => {
    const count = (language: string) => snippets.filter((snippet) => snippet.language === language).length;
    expect([count('sh'), count('js'), count('python')]).toEqual([6, 3, 1]);
  });

  it.each(
    snippets.filter((snippet) => !snippet.code.includes('DELETE_URL')).map((snippet) => [snippet.code.split('\n')[0], snippet]),
  )('runs %s', async (_first, snippet) => {
    if (snippet.language === 'python' && !pythonAvailable()) return;
    const link = imageLink(await run(snippet));
    const served = await fetch(link);
    expect([link, served.status, served.headers.get('content-type')]).toEqual([link, 200, expect.stringMatching(/^image\//)]);
  });

  it('deletes with the delete snippet', async () => {
    const form = new FormData();
    form.append('source', new Blob([readFileSync(join(workDir, 'photo.jpg'))]), 'goner.jpg');
    const uploaded = await fetch(`${server.url}/api/1/upload`, { method: 'POST', headers: { 'X-API-Key': API_KEY }, body: form });
    const image = ((await uploaded.json()) as { image: { url: string; delete_url: string } }).image;
    const snippet = snippets.find((candidate) => candidate.code.includes('DELETE_URL'));
    if (!snippet) throw new Error('no delete snippet');
    expect(JSON.parse(await run(snippet, { DELETE_URL: image.delete_url }))).toMatchObject({
      success: { message: 'image deleted' },
    });
    expect((await fetch(image.url)).status).toBe(404);
  });
});

describe('README.md', () => {
  it("runs the README's curl line against npm start, as a newcomer does", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const line = /^curl .*localhost:3000.*$/m.exec(readme)?.[0];
    if (!line) throw new Error("no curl line in the README's first steps");
    const code = line.replaceAll('http://localhost:3000', server.url);
    const link = imageLink(await run({ language: 'sh', code }));
    expect((await fetch(link)).status).toBe(200);
  });
});
