import { makePng } from '../support/images';
import { startFreshLocalProcess, type LocalProcess } from '../support/local-process';

/**
 * Uploads a page of another site would make each visitor's browser send (an `<img src>`, an auto-submitted form, a
 * script's fetch), with the headers browsers add to them, against `npm start`; and the same uploads as tools send
 * them. The operator allows one origin (`CORS_ORIGINS`).
 */
jest.setTimeout(60_000);

const API_KEY = 'cross-site-key-0123456789';
const ALLOWED = 'https://app.example';
let server: LocalProcess;

beforeAll(async () => {
  server = await startFreshLocalProcess('cross-site', { API_KEY, CORS_ORIGINS: ALLOWED });
});

afterAll(() => server?.stop());

/** What a browser adds to a request a page of `origin` makes (`Origin` only where browsers send it: not on `<img>`). */
function fromPage(site: 'cross-site' | 'same-site' | 'same-origin', origin?: string): Record<string, string> {
  return { 'Sec-Fetch-Site': site, 'Sec-Fetch-Mode': 'no-cors', ...(origin ? { Origin: origin } : {}) };
}

async function envelope(response: Response): Promise<{ status: number; code: number; message: string }> {
  const body = (await response.json()) as { error?: { code: number; message: string } };
  return { status: response.status, code: body.error?.code ?? 0, message: body.error?.message ?? '' };
}

async function multipart(seed: number, headers: Record<string, string> = {}): Promise<Response> {
  const form = new FormData();
  form.append('key', API_KEY);
  form.append('source', new Blob([await makePng(20 + seed, 16)]), `page${seed}.png`);
  return fetch(`${server.url}/api/1/upload`, { method: 'POST', headers, body: form });
}

const refusal = {
  status: 403,
  code: 152,
  message:
    'Cross-site upload refused: web pages of other sites may not upload here (the operator allows origins with CORS_ORIGINS)',
};

describe('uploads made by pages of other sites', () => {
  it('refuses an <img src> to the upload URL (GET, cross-site, no Origin)', async () => {
    const base64 = (await makePng(9, 9)).toString('base64');
    const url = `${server.url}/api/1/upload?key=${API_KEY}&source=${encodeURIComponent(base64)}`;
    expect(await envelope(await fetch(url, { headers: fromPage('cross-site') }))).toEqual(refusal);
    // the same link typed into the address bar (Sec-Fetch-Site: none), or from a tool, uploads
    expect((await fetch(url, { headers: { 'Sec-Fetch-Site': 'none' } })).status).toBe(200);
  });

  it('refuses an auto-submitted form or a fetch from another site or a sibling subdomain (POST)', async () => {
    expect(await envelope(await multipart(1, fromPage('cross-site', 'https://evil.example')))).toEqual(refusal);
    expect(await envelope(await multipart(2, fromPage('same-site', 'https://other.img.example')))).toEqual(refusal);
    // a browser that sends no Sec-Fetch-Site still sends the page's Origin on a POST
    expect(await envelope(await multipart(3, { Origin: 'https://evil.example' }))).toEqual(refusal);
    expect(await envelope(await multipart(4, { Origin: 'null' }))).toEqual(refusal);
  });

  it('refuses both steps of a two-step upload from another site', async () => {
    const step1 = (headers: Record<string, string>) =>
      fetch(`${server.url}/api/1/upload-url`, {
        method: 'POST',
        headers: { 'X-API-Key': API_KEY, ...headers },
        body: new URLSearchParams({ size: '100', filename: 'a.png' }),
      });
    expect(await envelope(await step1(fromPage('cross-site', 'https://evil.example')))).toEqual(refusal);
    const ticket = ((await (await step1({})).json()) as { upload: { token: string } }).upload;
    const finish = await fetch(`${server.url}/api/1/upload`, {
      method: 'POST',
      headers: { 'X-API-Key': API_KEY, ...fromPage('cross-site', 'https://evil.example') },
      body: new URLSearchParams({ upload_token: ticket.token }),
    });
    expect(await envelope(finish)).toEqual(refusal);
  });

  it("lets pages of an origin the operator allows upload, with CORS headers, and the service's own pages", async () => {
    const allowed = await multipart(5, fromPage('cross-site', ALLOWED));
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect((await multipart(6, fromPage('same-origin', server.url))).status).toBe(200);
  });

  it('lets tools upload as they do: curl, ShareX, PicGo and the npm clients send neither header', async () => {
    expect((await multipart(7)).status).toBe(200);
  });
});
