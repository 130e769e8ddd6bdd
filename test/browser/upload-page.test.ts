import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import sharp from 'sharp';
import { runAdmin, startFreshLocalProcess, type LocalProcess } from '../support/local-process';

/**
 * The upload page (`/upload`) in Debian's chromium against `npm start`: every way to give a picture, the two-step
 * path of a large file with its CORS preflight to the store, the key's refusal and a retry, the share target through
 * the service worker, a phone's width, and an accessibility check (axe-core). Functions given to the page are strings:
 * the project compiles without the DOM's types. `UPDATE_SCREENSHOTS=1` also writes docs/screenshots/upload-phone.png and upload-desktop.png.
 */
jest.setTimeout(120_000);

const API_KEY = 'browser-upload-key-0123456789';
const ROOT = join(__dirname, '..', '..');

let server: LocalProcess & { dataDir: string };
let base: string;
let browser: Browser;
let pictures: Server;
let executablePath: string;
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
let picturesUrl: string;

/** A PNG of one colour and a few random pixels, so that no two are duplicates. */
async function png(width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3, 90);
  for (let i = 0; i < 30; i += 1) pixels[Math.floor(Math.random() * pixels.length)] = Math.floor(Math.random() * 256);
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

/** A PNG of noise, not compressed: `megabytes` of file. */
async function largePng(megabytes: number): Promise<Buffer> {
  const width = 3000;
  const height = Math.ceil((megabytes * 1_000_000) / (width * 3));
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

/** Fails the test on a page error, a console error (a CSP violation is one) or a dialog. */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // a refused upload's answer is the test's to judge
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      problems.push(`console: ${message.text()}`);
  });
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return problems;
}

async function openPage(
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext(options);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  const problems = watch(page);
  expect((await page.goto(`${base}/upload`))?.status()).toBe(200);
  return { context, page, problems };
}

/** Reads until `done` says so (or the time is up), then answers the last reading. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The rows' status lines, once each says uploaded or failed. (Read from here: a function the page would evaluate for
 * `waitForFunction` is refused by the page's CSP, as it should be.)
 */
async function settledStatuses(page: Page, rows: number): Promise<string[]> {
  // Each line's text and whether it failed are read in one step: read apart, a line could fail between the two reads
  // and be counted failed while its text still said it was on its way.
  type Line = { text: string; failed: boolean };
  const read = (): Promise<Line[]> =>
    page.locator('.row-status').evaluateAll((elements) =>
      elements.map((element) => {
        const line = element as unknown as { textContent: string | null; classList: { contains(name: string): boolean } };
        return { text: line.textContent ?? '', failed: line.classList.contains('failed') };
      }),
    );
  const settled = (lines: Line[]): boolean =>
    lines.length === rows && lines.every((line) => line.text === 'Uploaded' || line.failed);
  const lines = await until(read, settled);
  // a refusal the page did not mark as failed never settles: said here, not passed on the texts alone
  if (!settled(lines)) throw new Error(`the rows did not settle: ${JSON.stringify(lines)}`);
  return lines.map((line) => line.text);
}

/** The values of a row's link fields: direct, viewer, delete. */
async function linksOf(page: Page, row: number): Promise<{ direct: string; viewer: string; remove: string }> {
  const value = (name: string): Promise<string> => page.locator(`#r${row}-${name}`).inputValue();
  return { direct: await value('direct'), viewer: await value('viewer'), remove: await value('delete') };
}

async function status(url: string): Promise<number> {
  return (await fetch(url)).status;
}

/** How many images are stored, as `npm run admin -- list` sees them. */
function storedCount(): number {
  const listed = runAdmin(['--data-dir', server.dataDir, 'list', '--json']);
  expect(listed.status).toBe(0);
  return (JSON.parse(listed.stdout) as unknown[]).length;
}

/** What these tests read of an `<img>` in the page. */
interface PageImage {
  decode(): Promise<void>;
  naturalWidth: number;
}

