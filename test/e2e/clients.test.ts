import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makePng } from '../support/images';
import { startFreshLocalProcess, type LocalProcess } from '../support/local-process';

/**
 * `npm run client-config` output, used as each client uses it, against `npm start`'s server: ShareX's request built
 * from the `.sxcu` fields and its `{json:...}` paths resolved on the answer; PicGo's web-uploader request from its
 * configuration; the Flameshot script run with stand-ins for flameshot and the clipboard tool.
 */
const ROOT = join(__dirname, '..', '..');
const API_KEY = 'clients-key-0123456789';
let server: LocalProcess;

function clientConfig(...args: string[]): { stdout: string; stderr: string; status: number | null } {
  const result = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'scripts', 'client-config.ts'), ...args],
    {
      encoding: 'utf8',
    },
  );
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

/** ShareX's `{json:a.b.c}` syntax, resolved on an answer as ShareX does. */
function resolveSharex(template: string, answer: unknown): string {
  return template.replace(/\{json:([^}]+)\}/g, (_all, path: string) => {
    let value: unknown = answer;
    for (const step of path.split('.')) value = (value as Record<string, unknown> | undefined)?.[step];
    return String(value);
  });
}

interface Sxcu {
  RequestMethod: string;
  RequestURL: string;
  Headers: Record<string, string>;
  Body: string;
  Arguments: Record<string, string>;
  FileFormName: string;
  URL: string;
  ThumbnailURL: string;
  DeletionURL: string;
  ErrorMessage: string;
}

beforeAll(async () => {
  server = await startFreshLocalProcess('clients', { API_KEY });
});

afterAll(() => server?.stop());

