import { makePng } from '../support/images';
import { startFreshLocalProcess, type LocalProcess } from '../support/local-process';

/**
 * Two people behind one address (`docs/rules.md`, "Duplicates"), through `npm start`: the second, holding only the
 * first's file URL, sends the same bytes again asking them marked sensitive and gone in five minutes. The first's image
 * is neither; the second's hold, and its delete link, are the second's own.
 */
jest.setTimeout(60_000);

const API_KEY = 'shared-address-key-0123456789';
let server: LocalProcess;

beforeAll(async () => {
  server = await startFreshLocalProcess('shared-address', { API_KEY, FLOOD_LIMITS: '{}' });
});

afterAll(() => server?.stop());

async function upload(bytes: Buffer, fields: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const form = new FormData();
  form.set('source', new Blob([new Uint8Array(bytes)]), 'picture.png');
  form.set('key', API_KEY);
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  const response = await fetch(`${server.url}/api/1/upload`, { method: 'POST', body: form });
  expect(response.status).toBe(200);
  return ((await response.json()) as { image: Record<string, unknown> }).image;
}

describe('a duplicate from another person behind the same address, through npm start', () => {
  it("neither marks nor shortens the first person's image, and deletes only its own upload", async () => {
    // a PNG without metadata is stored as sent: its file, fetched from the first person's link, is the same bytes
    const first = await upload(await makePng(48, 32));
    const stored = Buffer.from(await (await fetch(String(first['url']))).arrayBuffer());
    const second = await upload(stored, { expiration: 'PT5M', nsfw: '1' });
    expect(second).toMatchObject({ id_encoded: first['id_encoded'], nsfw: '0', expiration_date_gmt: null });
    const viewer = await (await fetch(String(first['url_viewer']))).text();
    expect(viewer).not.toContain('class="sensitive"');
    // the second person's link takes its own upload away; the first person's image stays
    const deleted = await fetch(String(second['delete_url']), { method: 'POST', headers: { Accept: 'application/json' } });
    expect(await deleted.json()).toMatchObject({ success: { message: 'upload deleted; the image stays for its other upload' } });
    expect((await fetch(String(first['url_viewer']))).status).toBe(200);
    expect((await fetch(String(first['url']))).status).toBe(200);
  });
});
