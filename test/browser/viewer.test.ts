import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import sharp from 'sharp';
import { makeAnimated, makeJpeg } from '../support/images';
import { runAdmin, startFreshLocalProcess, type LocalProcess } from '../support/local-process';

/**
 * The pages in a real browser: Debian's chromium (on PATH), driven by playwright-core, against `npm start`'s server.
 * `UPDATE_SCREENSHOTS=1 npm run test:browser` also writes the viewer's screenshots into docs/screenshots/.
 */
jest.setTimeout(90_000);

const API_KEY = 'browser-key-0123456789';
const HOSTILE_TITLE = `"><script>alert(1)</script><img src=x onerror=alert(2)> ' [x](javascript:alert(3))`;

let server: LocalProcess & { dataDir: string };
let base: string;
let browser: Browser;

interface UploadedImage {
  id_encoded: string;
  url: string;
  url_viewer: string;
  delete_url: string;
  title: string;
  width: number;
  height: number;
  thumb: { url: string };
  medium: { url: string; width: number; height: number; mime: string };
}

/** A picture worth a screenshot: a sunset over the sea, drawn as SVG; a star placed at random makes each one new. */
function sunset(): Promise<Buffer> {
  const star = { x: Math.floor(Math.random() * 1600), y: Math.floor(Math.random() * 300) };
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1600" height="1000">
<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#1d2b64"/><stop offset=".55" stop-color="#f8a170"/><stop offset=".62" stop-color="#ffd194"/></linearGradient>
<linearGradient id="sea" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#3a4f7a"/><stop offset="1" stop-color="#0f1a33"/></linearGradient></defs>
<rect width="1600" height="620" fill="url(#sky)"/><circle cx="800" cy="610" r="120" fill="#ffe3a3"/>
<rect y="610" width="1600" height="390" fill="url(#sea)"/><circle cx="${star.x}" cy="${star.y}" r="2" fill="#fff"/></svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 88 }).toBuffer();
}

async function upload(bytes: Buffer, filename: string, fields: Record<string, string> = {}): Promise<UploadedImage> {
  const form = new FormData();
  form.append('source', new Blob([bytes]), filename);
  form.append('key', API_KEY);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const response = await fetch(`${base}/api/1/upload?format=json`, { method: 'POST', body: form });
  expect(response.status).toBe(200);
  return ((await response.json()) as { image: UploadedImage }).image;
}

/** A fresh browser context that may use the clipboard on the service's origin. */
async function newContext(options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  return context;
}

/**
 * The page's own world, typed as far as these tests use it: the project compiles without the DOM's types, and a
 * function given to `page.evaluate` runs in the browser, where these names exist.
 */
interface PageWorld {
  navigator: { clipboard: { readText(): Promise<string>; writeText(text: string): Promise<void> } };
  document: {
    activeElement: { getAttribute(name: string): string | null } | null;
    body: unknown;
    documentElement: { scrollWidth: number };
  };
  getComputedStyle(element: unknown): { filter: string; backgroundColor: string; outlineStyle: string };
  innerWidth: number;
}
interface PageCanvas {
  width: number;
  height: number;
  getContext(kind: '2d'): {
    drawImage(image: unknown, x: number, y: number): void;
    getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray };
  };
}
interface PageImage {
  complete: boolean;
  naturalWidth: number;
  naturalHeight: number;
  decode(): Promise<void>;
}
/** An element of the page, as far as its attributes go. */
interface Attributed {
  getAttribute(name: string): string | null;
}
const clipboardText = (): Promise<string> => (globalThis as unknown as PageWorld).navigator.clipboard.readText();

/**
 * Fails the test on any dialog (an injected script's `alert`), page error, console error (a CSP violation is one) or
 * failed request; the browser's own ask for /favicon.ico (the service has none) aside.
 */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400 && !response.url().endsWith('/favicon.ico'))
      problems.push(`${response.status()} ${response.url()}`);
  });
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // failed loads are the response listener's to judge
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      problems.push(`console: ${message.text()}`);
  });
  return problems;
}

