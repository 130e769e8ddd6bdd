import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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

    // the picture has loaded (its natural size is the medium rendition's) and links to the original
    const picture = page.locator('.picture img');
    await expect(
      picture.evaluate((img) => (img as unknown as PageImage).complete && (img as unknown as PageImage).naturalWidth),
    ).resolves.toBe(image.medium.width);
    expect(await picture.getAttribute('alt')).toBe('Sunset over the bay');
    expect(await page.locator('.picture a').getAttribute('href')).toBe(image.url);
    expect(await page.locator('h1').textContent()).toBe('Sunset over the bay');
    expect(await page.locator('.facts').textContent()).toContain(`${image.width} × ${image.height}`);
    expect(await page.locator('time').first().getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);

    const meta = async (selector: string): Promise<string | null> => page.locator(selector).getAttribute('content');
    expect(await meta('meta[property="og:image"]')).toBe(image.medium.url);
    expect(await meta('meta[property="og:image:width"]')).toBe(String(image.medium.width));
    expect(await meta('meta[property="og:image:height"]')).toBe(String(image.medium.height));
    expect(await meta('meta[property="og:image:type"]')).toBe(image.medium.mime);
    expect(await meta('meta[property="og:title"]')).toBe('Sunset over the bay');
    expect(await meta('meta[property="og:url"]')).toBe(image.url_viewer);
    expect(await meta('meta[name="twitter:card"]')).toBe('summary_large_image');

    // every copy button (shown by the script, which the CSP allowed) puts its field's code on the clipboard
    const buttons = page.locator('button[data-copy]');
    expect(await buttons.count()).toBe(13);
    for (let index = 0; index < 13; index += 1) {
      const button = buttons.nth(index);
      const field = page.locator(`#${await button.getAttribute('data-copy')}`);
      await button.click();
      await expect(page.evaluate(clipboardText)).resolves.toBe(await field.inputValue());
      expect(await button.textContent()).toBe('Copied');
    }
    expect(await page.locator('#html-medium').inputValue()).toBe(
      `<a href="${image.url_viewer}"><img src="${image.medium.url}" alt="Sunset over the bay"></a>`,
    );
    // and from the keyboard: Tab to a button, Enter
    await page.locator('#link-viewer').focus();
    await page.keyboard.press('Tab');
    expect(
      await page.evaluate(() => (globalThis as unknown as PageWorld).document.activeElement?.getAttribute('data-copy')),
    ).toBe('link-viewer');
    // the button the keyboard is on shows a focus ring
    const ring = await page
      .locator('button[data-copy="link-viewer"]')
      .evaluate((button) => (globalThis as unknown as PageWorld).getComputedStyle(button).outlineStyle);
    expect(ring).toBe('solid');
    await page.evaluate(() => (globalThis as unknown as PageWorld).navigator.clipboard.writeText(''));
    await page.keyboard.press('Enter');
    await expect(page.evaluate(clipboardText)).resolves.toBe(image.url_viewer);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('keeps a title of HTML, quotes and script inert in the page, its meta tags and its embed codes', async () => {
    const image = await upload(await sunset(), 'hostile.jpg', { title: HOSTILE_TITLE, description: HOSTILE_TITLE });
    const context = await newContext();
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto(image.url_viewer);
    expect(await page.title()).toBe(HOSTILE_TITLE);
    expect(await page.locator('h1').textContent()).toBe(HOSTILE_TITLE);
    expect(await page.locator('.description').textContent()).toBe(HOSTILE_TITLE);
    expect(await page.locator('.picture img').getAttribute('alt')).toBe(HOSTILE_TITLE);
    expect(await page.locator('meta[property="og:title"]').getAttribute('content')).toBe(HOSTILE_TITLE);
    // only the page's own script and image made it into the document
    expect(await page.locator('script').count()).toBe(1);
    expect(await page.locator('img').count()).toBe(1);
    expect(await page.locator('[onerror]').count()).toBe(0);
    // the HTML code, pasted into another page, is the picture with the title as its alt text, nothing more
    const code = await page.locator('#html-full').inputValue();
    const pasted = await context.newPage();
    await pasted.setContent(`<div id="paste">${code}</div>`);
    expect(await pasted.locator('#paste img').getAttribute('alt')).toBe(HOSTILE_TITLE);
    expect(await pasted.locator('#paste *').count()).toBe(2);
    expect(await page.locator('#markdown-full').inputValue()).toContain(`](${image.url})](${image.url_viewer})`);
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
    expect(onViewer).toMatchObject({ width: 400, height: 600 });
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

describe('the home page in a browser', () => {
  it('says how to upload and shows no key', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(base);
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).toContain(`curl -F "source=@photo.jpg" -F "key=YOUR_KEY" "${base}/api/1/upload?format=json"`);
    expect(text).toContain('"FileFormName": "source"');
    expect(text).not.toContain(API_KEY);
    await context.close();
  });
});

describe('screenshots', () => {
  it('of the viewer at desktop and phone width (written to docs/ with UPDATE_SCREENSHOTS=1)', async () => {
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
      ['viewer-phone.png', { width: 390, height: 844 }, 'dark'],
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
