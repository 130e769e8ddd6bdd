import type { APIGatewayProxyResult } from 'aws-lambda';
import { UPLOAD_PAGE, UPLOAD_PATH } from '../core/image/links';
import { cspHash } from './csp';
import { codeName, embedCodes } from './embed-codes';
import { escapeHtml } from './html';
import { maxBodyBytes } from './edge-contract';
import { UPLOAD_ICONS, UPLOAD_PAGE_SCRIPT, UPLOAD_WORKER_SCRIPT } from './generated/browser-assets';
import { htmlPage, type Site } from './page-shell';
import { pageResponse, respond } from './responses';

/**
 * The upload page (`/upload`, `docs/pages.md`): a form the page's script (`functions/browser/upload-page.ts`) drives,
 * which without script still uploads one file as a plain form; and what makes it an installable web app that other
 * apps can share pictures to: its manifest, icons and service worker.
 */

/** Room a form's other fields and boundaries may take beside the file under the gateway's limit of one request. */
const FORM_ROOM_BYTES = 100_000;

/** The largest file the page sends in one request; larger ones go by the two-step upload. */
export function directUploadMaxBytes(): number {
  return maxBodyBytes('multipart/form-data') - FORM_ROOM_BYTES;
}

/** What `expiration` the page offers (Chevereto's choices, in ISO-8601 durations: `docs/api.md`, section 2). */
const EXPIRATIONS: ReadonlyArray<[string, string]> = [
  ['', 'Never'],
  ['PT5M', 'After 5 minutes'],
  ['PT30M', 'After 30 minutes'],
  ['PT1H', 'After an hour'],
  ['PT6H', 'After 6 hours'],
  ['P1D', 'After a day'],
  ['P1W', 'After a week'],
  ['P2W', 'After 2 weeks'],
  ['P1M', 'After a month'],
  ['P3M', 'After 3 months'],
  ['P6M', 'After 6 months'],
  ['P1Y', 'After a year'],
];

const THEME_COLOR = '#0a58ca';

/** The links and codes "Copy all" offers, one a picture (the viewer page's, `embed-codes.ts`): their ids and names. */
function codeOptions(): string {
  const any = { title: '', viewerUrl: '', original: { url: '' }, medium: { url: '' }, thumb: { url: '' } };
  return embedCodes(any)
    .flatMap((group) => group.codes.map((code) => `<option value="${code.id}">${escapeHtml(codeName(group, code))}</option>`))
    .join('');
}

const iconPath = (size: number): string => `${UPLOAD_PAGE.iconPrefix}${size}.png`;

/** The page's script's CSP source, and the page itself: both the same for every request of a site, made once. */
const UPLOAD_SCRIPT_SOURCE = cspHash(UPLOAD_PAGE_SCRIPT);
let madePage: { site: string; html: string } | undefined;

export function uploadPage(site: Site): string {
  if (madePage?.site !== site.name) madePage = { site: site.name, html: makeUploadPage(site) };
  return madePage.html;
}

function makeUploadPage(site: Site): string {
  const expirations = EXPIRATIONS.map(([value, label]) => `<option value="${value}">${label}</option>`).join('');
  return htmlPage({
    site,
    title: 'Upload pictures',
    place: 'upload',
    head: `<link rel="manifest" href="${UPLOAD_PAGE.manifest}">
<meta name="theme-color" content="${THEME_COLOR}">
`,
    script: UPLOAD_PAGE_SCRIPT,
    main: `<div id="upload" data-direct-max="${directUploadMaxBytes()}">
<h1>Upload pictures</h1>
<form id="upload-form" method="post" action="${UPLOAD_PATH}?format=redirect" enctype="multipart/form-data">
<div class="field">
<input type="text" name="username" autocomplete="username" value="api-key" hidden>
<label for="api-key">API key</label>
<input type="password" id="api-key" name="key" autocomplete="current-password" spellcheck="false" required>
<div class="inline"><label class="check"><input type="checkbox" id="remember"> Remember on this device</label><button type="button" id="forget" hidden>Forget</button></div>
</div>
<div class="field drop" id="drop">
<p class="drop-title scripted-only">Drop pictures here, paste, or choose</p>
<input type="file" id="files" name="source" accept="image/*">
<label for="files" class="button primary choose">Choose pictures</label>
<p class="muted scripted-only">A screenshot pastes with Ctrl+V (⌘V). Each picture shows here before it is sent, and can be removed.</p>
</div>
<div class="field">
<label for="source-url">Or the address of a picture on the web</label>
<div class="inline"><input type="url" id="source-url" inputmode="url" placeholder="https://"><button type="button" id="add-url">Add</button></div>
</div>
<details class="options"><summary>Title, description, sensitive, expiry (for every picture of this upload)</summary>
<div class="field"><label for="title">Title</label><input type="text" id="title" name="title" maxlength="100"></div>
<div class="field"><label for="description">Description</label><textarea id="description" name="description" rows="2" maxlength="5000"></textarea></div>
<div class="field"><label class="check"><input type="checkbox" id="nsfw" name="nsfw" value="1"> Sensitive: blurred on its page until clicked</label></div>
<div class="field"><label for="expiration">Delete automatically</label><select id="expiration" name="expiration">${expirations}</select></div>
</details>
<button type="submit" id="upload-button" class="primary">Upload</button>
</form>
<p id="announce" class="announce" role="status" aria-live="polite"></p>
<h2>Uploads</h2>
<p id="summary" class="summary"></p>
<div id="copy-all-bar" class="inline" hidden>
<select id="copy-all-kind" aria-label="Which link or code Copy all copies">${codeOptions()}</select>
<button type="button" id="copy-all">Copy all</button>
</div>
<ol id="rows" class="rows"></ol>
<p class="muted">The key goes with each upload and nowhere else; ticked, "Remember on this device" keeps it in this browser's storage until "Forget".</p>
</div>`,
  });
}

