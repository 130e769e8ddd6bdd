import type { APIGatewayProxyResult } from 'aws-lambda';
import sharp from 'sharp';
import { createTestService, PUBLIC_URL, standInEndpoints, type TestService } from '../support/test-service';
import { PAGE_STYLE_SOURCE } from '../../functions/http/page-shell';
import { cspHash } from '../../functions/http/csp';
import { directUploadMaxBytes } from '../../functions/http/upload-page';
import { maxBodyBytes } from '../../functions/http/edge-contract';
import { UPLOAD_PAGE_SCRIPT, UPLOAD_WORKER_SCRIPT } from '../../functions/http/generated/browser-assets';

/**
 * The upload page and its files through the handler (the browser suite drives the page itself): what each answers,
 * with which headers, and what the page's CSP allows.
 */
let service: TestService;

beforeAll(async () => {
  service = await createTestService();
});

const get = (path: string, method = 'GET', body?: FormData): Promise<APIGatewayProxyResult> =>
  service.send(new Request(`${PUBLIC_URL}${path}`, { method, ...(body === undefined ? {} : { body }) }));

function directives(csp: string): Map<string, string> {
  return new Map(
    csp.split(';').map((part) => {
      const [name = '', ...values] = part.trim().split(' ');
      return [name, values.join(' ')];
    }),
  );
}

describe('the upload page', () => {
  it('answers the page with its script under its hash, the key field, and the gateway limit for one request', async () => {
    const page = await get('/upload');
    expect(page.statusCode).toBe(200);
    expect(page.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain(`<script>${UPLOAD_PAGE_SCRIPT}</script>`);
    expect(page.body).toMatch(
      /<label for="api-key">API key<\/label>\s*<input type="password" id="api-key" name="key" autocomplete="current-password"/,
    );
    // one file without the script (the API takes one a request); the script makes it take several
    expect(page.body).toContain('<input type="file" id="files" name="source" accept="image/*">');
    expect(page.body).toContain('<link rel="manifest" href="/upload.webmanifest">');
    expect(page.body).toContain(`data-direct-max="${directUploadMaxBytes()}"`);
    expect(directUploadMaxBytes()).toBeLessThan(maxBodyBytes('multipart/form-data'));
    // without its script the form still uploads one file, the key in the body, never in the address
    expect(page.body).toContain(
      '<form id="upload-form" method="post" action="/api/1/upload?format=redirect" enctype="multipart/form-data">',
    );
    expect((await get('/upload/')).statusCode).toBe(200);
  });

  it("sends a CSP that allows its own script, this site and the staging store's origin, its worker and manifest, and no framing", async () => {
    const page = await get('/upload');
    const csp = directives(String(page.headers?.['Content-Security-Policy']));
    const staging = new URL(standInEndpoints().s3).origin;
    expect(Object.fromEntries(csp)).toEqual({
      'default-src': "'none'",
      // the previews of the pictures chosen are the files themselves
      'img-src': `${PUBLIC_URL} blob:`,
      'style-src': PAGE_STYLE_SOURCE,
      'script-src': cspHash(UPLOAD_PAGE_SCRIPT),
      'connect-src': `'self' ${staging}`,
      'worker-src': `${PUBLIC_URL}/upload-worker.js`,
      'manifest-src': "'self'",
      'form-action': "'self'",
      'base-uri': "'none'",
      'frame-ancestors': "'none'",
    });
    expect(page.headers?.['X-Frame-Options']).toBe('DENY');
    expect(page.headers?.['Referrer-Policy']).toBe('no-referrer');
  });

  it('serves a manifest that installs the page and takes shared pictures, with icons of the sizes it names', async () => {
    const answer = await get('/upload.webmanifest');
    expect([answer.statusCode, answer.headers?.['Content-Type']]).toEqual([200, 'application/manifest+json; charset=utf-8']);
    const manifest = JSON.parse(answer.body) as {
      start_url: string;
      scope: string;
      display: string;
      icons: Array<{ src: string; sizes: string; type: string }>;
      share_target: {
        action: string;
        method: string;
        enctype: string;
        params: { files: Array<{ name: string; accept: string[] }> };
      };
    };
    expect([manifest.start_url, manifest.scope, manifest.display]).toEqual(['/upload', '/upload', 'standalone']);
    expect(manifest.share_target).toMatchObject({ action: '/upload/share', method: 'POST', enctype: 'multipart/form-data' });
    expect(manifest.share_target.params.files).toEqual([
      expect.objectContaining({ name: 'pictures', accept: expect.arrayContaining(['image/*']) as unknown }),
    ]);
    for (const icon of manifest.icons) {
      const file = await get(icon.src);
      expect([file.statusCode, file.headers?.['Content-Type'], file.isBase64Encoded]).toEqual([200, icon.type, true]);
      const { width, height, format } = await sharp(Buffer.from(file.body, 'base64')).metadata();
      expect(`${width}x${height}`).toBe(icon.sizes);
      expect(format).toBe('png');
    }
    expect(manifest.icons.map((icon) => icon.sizes)).toEqual(expect.arrayContaining(['192x192', '512x512']));
  });

  it('serves the service worker as JavaScript that may fetch nothing itself', async () => {
    const worker = await get('/upload-worker.js');
    expect(worker.statusCode).toBe(200);
    expect(worker.headers?.['Content-Type']).toBe('text/javascript; charset=utf-8');
    expect(worker.headers?.['Content-Security-Policy']).toBe("default-src 'none'");
    expect(worker.body).toBe(UPLOAD_WORKER_SCRIPT);
  });

  it('sends a share the worker did not take back to the page, which says so; takes in nothing', async () => {
    const form = new FormData();
    form.append('pictures', new Blob([Buffer.from('not kept')], { type: 'image/png' }), 'a.png');
    const shared = await get('/upload/share', 'POST', form);
    expect([shared.statusCode, shared.headers?.['Location']]).toEqual([303, '/upload?shared=missed']);
    expect((await get('/upload/share')).headers?.['Location']).toBe('/upload');
    expect(await service.objectKeys()).toEqual([]);
  });

  it('answers 405 to a method its paths do not take, and 404 for other files under its name', async () => {
    for (const path of ['/upload', '/upload-worker.js', '/upload.webmanifest', '/upload-icon-192.png']) {
      const refused = await get(path, 'POST');
      expect([path, refused.statusCode, refused.headers?.['Allow']]).toEqual([path, 405, 'GET, HEAD']);
    }
    for (const path of [
      '/upload.js',
      '/upload-icon-64.png',
      '/upload-icon-.png',
      '/upload-icon-192.png.png',
      '/upload-icon-0192.png',
      '/upload-icon-192.0.png',
      '/upload-icon-1.92e2.png',
      '/upload/other',
    ])
      expect([path, (await get(path)).statusCode]).toEqual([path, 404]);
  });

  it('is the home page, whose header links it and the API and apps page', async () => {
    const home = await get('/');
    expect(home.statusCode).toBe(200);
    expect(home.body).toBe((await get('/upload')).body);
    expect(home.body).toContain('<p class="drop-title scripted-only">Drop pictures here, paste, or choose</p>');
    expect(home.body).toContain(
      '<nav aria-label="Site"><a href="/" aria-current="page">Upload</a><a href="/apps">API and apps</a></nav>',
    );
  });
});