beforeAll(async () => {
  server = await startFreshLocalProcess('browser', { API_KEY });
  base = server.url;
  const executablePath = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('the viewer page in a browser', () => {
  it('shows the loaded image, its facts and preview tags, and copies every embed code to the clipboard', async () => {
    const image = await upload(await sunset(), 'sunset.jpg', { title: 'Sunset over the bay' });
    const context = await newContext();
    const page = await context.newPage();
    const problems = watch(page);
    const response = await page.goto(image.url_viewer);
    expect(response?.status()).toBe(200);

    // the picture first, from the file the window needs (at 1280 px, wider than the medium: the original), linking to it
    const picture = page.locator('.picture img');
    await picture.evaluate((img) => (img as unknown as PageImage).decode());
    expect(await picture.evaluate((img) => (img as unknown as { currentSrc: string }).currentSrc)).toBe(image.url);
    expect(await picture.getAttribute('alt')).toBe('Sunset over the bay');
    expect(await page.locator('.picture a').getAttribute('href')).toBe(image.url);
    expect(await page.locator('main h1').textContent()).toBe('Sunset over the bay');
    expect(await page.locator('.facts').textContent()).toContain(`${image.width} × ${image.height}`);
    expect(await page.locator('time').first().getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    // Download is the original, as a download
    const download = page.locator('#download');
    expect([await download.getAttribute('href'), await download.getAttribute('download')]).toEqual([image.url, '']);

    const meta = async (selector: string): Promise<string | null> => page.locator(selector).getAttribute('content');
    expect(await meta('meta[property="og:image"]')).toBe(image.medium.url);
    expect(await meta('meta[property="og:image:width"]')).toBe(String(image.medium.width));
    expect(await meta('meta[property="og:image:height"]')).toBe(String(image.medium.height));
    expect(await meta('meta[property="og:image:type"]')).toBe(image.medium.mime);
    expect(await meta('meta[property="og:title"]')).toBe('Sunset over the bay');
    expect(await meta('meta[property="og:url"]')).toBe(image.url_viewer);
    expect(await meta('meta[name="twitter:card"]')).toBe('summary_large_image');

    // one chooser of every code feeding one field and its one copy button (shown by the script the CSP allowed)
    const options = page.locator('#code-kind option');
    expect(await options.count()).toBe(13);
    expect(
      await page
        .locator('#code-kind optgroup')
        .evaluateAll((groups) => groups.map((group) => (group as unknown as Attributed).getAttribute('label'))),
    ).toEqual(['Links', 'HTML', 'BBCode', 'Markdown']);
    expect(await page.locator('#code').inputValue()).toBe(image.url_viewer);
    // the list of every code, what the page shows without script, gave way to the chooser
    expect(await page.locator('#code-list').isVisible()).toBe(false);
    const copy = page.locator('button[data-copy="code"]');
    for (let index = 0; index < 13; index += 1) {
      const value = (await options.nth(index).getAttribute('value')) ?? '';
      await page.selectOption('#code-kind', value);
      const code = await options.nth(index).getAttribute('data-code');
      expect(await page.locator('#code').inputValue()).toBe(code);
      await copy.click();
      await expect(page.evaluate(clipboardText)).resolves.toBe(code);
    }
    await page.selectOption('#code-kind', 'html-medium');
    expect(await page.locator('#code').inputValue()).toBe(
      `<a href="${image.url_viewer}"><img src="${image.medium.url}" alt="Sunset over the bay"></a>`,
    );
    // Copy link: the viewer page's address, from the keyboard (Tab from Download, Enter), with a focus ring
    await download.focus();
    await page.keyboard.press('Tab');
    expect(
      await page.evaluate(() => (globalThis as unknown as PageWorld).document.activeElement?.getAttribute('data-copy')),
    ).toBe('viewer-link');
    const ring = await page
      .locator('button[data-copy="viewer-link"]')
      .evaluate((button) => (globalThis as unknown as PageWorld).getComputedStyle(button).outlineStyle);
    expect(ring).toBe('solid');
    await page.evaluate(() => (globalThis as unknown as PageWorld).navigator.clipboard.writeText(''));
    await page.keyboard.press('Enter');
    await expect(page.evaluate(clipboardText)).resolves.toBe(image.url_viewer);
    expect(await page.locator('button[data-copy="viewer-link"]').textContent()).toBe('Copied');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('keeps a title of HTML, quotes and script inert in the page, its meta tags and its embed codes', async () => {
    const image = await upload(await sunset(), 'hostile.jpg', { title: HOSTILE_TITLE, description: HOSTILE_TITLE });
    const context = await newContext();
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto(image.url_viewer);
    expect(await page.title()).toBe(`${HOSTILE_TITLE} · ${new URL(base).host}`);
    expect(await page.locator('main h1').textContent()).toBe(HOSTILE_TITLE);
    expect(await page.locator('.description').textContent()).toBe(HOSTILE_TITLE);
    expect(await page.locator('.picture img').getAttribute('alt')).toBe(HOSTILE_TITLE);
    expect(await page.locator('meta[property="og:title"]').getAttribute('content')).toBe(HOSTILE_TITLE);
    // only the page's own script and images (the site's icon, the picture) made it into the document
    expect(await page.locator('script').count()).toBe(1);
    expect(await page.locator('img').count()).toBe(2);
    expect(await page.locator('[onerror]').count()).toBe(0);
    // the HTML code, pasted into another page, is the picture with the title as its alt text, nothing more
    await page.selectOption('#code-kind', 'html-full');
    const code = await page.locator('#code').inputValue();
    const pasted = await context.newPage();
    await pasted.setContent(`<div id="paste">${code}</div>`);
    expect(await pasted.locator('#paste img').getAttribute('alt')).toBe(HOSTILE_TITLE);
    expect(await pasted.locator('#paste *').count()).toBe(2);
    await page.selectOption('#code-kind', 'markdown-full');
    expect(await page.locator('#code').inputValue()).toContain(`](${image.url})](${image.url_viewer})`);
    await page.waitForTimeout(300); // an injected handler would have fired by now
    expect(problems).toEqual([]);
    await context.close();
  });

  it('blurs a sensitive image until it is clicked, and shows an animated one animated', async () => {
    const sensitive = await upload(await sunset(), 'private.jpg', { nsfw: '1', title: 'Private' });
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(sensitive.url_viewer);
    const picture = page.locator('.picture img');
    expect(await picture.evaluate((img) => (globalThis as unknown as PageWorld).getComputedStyle(img).filter)).toMatch(/blur/);
    expect(await page.locator('meta[property="og:image"]').count()).toBe(0);
    await page.locator('.sensitive').click();
    expect(await picture.evaluate((img) => (globalThis as unknown as PageWorld).getComputedStyle(img).filter)).toBe('none');

    const animated = await upload(await makeAnimated('gif', 240, 160, 6), 'loop.gif');
    await page.goto(animated.url_viewer);
    const shown = await page.locator('.picture img').getAttribute('src');
    expect(shown).toBe(animated.medium.url);
    const frames = await sharp(Buffer.from(await (await fetch(shown ?? '')).arrayBuffer()), { animated: true }).metadata();
    expect(frames.pages).toBe(6);
    expect(await page.locator('.facts').textContent()).toContain('(animated)');
    await context.close();
  });

  it('follows the system colour scheme and fits a phone', async () => {
    const image = await upload(await sunset(), 'scheme.jpg', { title: 'Sunset over the bay' });
    const background = async (colorScheme: 'light' | 'dark', width: number): Promise<{ color: string; overflow: boolean }> => {
      const context = await newContext({ colorScheme, viewport: { width, height: 800 } });
      const page = await context.newPage();
      await page.goto(image.url_viewer);
      const result = await page.evaluate(() => {
        const world = globalThis as unknown as PageWorld;
        return {
          color: world.getComputedStyle(world.document.body).backgroundColor,
          overflow: world.document.documentElement.scrollWidth > world.innerWidth,
        };
      });
      await context.close();
      return result;
    };
    const light = await background('light', 1280);
    const dark = await background('dark', 1280);
    expect(light.color).not.toBe(dark.color);
    expect((await background('light', 375)).overflow).toBe(false);
  });

  it('a 404 page for an unknown id', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const response = await page.goto(`${base}/image/nothere`);
    expect(response?.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('Not found');
    await context.close();
  });
});

describe('a phone photo turned by its EXIF orientation', () => {
  it('is stored as sent and shown upright, on the viewer page and as a direct link', async () => {
    // 600x400 as encoded, orientation 6: 400x600 as taken; its red marker is top-left as encoded, top-right upright
    const image = await upload(await makeJpeg(600, 400, { orientation: 6 }), 'portrait.jpg');
    expect([image.width, image.height]).toEqual([400, 600]);
    const context = await newContext();
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto(image.url_viewer);
    // the medium of a photo this narrow is the original's own bytes: the browser turns it
    const shown = page.locator('.picture img');
    expect(await shown.getAttribute('src')).toBe(image.medium.url);
    const upright = (selector: string) =>
      page.locator(selector).evaluate((img) => {
        const element = img as unknown as PageImage & { ownerDocument: { createElement(name: 'canvas'): PageCanvas } };
        const canvas = element.ownerDocument.createElement('canvas');
        canvas.width = element.naturalWidth;
        canvas.height = element.naturalHeight;
        const drawing = canvas.getContext('2d');
        drawing.drawImage(element, 0, 0);
        const red = (x: number, y: number) => drawing.getImageData(x, y, 1, 1).data[0] ?? 0;
        return {
          width: element.naturalWidth,
          height: element.naturalHeight,
          topRight: red(canvas.width - 5, 5),
          topLeft: red(5, 5),
        };
      });
    await shown.evaluate((img) => (img as unknown as PageImage).decode());
    const onViewer = await upright('.picture img');
    // upright: 2:3 (the file the window needs, its natural size as srcset scales it to the room it has)
    expect(onViewer.width / onViewer.height).toBeCloseTo(400 / 600, 2);
    expect([onViewer.topRight > 200, onViewer.topLeft < 100]).toEqual([true, true]);
    expect(problems).toEqual([]);
    // the direct link, opened on its own (the browser's image document styles itself inline, which the files' CSP
    // refuses: not watched)
    const direct = await context.newPage();
    await direct.goto(image.url);
    const size = await direct.locator('img').evaluate((img) => {
      const element = img as unknown as PageImage;
      return { width: element.naturalWidth, height: element.naturalHeight };
    });
    expect(size).toEqual({ width: 400, height: 600 });
    await context.close();
  });
});

describe('a report from the viewer page', () => {
  it('folds the form away, sends it without script, thanks the viewer, and reaches the operator', async () => {
    const image = await upload(await sunset(), 'reported.jpg', { title: 'Reported' });
    const context = await newContext();
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto(image.url_viewer);
    // folded: the reasons are not shown until the viewer opens it
    expect(await page.getByLabel('Spam or scam').isVisible()).toBe(false);
    await page.getByText('Report this image').click();
    await page.getByLabel('Spam or scam').check();
    await page.getByLabel("Anything the site's operator should know (optional)").fill('Posted on every forum today');
    await page.getByRole('button', { name: 'Send the report' }).click();
    await page.waitForLoadState();
    expect(await page.locator('h1').textContent()).toBe('Report sent');
    expect(await page.locator('main p').textContent()).toContain("sent to this site's operator");
    expect(problems).toEqual([]);
    const listed = runAdmin(['--data-dir', server.dataDir, 'reports', '--json']);
    expect(listed.status).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({
        idEncoded: image.id_encoded,
        count: 1,
        reasons: { spam: 1 },
        notes: ['Posted on every forum today'],
      }),
    ]);
    await context.close();
  });

  it("is taken from a browser that does not send Sec-Fetch-Site (Safari before 16.4), by its form's token", async () => {
    const image = await upload(await sunset(), 'old-browser.jpg', { title: 'Old browser' });
    const context = await newContext();
    const page = await context.newPage();
    // the network as such a browser sends the form: no Sec-Fetch-* headers, Origin null (no-referrer); the second
    // time, the token taken out of the form
    const statuses: number[] = [];
    let withoutToken = false;
    await page.route('**/report', async (route) => {
      const headers = Object.fromEntries(
        Object.entries(route.request().headers()).filter(([name]) => !name.startsWith('sec-fetch-')),
      );
      headers['origin'] = 'null';
      const form = new URLSearchParams(route.request().postData() ?? '');
      if (withoutToken) form.delete('token');
      const response = await route.fetch({ headers, postData: form.toString() });
      statuses.push(response.status());
      await route.fulfill({ response });
    });
    for (const stripped of [true, false]) {
      withoutToken = stripped;
      await page.goto(image.url_viewer);
      await page.getByText('Report this image').click();
      await page.getByLabel('Spam or scam').check();
      await page.getByRole('button', { name: 'Send the report' }).click();
      await page.waitForLoadState();
    }
    expect(statuses).toEqual([403, 200]);
    expect(await page.locator('h1').textContent()).toBe('Report sent');
    const listed = runAdmin(['--data-dir', server.dataDir, 'reports', '--json']);
    expect((JSON.parse(listed.stdout) as Array<{ idEncoded: string }>).map((one) => one.idEncoded)).toContain(image.id_encoded);
    await context.close();
  });
});

describe('the delete page in a browser', () => {
  it('shows what goes, deletes nothing on GET, deletes on confirm, and the viewer and files are gone', async () => {
    const image = await upload(await sunset(), 'goner.jpg', { title: 'Goner' });
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(image.delete_url);
    expect(await page.locator('h1').textContent()).toBe('Delete this image?');
    expect(await page.locator('.picture img').getAttribute('src')).toBe(image.thumb.url);
    expect(await page.locator('.picture img').evaluate((img) => (img as unknown as PageImage).naturalWidth)).toBeGreaterThan(0);
    // opening it deleted nothing
    expect((await fetch(image.url)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await page.waitForLoadState();
    expect(await page.locator('h1').textContent()).toBe('Deleted');
    expect((await page.goto(image.url_viewer))?.status()).toBe(404);
    for (const url of [image.url, image.medium.url, image.thumb.url]) expect((await fetch(url)).status).toBe(404);
    await context.close();
  });
});

describe('the home page and the API and apps page in a browser', () => {
  it('the home page is where one uploads; the API page shows the curl line and gives each app its file, with no key', async () => {
    const context = await newContext({ acceptDownloads: true });
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto(base);
    expect(await page.locator('.drop-title').textContent()).toBe('Drop pictures here, paste, or choose');
    await page.click('header nav >> text=API and apps');
    expect(page.url()).toBe(`${base}/apps`);
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).toContain(`curl -F "source=@photo.jpg" -F "key=YOUR_KEY" "${base}/api/1/upload?format=json"`);
    expect(text).not.toContain(API_KEY);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[href="/apps/sharex.sxcu"]')]);
    expect(download.suggestedFilename()).toBe('sharex.sxcu');
    const sxcu = JSON.parse(readFileSync(await download.path(), 'utf8')) as Record<string, unknown>;
    expect(sxcu).toMatchObject({ RequestURL: `${base}/api/1/upload`, FileFormName: 'source', URL: '{json:image.url}' });
    expect(JSON.stringify(sxcu)).not.toContain(API_KEY);
    await page.click('a.brand');
    expect(page.url()).toBe(`${base}/`);
    expect(problems).toEqual([]);
    await context.close();
  });
});

/** What axe-core finds wrong on the page (WCAG 2.1 A and AA, best practice): each violation's id and nodes. */
async function axeViolations(page: Page): Promise<Array<{ id: string; nodes: unknown[] }>> {
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const result = await page.evaluate<{ violations: Array<{ id: string; nodes: unknown[] }> }>(
    "axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice'] })",
  );
  return result.violations;
}

describe('the viewer as a product, at a computer and a phone', () => {
  for (const [width, height, expectedFile] of [
    [1280, 900, 'original'],
    [390, 844, 'medium'],
  ] as const) {
    it(`at ${width} px: the header, the picture as wide as the window allows from the file it needs, light, no sideways scroll, no axe violation`, async () => {
      const image = await upload(await sunset(), 'product.jpg', { title: 'Sunset over the bay' });
      const context = await newContext({ viewport: { width, height }, deviceScaleFactor: 1 });
      const page = await context.newPage();
      const problems = watch(page);
      // the picture's room is kept before it arrives: nothing below it jumps when it does
      const waiting = await newContext({ viewport: { width, height }, deviceScaleFactor: 1 });
      const early = await waiting.newPage();
      await early.route('**/images/**', (route) => route.abort());
      await early.goto(image.url_viewer);
      const room = await early.locator('.picture img').boundingBox();
      await waiting.close();
      // what the page weighs: its HTML, styles and scripts, the picture apart
      const weights: number[] = [];
      page.on('response', (response) => {
        if (response.request().resourceType() === 'document') void response.body().then((body) => weights.push(body.length));
      });
      await page.goto(image.url_viewer);
      // the header: the site's name linking home, the upload page and the API and apps page
      expect(await page.locator('header a.brand').getAttribute('href')).toBe('/');
      expect(await page.locator('header a.brand').textContent()).toBe(new URL(base).host);
      expect(
        await page
          .locator('header nav a')
          .evaluateAll((links) => links.map((link) => (link as unknown as Attributed).getAttribute('href'))),
      ).toEqual(['/', '/apps']);
      const picture = page.locator('.picture img');
      await picture.evaluate((img) => (img as unknown as PageImage).decode());
      const shown = await picture.evaluate((img) => {
        const element = img as unknown as { currentSrc: string; getBoundingClientRect(): { width: number; height: number } };
        const box = element.getBoundingClientRect();
        return { src: element.currentSrc, width: box.width, height: box.height };
      });
      // as large as the window allows (the column, its width less the margins, 80% of its height), up to its own size
      const allowed = Math.min(1100 - 32, width - 32, (0.8 * height * image.width) / image.height, image.width);
      expect(Math.abs(shown.width - allowed)).toBeLessThanOrEqual(1);
      expect([Math.round(room?.width ?? 0), Math.round(room?.height ?? 0)]).toEqual([
        Math.round(shown.width),
        Math.round(shown.height),
      ]);
      expect(shown.src).toBe(expectedFile === 'original' ? image.url : image.medium.url);
      expect(await page.locator('#download').isVisible()).toBe(true);
      expect(await page.locator('#code-kind').isVisible()).toBe(true);
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      expect(weights.reduce((sum, bytes) => sum + bytes, 0)).toBeLessThan(60_000);
      expect(weights).toHaveLength(1);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  it('gives a phone the medium at any screen density, and never shows a picture wider than itself', async () => {
    const image = await upload(await sunset(), 'dense.jpg', { title: 'Dense' });
    const shownOn = async (url: string, width: number, deviceScaleFactor: number) => {
      const context = await newContext({ viewport: { width, height: 844 }, deviceScaleFactor });
      const page = await context.newPage();
      await page.goto(url);
      const picture = page.locator('.picture img');
      await picture.evaluate((img) => (img as unknown as PageImage).decode());
      const shown = await picture.evaluate((img) => {
        const element = img as unknown as { currentSrc: string; getBoundingClientRect(): { width: number } };
        return { src: element.currentSrc, width: Math.round(element.getBoundingClientRect().width) };
      });
      await context.close();
      return shown;
    };
    // a 390 px phone at 3x: the 500 px medium, not the 1600 px original
    expect((await shownOn(image.url_viewer, 390, 3)).src).toBe(image.medium.url);
    // a picture between the medium and the column (700 px) at a computer: its own width, not enlarged to the column
    const mid = await upload(
      await sharp(await sunset())
        .resize({ width: 700 })
        .jpeg()
        .toBuffer(),
      'mid.jpg',
    );
    expect(await shownOn(mid.url_viewer, 1280, 1)).toEqual({ src: mid.url, width: 700 });
  });

  it('reads the sensitive cover in one or two lines, however small the picture, and works without script', async () => {
    const small = await upload(await makeJpeg(90, 60), 'tiny.jpg', { nsfw: '1', title: 'Tiny' });
    for (const [javaScriptEnabled, width] of [
      [true, 390],
      [false, 390],
      [true, 1280],
    ] as const) {
      const context = await browser.newContext({ viewport: { width, height: 844 }, javaScriptEnabled });
      const page = await context.newPage();
      await page.goto(small.url_viewer);
      const lines = await page.locator('.veil').evaluate((veil) => {
        const world = globalThis as unknown as { getComputedStyle(element: unknown): { lineHeight: string } };
        const range = (
          veil as unknown as {
            ownerDocument: {
              createRange(): { selectNodeContents(node: unknown): void; getClientRects(): ArrayLike<{ top: number }> };
            };
          }
        ).ownerDocument.createRange();
        range.selectNodeContents(veil);
        const tops = new Set(Array.from(range.getClientRects()).map((rect) => Math.round(rect.top)));
        return { lines: tops.size, lineHeight: world.getComputedStyle(veil).lineHeight };
      });
      expect([javaScriptEnabled, width, lines.lines]).toEqual([javaScriptEnabled, width, 2]);
      const picture = page.locator('.picture img');
      expect(await picture.evaluate((img) => (globalThis as unknown as PageWorld).getComputedStyle(img).filter)).toMatch(/blur/);
      await page.locator('.sensitive').click();
      expect(await picture.evaluate((img) => (globalThis as unknown as PageWorld).getComputedStyle(img).filter)).toBe('none');
      if (!javaScriptEnabled) {
        // without script: no chooser, every code in a field of its own, Download still there
        expect(await page.locator('#chooser').isVisible()).toBe(false);
        expect(await page.locator('#html-medium').inputValue()).toContain(small.url_viewer);
        expect(await page.locator('#download').isVisible()).toBe(true);
      }
      await context.close();
    }
  });
});

describe('screenshots', () => {
  it('of the viewer at desktop and phone width, light and dark (written to docs/ with UPDATE_SCREENSHOTS=1)', async () => {
    const image = await upload(await sunset(), 'sunset.jpg', {
      title: 'Sunset over the bay',
      description: 'From the pier, just before the lights came on.',
    });
    const folder = process.env['UPDATE_SCREENSHOTS']
      ? join(__dirname, '..', '..', 'docs', 'screenshots')
      : mkdtempSync(join(tmpdir(), 'screenshots-'));
    mkdirSync(folder, { recursive: true });
    for (const [name, viewport, colorScheme] of [
      ['viewer-desktop.png', { width: 1280, height: 900 }, 'light'],
      ['viewer-desktop-dark.png', { width: 1280, height: 900 }, 'dark'],
      ['viewer-phone.png', { width: 390, height: 844 }, 'dark'],
      ['viewer-phone-light.png', { width: 390, height: 844 }, 'light'],
    ] as const) {
      const context = await newContext({ viewport, colorScheme, deviceScaleFactor: 1 });
      const page = await context.newPage();
      await page.goto(image.url_viewer);
      await page.locator('.picture img').evaluate((img) => (img as unknown as PageImage).decode());
      const png = await page.screenshot({ path: join(folder, name), fullPage: false });
      expect((await sharp(png).metadata()).width).toBe(viewport.width);
      await context.close();
    }
    if (!process.env['UPDATE_SCREENSHOTS']) rmSync(folder, { recursive: true, force: true });
  });
});