/**
 * The upload page's CSP: the pages' own, with its script's hash, requests to this site and to the store that takes
 * two-step uploads (`stagingOrigin`), and its service worker and manifest.
 */
export function uploadPageResponse(site: Site, publicUrl: string, stagingOrigin: string | undefined): APIGatewayProxyResult {
  const origin = new URL(publicUrl).origin;
  return pageResponse(200, uploadPage(site), publicUrl, {
    script: UPLOAD_SCRIPT_SOURCE,
    // previews of the pictures chosen, from the files themselves
    img: 'blob:',
    connect: ["'self'", ...(stagingOrigin && stagingOrigin !== origin ? [stagingOrigin] : [])].join(' '),
    worker: `${origin}${UPLOAD_PAGE.worker}`,
    manifest: "'self'",
  });
}

/** The web app manifest: installable, opened at the upload page, and a share target for pictures. */
export function uploadManifest(): Record<string, unknown> {
  return {
    id: UPLOAD_PAGE.page,
    name: 'Image upload',
    short_name: 'Upload',
    description: 'Upload pictures to this image host, or share them to it from other apps.',
    start_url: UPLOAD_PAGE.page,
    scope: UPLOAD_PAGE.page,
    display: 'standalone',
    background_color: '#f6f6f4',
    theme_color: THEME_COLOR,
    icons: [
      ...Object.keys(UPLOAD_ICONS).map((size) => ({
        src: iconPath(Number(size)),
        sizes: `${size}x${size}`,
        type: 'image/png',
        purpose: 'any',
      })),
      { src: iconPath(512), sizes: '512x512', type: 'image/png', purpose: 'maskable' },
    ],
    share_target: {
      action: UPLOAD_PAGE.share,
      method: 'POST',
      enctype: 'multipart/form-data',
      params: {
        title: 'title',
        text: 'text',
        url: 'url',
        files: [
          { name: 'pictures', accept: ['image/*', '.jpg', '.jpeg', '.png', '.gif', '.webp', '.avif', '.heic', '.heif', '.bmp'] },
        ],
      },
    },
  };
}

/** The page's other files, by path; undefined for any other path. */
export function uploadAsset(path: string): APIGatewayProxyResult | undefined {
  const cache = { 'Cache-Control': 'no-cache' };
  if (path === UPLOAD_PAGE.manifest)
    return respond(200, 'application/manifest+json; charset=utf-8', JSON.stringify(uploadManifest()), cache);
  if (path === UPLOAD_PAGE.worker)
    // the worker fetches nothing itself: no source for it
    return respond(200, 'text/javascript; charset=utf-8', UPLOAD_WORKER_SCRIPT, {
      ...cache,
      'Content-Security-Policy': "default-src 'none'",
    });
  // each icon at one path: `/upload-icon-192.png`, never `-0192` or `-192.0`
  const icon = Object.entries(UPLOAD_ICONS).find(([size]) => path === iconPath(Number(size)))?.[1];
  if (icon === undefined) return undefined;
  return { ...respond(200, 'image/png', icon, { 'Cache-Control': 'public, max-age=86400' }), isBase64Encoded: true };
}
