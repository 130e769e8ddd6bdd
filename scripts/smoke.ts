import { createHash, randomBytes } from 'node:crypto';
import sharp from 'sharp';

/** How long a deleted file may still come from the CDN's caches while its invalidation runs. */
const INVALIDATION_WAIT_MS = 180_000;

/**
 * `npm run smoke -- BASE_URL KEY [DIRECT_API_URL]`: after a deploy (or against `npm start`), uploads one freshly made
 * image and checks every URL of the answer: the original (bytes, size, md5, type, nosniff), both renditions, the
 * viewer page, and the delete link (GET deletes nothing, POST deletes), then that the deleted file answers 404. Then
 * what the edge answers: `HEAD /`, `/api`, an unknown path, request bodies of 5, 8 and 11 MB (413 in the envelope), and,
 * given the stack's `DirectApiUrl` output, that a call around CloudFront is refused. Exits 1 at the first thing that
 * is wrong.
 */
const USAGE = 'usage: npm run smoke -- BASE_URL KEY [DIRECT_API_URL]   (exit codes: 0 passed, 1 failed, 2 usage)';

/** A command line it cannot run: exit 2, as every `npm run` tool. */
class UsageError extends Error {}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--help' || args[0] === '-h') return void process.stdout.write(`${USAGE}\n`);
  // no options but --help: a key that begins with - is a key
  const [baseArg, key, directArg, ...extra] = args;
  if (!baseArg || !key) throw new UsageError(`missing ${baseArg ? 'KEY' : 'BASE_URL and KEY'}`);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra.join(' ')}`);
  if (!/^https?:\/\//i.test(baseArg)) throw new UsageError(`BASE_URL is not an http(s) URL: ${baseArg}`);
  const base = baseArg.replace(/\/+$/, '');
  const step = (text: string): void => void process.stdout.write(`ok  ${text}\n`);
  const check = (condition: boolean, what: string): void => {
    if (!condition) throw new Error(what);
  };

  // random pixels: a new image every run, never answered as a duplicate
  const png = await sharp(randomBytes(64 * 48 * 3), { raw: { width: 64, height: 48, channels: 3 } })
    .png()
    .toBuffer();
  const form = new FormData();
  form.append('source', new Blob([png], { type: 'image/png' }), 'smoke-test.png');
  form.append('key', key);
  form.append('format', 'json');
  const upload = await fetch(`${base}/api/1/upload`, { method: 'POST', body: form });
  const body = (await upload.json()) as { status_code?: number; error?: { message: string }; image?: Record<string, unknown> };
  check(
    upload.status === 200 && body.status_code === 200 && body.image !== undefined,
    `upload answered ${upload.status}: ${JSON.stringify(body.error ?? body)}`,
  );
  const image = body.image as {
    url: string;
    url_viewer: string;
    display_url: string;
    delete_url: string;
    size: number;
    md5: string;
    mime: string;
    thumb: { url: string; size: number };
    medium: { url: string; size: number };
  };
  step(`upload: ${image.url}`);

  const original = await fetch(image.url);
  const bytes = new Uint8Array(await original.arrayBuffer());
  check(original.status === 200, `original answered ${original.status}`);
  check(
    original.headers.get('content-type') === image.mime,
    `original served as ${original.headers.get('content-type')}, not ${image.mime}`,
  );
  check(original.headers.get('x-content-type-options') === 'nosniff', 'original served without X-Content-Type-Options: nosniff');
  check(bytes.length === image.size, `original is ${bytes.length} bytes, the answer says ${image.size}`);
  check(createHash('md5').update(bytes).digest('hex') === image.md5, 'original md5 differs from the answer');
  step(`original: ${bytes.length} bytes, md5 and type as answered`);

  for (const [name, url] of [
    ['thumb', image.thumb.url],
    ['medium', image.medium.url],
    ['display_url', image.display_url],
  ] as const) {
    const response = await fetch(url);
    check(
      response.status === 200 && (response.headers.get('content-type') ?? '').startsWith('image/'),
      `${name} answered ${response.status}`,
    );
    await response.arrayBuffer();
    step(`${name}: ${url}`);
  }

  const viewer = await fetch(image.url_viewer);
  check(
    viewer.status === 200 && (viewer.headers.get('content-type') ?? '').startsWith('text/html'),
    `viewer answered ${viewer.status}`,
  );
  step(`viewer: ${image.url_viewer}`);

  const confirm = await fetch(image.delete_url);
  check(confirm.status === 200, `delete page answered ${confirm.status}`);
  check((await fetch(image.url_viewer)).status === 200, 'opening the delete link deleted the image');
  const deleted = await fetch(image.delete_url, { method: 'POST', headers: { Accept: 'application/json' } });
  check(deleted.status === 200, `delete answered ${deleted.status}`);
  check((await fetch(image.url_viewer)).status === 404, 'the viewer still shows the deleted image');
  step('delete link: GET shows a page, POST deletes');

  // the CDN may serve its cached copy until the invalidation is done (usually well under a minute)
  const gone = Date.now() + INVALIDATION_WAIT_MS;
  for (;;) {
    const file = await fetch(image.url);
    await file.arrayBuffer();
    if (file.status === 404) break;
    check(Date.now() < gone, `the deleted original still answers ${file.status} after ${INVALIDATION_WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
  }
  step('deleted file: 404');

  const home = await fetch(`${base}/`, { method: 'HEAD' });
  check(home.status === 200, `HEAD / answered ${home.status}`);
  const api = await fetch(`${base}/api`);
  const apiBody = (await api.json()) as { error?: { code?: number } };
  check(api.status === 404 && apiBody.error?.code === 110, `/api answered ${api.status} ${JSON.stringify(apiBody)}`);
  const unknown = await fetch(`${base}/no/such/page`);
  await unknown.arrayBuffer();
  check(unknown.status === 404, `an unknown path answered ${unknown.status}`);
  step('HEAD / 200, /api 404 (code 110), an unknown path 404');

  for (const megabytes of [5, 8, 11]) {
    const big = new FormData();
    big.append('key', key);
    big.append('source', new Blob([randomBytes(megabytes * 1_000_000)], { type: 'image/jpeg' }), 'big.jpg');
    const response = await fetch(`${base}/api/1/upload`, { method: 'POST', body: big });
    const text = await response.text();
    let parsed: { status_code?: number; error?: { code?: number; message?: string } } = {};
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      // not the envelope: reported below
    }
    check(
      response.status === 413 && parsed.status_code === 413 && parsed.error?.code === 400,
      `a ${megabytes} MB request answered ${response.status}: ${text.slice(0, 200)}`,
    );
    step(`${megabytes} MB request: 413, ${parsed.error?.message ?? ''}`);
  }

  if (directArg) {
    const direct = await fetch(`${directArg.replace(/\/+$/, '')}/api/1/upload?key=${encodeURIComponent(key)}`);
    const directText = await direct.text();
    check(direct.status === 403, `a direct call to ${directArg} answered ${direct.status}: ${directText.slice(0, 200)}`);
    step('direct call around CloudFront: 403');
  }
  process.stdout.write('smoke test passed\n');
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
  process.stderr.write(`FAIL ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