describe('npm run client-config', () => {
  it('refuses an unknown client or a missing URL, and says when the key is a placeholder', () => {
    // one line naming the mistake, then the usage
    const unknown = clientConfig('frob', 'https://img.example');
    expect([unknown.status, unknown.stderr.split('\n')[0]]).toEqual([2, 'no client frob: one of sharex, picgo, flameshot']);
    const bare = clientConfig('sharex');
    expect([bare.status, bare.stderr.split('\n')[0]]).toEqual([2, 'no BASE_URL given']);
    expect(clientConfig().stderr.split('\n')[0]).toBe('no client given');
    expect(bare.stderr).toContain('usage: npm run client-config -- sharex|picgo|flameshot BASE_URL [KEY]');
    expect(clientConfig('sharex', 'not a url').status).toBe(2);
    const placeholder = clientConfig('sharex', 'https://img.example');
    expect(placeholder.stderr).toContain('replace YOUR_KEY');
    expect((JSON.parse(placeholder.stdout) as Sxcu).Headers['X-API-Key']).toBe('YOUR_KEY');
  });

  it('takes a base URL pasted with the API path, refuses other schemes and extra arguments, and writes a file with --out', () => {
    for (const pasted of ['https://img.example/api/1/upload', 'https://img.example/api/1/upload/', 'https://img.example/api/1']) {
      const run = clientConfig('sharex', pasted, 'k');
      expect([pasted, run.status, (JSON.parse(run.stdout) as Sxcu).RequestURL]).toEqual([
        pasted,
        0,
        'https://img.example/api/1/upload',
      ]);
      expect(run.stderr).toContain('BASE_URL taken as https://img.example (the host');
    }
    // a host served under a path keeps it
    expect((JSON.parse(clientConfig('sharex', 'https://example.org/img/', 'k').stdout) as Sxcu).RequestURL).toBe(
      'https://example.org/img/api/1/upload',
    );
    for (const args of [
      ['sharex', 'ftp://img.example'],
      ['sharex', 'javascript:alert(1)'],
      ['sharex', 'https://img.example/?a=1'],
      ['sharex', 'https://img.example', 'k', 'extra'],
      ['sharex', 'https://img.example', '--outt', 'x'],
    ])
      expect([args, clientConfig(...args).status]).toEqual([args, 2]);
    const dir = mkdtempSync(join(tmpdir(), 'client-config-'));
    try {
      const file = join(dir, 'host.sxcu');
      const written = clientConfig('sharex', 'https://img.example', 'k', '--out', file);
      expect([written.status, written.stdout, written.stderr]).toEqual([0, '', `wrote ${file}\n`]);
      expect((JSON.parse(readFileSync(file, 'utf8')) as Sxcu).Headers['X-API-Key']).toBe('k');
      expect(clientConfig('sharex', 'https://img.example', 'k', '--out', join(dir, 'missing', 'x')).status).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ShareX: the .sxcu uploads a file, and its URL, thumbnail, deletion and error paths resolve on the answers', async () => {
    const sxcu = JSON.parse(clientConfig('sharex', server.url, API_KEY).stdout) as Sxcu;
    expect([sxcu.RequestMethod, sxcu.Body, sxcu.FileFormName]).toEqual(['POST', 'MultipartFormData', 'source']);
    const send = async (headers: Record<string, string>) => {
      const form = new FormData();
      for (const [name, value] of Object.entries(sxcu.Arguments)) form.append(name, value);
      form.append(sxcu.FileFormName, new Blob([await makePng(30, 20)]), 'ShareX_capture.png');
      const response = await fetch(sxcu.RequestURL, { method: sxcu.RequestMethod, headers, body: form });
      return { status: response.status, answer: await response.json() };
    };
    const { status, answer } = await send(sxcu.Headers);
    expect(status).toBe(200);
    const url = resolveSharex(sxcu.URL, answer);
    expect(url).toMatch(/\/images\/\d{4}\/\d\d\/\d\d\/ShareX_capture\.png$/);
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(resolveSharex(sxcu.ThumbnailURL, answer))).status).toBe(200);
    const deletion = resolveSharex(sxcu.DeletionURL, answer);
    expect(deletion).toMatch(/\/image\/\w+\/delete\/\w+$/);
    // a wrong key: ShareX shows the service's message
    const refused = await send({ 'X-API-Key': 'wrong' });
    expect([refused.status, resolveSharex(sxcu.ErrorMessage, refused.answer)]).toEqual([401, 'Invalid API key.']);
    // and the deletion URL deletes, as ShareX's "delete" opens it
    expect((await fetch(deletion, { method: 'POST' })).status).toBe(200);
    expect((await fetch(url)).status).toBe(404);
  });

  it('PicGo: the web-uploader configuration uploads, and its JSON path finds the link', async () => {
    const config = JSON.parse(clientConfig('picgo', server.url, API_KEY).stdout) as {
      picBed: {
        uploader: string;
        'web-uploader': { url: string; paramName: string; jsonPath: string; customHeader: string; customBody: string };
      };
    };
    expect(config.picBed.uploader).toBe('web-uploader');
    const uploader = config.picBed['web-uploader'];
    // as the plugin does: headers from customHeader, form fields from customBody, the file under paramName
    const form = new FormData();
    for (const [name, value] of Object.entries(JSON.parse(uploader.customBody) as Record<string, string>))
      form.append(name, value);
    form.append(uploader.paramName, new Blob([await makePng(22, 22)]), 'picgo.png');
    const response = await fetch(uploader.url, {
      method: 'POST',
      headers: { 'User-Agent': 'PicGo', ...(JSON.parse(uploader.customHeader) as Record<string, string>) },
      body: form,
    });
    expect(response.status).toBe(200);
    let link: unknown = await response.json();
    for (const field of uploader.jsonPath.split('.')) link = (link as Record<string, unknown>)[field];
    expect(typeof link).toBe('string');
    expect((await fetch(String(link))).status).toBe(200);
  });

  it('Flameshot: the script uploads the capture, copies the link and prints it; a failure prints the message', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'flameshot-bin-'));
    try {
      const png = await makePng(40, 30);
      writeFileSync(join(bin, 'shot.png'), png);
      // stand-ins: flameshot writes a PNG to its output, xclip keeps what it is given
      writeFileSync(join(bin, 'flameshot'), `#!/bin/sh\ncat ${JSON.stringify(join(bin, 'shot.png'))}\n`);
      writeFileSync(join(bin, 'xclip'), `#!/bin/sh\ncat > ${JSON.stringify(join(bin, 'clipboard'))}\n`);
      writeFileSync(join(bin, 'wl-copy'), '#!/bin/sh\nexit 1\n');
      const script = join(bin, 'upload.sh');
      writeFileSync(script, clientConfig('flameshot', server.url, API_KEY).stdout);
      for (const file of ['flameshot', 'xclip', 'wl-copy', 'upload.sh']) chmodSync(join(bin, file), 0o755);
      const env = { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` };
      const link = execFileSync('sh', [script], { encoding: 'utf8', env }).trim();
      expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/images\/\d{4}\/\d\d\/\d\d\/screenshot\.png$/);
      expect(readFileSync(join(bin, 'clipboard'), 'utf8')).toBe(link);
      expect(Buffer.from(await (await fetch(link)).arrayBuffer()).length).toBeGreaterThan(0);
      const failed = spawnSync('sh', [script], { encoding: 'utf8', env: { ...env, IMAGE_UPLOAD_KEY: 'wrong' } });
      expect([failed.status, failed.stderr.trim()]).toEqual([1, 'upload failed: Invalid API key.']);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

/** Chevereto's user docs' ShareX configuration for ShareX before 9.4.0, as published (comments and all). */
const CHEVERETO_SHAREX_DOC = `{
    "Name": "Chevereto",
    "RequestType": "POST",
    "RequestURL": "http://mysite.com/api/1/upload", // edit this
    "FileFormName": "source",
    "Arguments": {
    "key": "your API key goes here", // edit this
    "format": "redirect",
    "source": "%input"
    },
    "ResponseType": "RedirectionURL",
    "RegexList": [],
    "URL": "",
    "ThumbnailURL": "",
    "DeletionURL": ""
}`;

describe("clients' own requests", () => {
  it("ShareX with Chevereto's published config: the file beside source=%input is stored, and the redirect shows it", async () => {
    // as an operator edits it: the two marked lines, then the comments gone (ShareX imports JSON)
    const config = JSON.parse(
      CHEVERETO_SHAREX_DOC.replace('http://mysite.com', server.url)
        .replace('your API key goes here', API_KEY)
        .replace(/\s*\/\/ edit this/g, ''),
    ) as { RequestType: string; RequestURL: string; FileFormName: string; Arguments: Record<string, string> };
    const png = await makePng(24, 16);
    // ShareX expands %input (its {input}) to nothing for an image; a client that does not expand it sends it as it is
    for (const expand of [(value: string) => value.replace(/%input|\{input\}/g, ''), (value: string) => value]) {
      for (const fileFirst of [false, true]) {
        const form = new FormData();
        if (fileFirst) form.append(config.FileFormName, new Blob([png]), 'ShareX_legacy.png');
        for (const [name, value] of Object.entries(config.Arguments)) form.append(name, expand(value));
        if (!fileFirst) form.append(config.FileFormName, new Blob([png]), 'ShareX_legacy.png');
        const response = await fetch(config.RequestURL, { method: config.RequestType, body: form, redirect: 'manual' });
        const viewer = response.headers.get('location') ?? '';
        expect([fileFirst, response.status, await response.text()]).toEqual([fileFirst, 302, '']);
        // ResponseType RedirectionURL: ShareX's link is the Location, the viewer page of the stored picture
        expect(viewer).toMatch(new RegExp(`^${server.url}/image/\\w+$`));
        const page = await fetch(viewer);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('ShareX_legacy');
      }
    }
  });

  it('ShareX (the generated .sxcu): a 429 resolves its error message, not an empty one', async () => {
    const limited = await startFreshLocalProcess('clients-flood', {
      API_KEY,
      FLOOD_LIMITS: '{"minute":1,"hour":0,"day":0,"week":0,"month":0}',
    });
    try {
      const sxcu = JSON.parse(clientConfig('sharex', limited.url, API_KEY).stdout) as Sxcu;
      // two different captures (a second copy of the first would be answered as the duplicate it is)
      const send = async (side: number) => {
        const form = new FormData();
        for (const [name, value] of Object.entries(sxcu.Arguments)) form.append(name, value);
        form.append(sxcu.FileFormName, new Blob([await makePng(side, side)]), 'ShareX_capture.png');
        const response = await fetch(sxcu.RequestURL, { method: sxcu.RequestMethod, headers: sxcu.Headers, body: form });
        return { status: response.status, answer: await response.json() };
      };
      expect((await send(12)).status).toBe(200);
      const flooded = await send(13);
      expect([flooded.status, resolveSharex(sxcu.ErrorMessage, flooded.answer)]).toEqual([
        429,
        'Flooding detected. You can only upload 1 image per minute',
      ]);
    } finally {
      await limited.stop();
    }
  });

  it("PicList's and PicGo's generic uploader: the file under its default name file, the link at data.url", async () => {
    const form = new FormData();
    form.append('key', API_KEY);
    form.append('file', new Blob([await makePng(20, 14)]), 'piclist.png');
    const response = await fetch(`${server.url}/api/1/upload`, { method: 'POST', body: form });
    const answer = (await response.json()) as { data: { url: string; id: string }; image?: unknown };
    expect([response.status, answer.image]).toEqual([200, undefined]);
    expect(answer.data.url).toMatch(/\/images\/\d{4}\/\d\d\/\d\d\/piclist\.png$/);
    expect((await fetch(answer.data.url)).status).toBe(200);
  });

  it("iShare: the file as image and no format, answered in imgBB's shape", async () => {
    const form = new FormData();
    form.append('key', API_KEY);
    form.append('image', new Blob([await makePng(18, 18)]), 'ishare.png');
    const response = await fetch(`${server.url}/api/1/upload`, { method: 'POST', body: form });
    const answer = (await response.json()) as { status: number; data: { url: string; id: string } };
    expect([response.status, answer.status]).toEqual([200, 200]);
    expect(answer.data.url).toMatch(/\/images\/\d{4}\/\d\d\/\d\d\/ishare\.png$/);
    expect((await fetch(answer.data.url)).status).toBe(200);
  });
});