beforeAll(async () => {
  // the request log on (the suites' default is silent), to check what it holds
  server = await startFreshLocalProcess('upload-page', {
    API_KEY,
    URL_FETCH_ALLOW_HOSTS: '127.0.0.1',
    POWERTOOLS_LOG_LEVEL: 'INFO',
  });
  base = server.url;
  const served = await png(120, 80);
  const flaky = await png(110, 70);
  let flakyAsked = 0;
  // `/flaky.png` fails its first fetch, as a source that is down a moment does
  pictures = createServer((request, response) => {
    if (request.url === '/flaky.png' && (flakyAsked += 1) === 1) response.writeHead(503).end();
    else response.writeHead(200, { 'Content-Type': 'image/png' }).end(request.url === '/flaky.png' ? flaky : served);
  });
  await new Promise<void>((done) => pictures.listen(0, '127.0.0.1', done));
  picturesUrl = `http://127.0.0.1:${(pictures.address() as AddressInfo).port}/harbour.png`;
  executablePath = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  pictures?.close();
  await server?.stop();
});

describe('the upload page in a browser', () => {
  it('uploads several files chosen at once with the options of the batch, and shows links that work and codes to copy', async () => {
    const { context, page, problems } = await openPage();
    await page.fill('#api-key', API_KEY);
    await page.setInputFiles('#files', [
      { name: 'one.png', mimeType: 'image/png', buffer: await png(64, 48) },
      { name: 'two.png', mimeType: 'image/png', buffer: await png(48, 64) },
      { name: 'three.png', mimeType: 'image/png', buffer: await png(50, 50) },
      { name: 'four.png', mimeType: 'image/png', buffer: await png(40, 30) },
    ]);
    expect(await page.locator('#announce').textContent()).toBe('4 pictures ready: press Upload.');
    await page.click('.options summary');
    await page.fill('#title', 'Harbour at dusk');
    await page.selectOption('#expiration', 'P1D');
    // how many rows are on their way at once, at every change of the list (sampled in the page)
    await page.evaluate(
      "window.most = 0; new MutationObserver(() => { const going = [...document.querySelectorAll('.row-status')].filter((s) => /^(Uploading|Sent)/.test(s.textContent)).length; window.most = Math.max(window.most, going); }).observe(document.getElementById('rows'), { subtree: true, childList: true, characterData: true })",
    );
    await page.click('#upload-button');
    expect(await settledStatuses(page, 4)).toEqual(['Uploaded', 'Uploaded', 'Uploaded', 'Uploaded']);
    expect(await page.evaluate('window.most')).toBe(3);
    for (const row of [1, 2, 3, 4]) {
      const { direct, viewer, remove } = await linksOf(page, row);
      expect([await status(direct), await status(viewer), await status(remove)]).toEqual([200, 200, 200]);
      expect(await (await fetch(viewer)).text()).toContain('<h1>Harbour at dusk</h1>');
      const thumb = page.locator(`#row-${row} .thumb img`);
      await expect(
        thumb.evaluate((img) => (img as unknown as PageImage).decode().then(() => (img as unknown as PageImage).naturalWidth)),
      ).resolves.toBeGreaterThan(0);
    }
    // the embed codes are the viewer page's, and every copy button copies its field
    const { direct, viewer } = await linksOf(page, 1);
    await page.click('#row-1 .embed summary');
    expect(await page.locator('#r1-bbcode-full').inputValue()).toBe(`[url=${viewer}][img]${direct}[/img][/url]`);
    await page.click('button[aria-label="Copy BBCode, full size of Harbour at dusk"] >> nth=0');
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(`[url=${viewer}][img]${direct}[/img][/url]`);
    // the batch told in one line, and every link of it copied at once in the format chosen
    expect(await page.locator('#announce').textContent()).toBe('4 of 4 uploaded.');
    expect(await page.locator('#summary').textContent()).toBe('4 of 4 uploaded');
    await page.selectOption('#copy-all-kind', 'link-viewer');
    await page.click('#copy-all');
    const viewers = await Promise.all([1, 2, 3, 4].map(async (row) => (await linksOf(page, row)).viewer));
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(viewers.join('\n'));
    await page.selectOption('#copy-all-kind', 'markdown-thumb');
    await page.click('#copy-all');
    const copied = String(await page.evaluate('navigator.clipboard.readText()')).split('\n');
    expect(copied).toHaveLength(4);
    expect(copied[0]).toBe(`[![Harbour at dusk](${await page.locator('#row-1 .thumb img').getAttribute('src')})](${viewers[0]})`);
    expect(problems).toEqual([]);
    await context.close();
  });

  for (const width of [1280, 390]) {
    it(`at ${width} px: a drop area first, each picture previewed from its file before it is sent and removable, a count of the batch`, async () => {
      const { context, page, problems } = await openPage({ viewport: { width, height: 900 } });
      // the drop area says what it takes; the native file field is hidden behind the styled button, still reachable
      expect(await page.locator('.drop-title').textContent()).toBe('Drop pictures here, paste, or choose');
      expect(await page.locator('label.choose').isVisible()).toBe(true);
      expect(
        await page.locator('#files').evaluate((input) => (input as unknown as { offsetWidth: number }).offsetWidth),
      ).toBeLessThanOrEqual(1);
      await page.locator('#files').focus();
      expect(await page.evaluate('document.activeElement.id')).toBe('files');
      const drop = await page.locator('#drop').boundingBox();
      expect(drop?.width).toBeGreaterThan(width * 0.7);
      await page.fill('#api-key', API_KEY);
      await page.setInputFiles('#files', [
        { name: 'keep.png', mimeType: 'image/png', buffer: await png(80, 60) },
        { name: 'drop-me.png', mimeType: 'image/png', buffer: await png(60, 80) },
        { name: 'also.png', mimeType: 'image/png', buffer: await png(70, 70) },
      ]);
      // a preview of each, drawn from the file itself before anything is sent
      const previews = page.locator('.row .preview');
      expect(await previews.count()).toBe(3);
      const sizes = await previews.evaluateAll((images) =>
        Promise.all(
          images.map(async (img) => {
            const image = img as unknown as PageImage & { src: string; naturalHeight: number };
            await image.decode();
            return [image.src.slice(0, 5), image.naturalWidth, image.naturalHeight];
          }),
        ),
      );
      expect(sizes).toEqual([
        ['blob:', 80, 60],
        ['blob:', 60, 80],
        ['blob:', 70, 70],
      ]);
      expect(await page.locator('#summary').textContent()).toBe('0 of 3 uploaded');
      await page.click('button[aria-label="Remove drop-me.png"]');
      expect(await page.locator('.row-name').allTextContents()).toEqual([
        expect.stringMatching(/^keep\.png /),
        expect.stringMatching(/^also\.png /),
      ]);
      expect(await page.locator('#summary').textContent()).toBe('0 of 2 uploaded');
      const before = storedCount();
      await page.click('#upload-button');
      expect(await settledStatuses(page, 2)).toEqual(['Uploaded', 'Uploaded']);
      expect(storedCount()).toBe(before + 2);
      expect(await page.locator('#announce').textContent()).toBe('2 of 2 uploaded.');
      // an uploaded picture is not removed from the list by mistake: its button is gone
      expect(await page.locator('.row .remove:visible').count()).toBe(0);
      expect(await page.locator('#copy-all').isVisible()).toBe(true);
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      // with previews, results and the batch's line shown: no accessibility violation at this width either
      await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
      const axe = await page.evaluate<{ violations: Array<{ id: string; impact: string }> }>(
        "axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice'] })",
      );
      expect(axe.violations.map((violation) => `${violation.impact} ${violation.id}`)).toEqual([]);
      if (process.env['UPDATE_SCREENSHOTS'] && width === 1280)
        await page.screenshot({ path: join(ROOT, 'docs', 'screenshots', 'upload-desktop.png'), fullPage: true });
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  it("sends a file over the gateway's limit by the two-step upload, its progress bar moving with the PUT", async () => {
    const { context, page, problems } = await openPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    // 20 MB/s: the PUT takes a second or so, long enough to watch its progress
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 20_000_000,
    });
    const requests: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'GET') return;
      const url = new URL(request.url());
      const where = url.origin === base ? url.pathname : url.pathname.includes('/staging/') ? "the store's staging/" : url.href;
      requests.push(`${request.method()} ${where}`);
    });
    const large = await largePng(20);
    expect(large.length).toBeGreaterThan(20_000_000);
    await page.fill('#api-key', API_KEY);
    // from a file: a buffer would cross the protocol in base64, for seconds
    const folder = mkdtempSync(join(tmpdir(), 'upload-page-large-'));
    writeFileSync(join(folder, 'large.png'), large);
    await page.setInputFiles('#files', join(folder, 'large.png'));
    // every value the bar takes, sampled in the page
    await page.evaluate(
      "window.seen = []; setInterval(() => { const bar = document.querySelector('.row progress'); if (bar && bar.hasAttribute('value')) window.seen.push(bar.value); }, 20)",
    );
    await page.click('#upload-button');
    expect(await settledStatuses(page, 1)).toEqual(['Uploaded']);
    const seen = await page.evaluate<number[]>('window.seen');
    const between = [...new Set(seen.filter((value) => value > 0 && value < 1))];
    expect(between.length).toBeGreaterThanOrEqual(3);
    expect(between).toEqual([...between].sort((a, b) => a - b));
    expect(requests).toEqual(['POST /api/1/upload-url', "PUT the store's staging/", 'POST /api/1/upload']);
    const { direct } = await linksOf(page, 1);
    const stored = await fetch(direct);
    expect([stored.status, (await stored.arrayBuffer()).byteLength]).toEqual([200, large.length]);
    rmSync(folder, { recursive: true, force: true });
    expect(problems).toEqual([]);
    await context.close();
  });

  it('takes a dropped file, a pasted screenshot and the URL of a picture', async () => {
    const { context, page, problems } = await openPage();
    await page.fill('#api-key', API_KEY);
    const dropped = await png(70, 40);
    const transfer = await page.evaluateHandle(
      `(() => { const t = new DataTransfer(); t.items.add(new File([Uint8Array.from(atob('${dropped.toString('base64')}'), (c) => c.charCodeAt(0))], 'dropped.png', { type: 'image/png' })); return t; })()`,
    );
    await page.dispatchEvent('.drop', 'dragover', { dataTransfer: transfer });
    expect(await page.evaluate("document.body.classList.contains('dragging')")).toBe(true);
    await page.dispatchEvent('.drop', 'drop', { dataTransfer: transfer });
    // a link dragged from another page: the page takes the drop (the browser would open the link instead)
    expect(
      await page.evaluate(
        `(() => { const t = new DataTransfer(); t.setData('text/uri-list', '${picturesUrl}'); const over = new DragEvent('dragover', { dataTransfer: t, bubbles: true, cancelable: true }); const taken = !document.body.dispatchEvent(over); document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: t, bubbles: true, cancelable: true })); return taken; })()`,
      ),
    ).toBe(true);
    // a screenshot on the clipboard, pasted with the keyboard outside any field
    const screenshot = await png(90, 60);
    await page.evaluate(
      `navigator.clipboard.write([new ClipboardItem({ 'image/png': new Blob([Uint8Array.from(atob('${screenshot.toString('base64')}'), (c) => c.charCodeAt(0))], { type: 'image/png' }) })])`,
    );
    await page.locator('h1').click();
    await page.keyboard.press('Control+V');
    await page.fill('#source-url', picturesUrl);
    await page.press('#source-url', 'Enter');
    expect(await page.locator('.row-name').allTextContents()).toEqual([
      expect.stringMatching(/^dropped\.png /),
      picturesUrl,
      expect.stringMatching(/^image\.png /),
      picturesUrl,
    ]);
    await page.click('#upload-button');
    expect(await settledStatuses(page, 4)).toEqual(['Uploaded', 'Uploaded', 'Uploaded', 'Uploaded']);
    const sizes = [];
    for (const row of [1, 3, 4]) {
      const { direct } = await linksOf(page, row);
      sizes.push(
        await sharp(Buffer.from(await (await fetch(direct)).arrayBuffer()))
          .metadata()
          .then(({ width, height }) => `${width}x${height}`),
      );
    }
    expect(sizes).toEqual(['70x40', '90x60', '120x80']);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('says a wrong key in plain words and uploads nothing; once the key is right, one press sends every file', async () => {
    const before = storedCount();
    const { context, page, problems } = await openPage();
    await page.fill('#api-key', 'not-the-key');
    // more files than go at once: those sent are refused, the others wait; all are kept for the corrected key
    const names = ['first', 'second', 'third', 'fourth', 'fifth'];
    await page.setInputFiles(
      '#files',
      await Promise.all(
        names.map(async (name, i) => ({ name: `${name}.png`, mimeType: 'image/png', buffer: await png(30 + i, 30) })),
      ),
    );
    await page.click('#upload-button');
    const refused = 'The API key was refused ("Invalid API key."): check the key, then retry.';
    expect(await settledStatuses(page, 5)).toEqual(names.map(() => refused));
    expect(await page.locator('#announce').textContent()).toBe(`Not uploaded: ${refused}`);
    expect(await page.evaluate('document.activeElement.id')).toBe('api-key');
    expect(storedCount()).toBe(before);
    await page.fill('#api-key', API_KEY);
    await page.click('#upload-button');
    expect(await settledStatuses(page, 5)).toEqual(names.map(() => 'Uploaded'));
    expect(await page.locator('.row-status.failed').count()).toBe(0);
    expect(storedCount()).toBe(before + 5);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('retries a failed file alone, without sending the others again', async () => {
    const { context, page, problems } = await openPage();
    await page.fill('#api-key', API_KEY);
    await page.setInputFiles('#files', [{ name: 'steady.png', mimeType: 'image/png', buffer: await png(44, 33) }]);
    const flakyUrl = new URL('/flaky.png', picturesUrl).href;
    await page.fill('#source-url', flakyUrl);
    await page.click('#upload-button');
    expect(await settledStatuses(page, 2)).toEqual(['Uploaded', 'Refused: Unable to fetch the source URL.']);
    const before = storedCount();
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') sent.push(request.postData() ?? '');
    });
    await page.click('#row-2 .retry');
    await until(
      () => page.locator('#row-2 .row-status').textContent(),
      (text) => text === 'Uploaded',
    );
    expect(sent).toEqual([expect.stringContaining(encodeURIComponent(flakyUrl))]);
    expect(await page.locator('.row-status.failed').count()).toBe(0);
    expect(await page.locator('#row-2 .retry').isVisible()).toBe(false);
    expect(storedCount()).toBe(before + 1);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('keeps the key in this browser only when asked, forgets it on Forget, and never in a cookie or the address', async () => {
    const { context, page } = await openPage();
    await page.fill('#api-key', API_KEY);
    await page.click('#upload-button');
    await page.reload();
    expect(await page.locator('#api-key').inputValue()).toBe('');
    await page.fill('#api-key', API_KEY);
    await page.check('#remember');
    await page.click('#upload-button');
    await page.reload();
    expect(await page.locator('#api-key').inputValue()).toBe(API_KEY);
    expect(await page.locator('#remember').isChecked()).toBe(true);
    await page.click('#forget');
    expect(await page.locator('#api-key').inputValue()).toBe('');
    expect(await page.evaluate('localStorage.length')).toBe(0);
    await page.reload();
    expect(await page.locator('#api-key').inputValue()).toBe('');
    expect(await context.cookies()).toEqual([]);
    expect(page.url()).toBe(`${base}/upload`);
    await context.close();
  });

  it('installs as a web app whose share target hands pictures to the page, through its service worker', async () => {
    // a profile of its own: Chrome installs no web app from an incognito context (what newContext makes)
    const profile = mkdtempSync(join(tmpdir(), 'upload-page-profile-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath, args: CHROMIUM_ARGS });
    const page = await context.newPage();
    const problems = watch(page);
    expect((await page.goto(`${base}/upload`))?.status()).toBe(200);
    const cdp = await context.newCDPSession(page);
    const manifest = (await cdp.send('Page.getAppManifest')) as { url: string; errors: unknown[]; data?: string };
    expect([manifest.url, manifest.errors]).toEqual([`${base}/upload.webmanifest`, []]);
    const installability = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: unknown[] };
    expect(installability.installabilityErrors).toEqual([]);
    await page.fill('#api-key', API_KEY);
    await page.check('#remember');
    await page.click('#upload-button');
    await page.evaluate('navigator.serviceWorker.ready.then(() => true)');
    // what Android does on "Share": a multipart POST to the share target, here from a form of the page's origin
    await page.evaluate(
      "(() => { const form = document.createElement('form'); form.method = 'post'; form.enctype = 'multipart/form-data'; form.action = '/upload/share'; form.id = 'share'; const files = document.createElement('input'); files.type = 'file'; files.name = 'pictures'; files.multiple = true; const text = document.createElement('input'); text.name = 'text'; text.value = 'Look: " +
        picturesUrl +
        "'; form.append(files, text); document.body.append(form); })()",
    );
    await page.setInputFiles('#share input[type=file]', [
      { name: 'shared-1.png', mimeType: 'image/png', buffer: await png(33, 22) },
      { name: 'shared-2.png', mimeType: 'image/png', buffer: await png(22, 33) },
    ]);
    await Promise.all([page.waitForURL(`${base}/upload`), page.evaluate("document.getElementById('share').submit()")]);
    await until(
      () => page.locator('.row').count(),
      (rows) => rows === 3,
    );
    expect(await page.locator('.row-name').allTextContents()).toEqual([
      expect.stringMatching(/^shared-1\.png /),
      expect.stringMatching(/^shared-2\.png /),
      picturesUrl,
    ]);
    // listed, not sent, and marked: any site can post to a share target, so each goes only by its own button, and
    // no focus lands on anything that uploads (the typing of someone on the site that posted would press it)
    const held = 'Not uploaded: shared from another app';
    expect(await page.locator('.row-status').allTextContents()).toEqual([held, held, held]);
    expect(await page.locator('.row .row-shared').count()).toBe(3);
    expect(await page.locator('#announce').textContent()).toBe(
      '3 shared from another app: check each, and upload the ones that are yours with their own button.',
    );
    expect(await page.evaluate('document.activeElement === document.body')).toBe(true);
    expect(await page.locator('#api-key').inputValue()).toBe(API_KEY);
    for (const key of ['Enter', ' ']) await page.keyboard.press(key);
    // the keyboard's first stop is the header's link home, nothing that uploads (its Enter would leave the page)
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.className')).toBe('brand');
    // nor does Upload take them, the shared URL included: it is shown to be looked at, not fetched
    await page.click('#upload-button');
    expect(await page.locator('#announce').textContent()).toBe(
      'A shared picture goes only by its own button: press "It is mine: upload it" on each that is yours.',
    );
    expect(await page.locator('.row-status').allTextContents()).toEqual([held, held, held]);
    for (const row of [1, 2, 3]) await page.click(`#row-${row} .confirm`);
    expect(await settledStatuses(page, 3)).toEqual(['Uploaded', 'Uploaded', 'Uploaded']);
    expect(await page.locator('.row .confirm').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });

  it('works on a phone 360 px wide and from the keyboard, and passes axe-core without a violation', async () => {
    const { context, page, problems } = await openPage({
      viewport: { width: 360, height: 780 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    await page.fill('#api-key', API_KEY);
    await page.setInputFiles('#files', [{ name: 'phone.png', mimeType: 'image/png', buffer: await png(200, 150) }]);
    await page.click('#upload-button');
    expect(await settledStatuses(page, 1)).toEqual(['Uploaded']);
    if (process.env['UPDATE_SCREENSHOTS'])
      await page.screenshot({ path: join(ROOT, 'docs', 'screenshots', 'upload-phone.png'), fullPage: true });
    await page.click('#row-1 .embed summary');
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    // the keyboard's order: the key, remember, the files, the URL and its button, the options, Upload
    await page.focus('#api-key');
    const order = [];
    for (let step = 0; step < 6; step += 1) {
      await page.keyboard.press('Tab');
      order.push(await page.evaluate('document.activeElement.id || document.activeElement.tagName.toLowerCase()'));
    }
    expect(order).toEqual(['remember', 'files', 'source-url', 'add-url', 'summary', 'upload-button']);
    await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
    const results = await page.evaluate<{
      violations: Array<{ id: string; impact: string; nodes: unknown[] }>;
      passes: unknown[];
    }>("axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice'] })");
    expect(results.passes.length).toBeGreaterThan(10);
    expect(results.violations.map((violation) => `${violation.impact} ${violation.id}`)).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('wrote nothing of the key into the server log', () => {
    // the start banner shows the key to the operator at the terminal; the request log lines never do
    const logLines = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(20);
    expect(logLines.filter((line) => line.includes(API_KEY) || line.includes('not-the-key'))).toEqual([]);
  });
});
