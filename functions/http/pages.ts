import { formatDateTime, formatSize, howLongAgo, howLongUntil } from '../core/formatting';
import type { FileView, ImageView } from '../core/lifecycle/image-view';
import { reportPath, UPLOAD_PAGE, uploadUrl } from '../core/links';
import { MAX_REPORT_NOTE, REPORT_REASONS } from '../core/moderation/reports';
import { KEY_PLACEHOLDER, sharexConfig } from './client-configs';
import { embedCodes } from './embed-codes';
import { cspHash } from './csp';
import { escapeHtml } from './html';

export { escapeHtml } from './html';

/**
 * The pages' one stylesheet: small, no web fonts, light or dark by the system setting, readable on a phone, a focus
 * ring on whatever has the keyboard. Allowed by the CSP through its hash, like the copy script: nothing else inline.
 */
const STYLE = `:root{color-scheme:light dark;--bg:#f6f6f4;--fg:#1b1b1b;--muted:#5c5f66;--card:#fff;--line:#cfd1d4;--link:#0a58ca;--focus:#0a58ca;--danger:#b3261e;--error:#b3261e}
@media (prefers-color-scheme:dark){:root{--bg:#131416;--fg:#e9e9e9;--muted:#a3a6ad;--card:#1e1f22;--line:#3b3d42;--link:#8ab4f8;--focus:#8ab4f8;--danger:#b3261e;--error:#f2b8b5}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:980px;margin:0 auto;padding:16px}
h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
a{color:var(--link)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.picture{margin:1rem 0;text-align:center}
.picture img{max-width:100%;height:auto;background:var(--card);border-radius:4px}
.sensitive{position:relative;display:inline-block;cursor:pointer;overflow:hidden;border-radius:4px}
.sensitive input{position:absolute;opacity:0;width:1px;height:1px}
.sensitive input:not(:checked)~img{filter:blur(36px)}
.sensitive .veil{position:absolute;inset:0;display:flex;align-items:center;justify-content:center;padding:1rem;background:rgba(0,0,0,.35);color:#fff;font-weight:600}
.sensitive input:checked~.veil{display:none}
.sensitive input:focus-visible~.veil{outline:3px solid var(--focus);outline-offset:-3px}
.description{white-space:pre-line;overflow-wrap:anywhere}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:1rem 0}
.facts dt{color:var(--muted)}
.facts dd{margin:0;overflow-wrap:anywhere}
.codes{display:grid;gap:.5rem}
.code{display:grid;grid-template-columns:11rem 1fr auto;gap:.5rem;align-items:center}
.code label{color:var(--muted)}
input[type=text]{width:100%;min-width:0;padding:.4rem .5rem;border:1px solid var(--line);border-radius:4px;background:var(--card);color:var(--fg);font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
button{font:inherit;padding:.4rem .9rem;border:1px solid var(--line);border-radius:4px;background:var(--card);color:var(--fg);cursor:pointer}
button.danger{background:var(--danger);border-color:var(--danger);color:#fff}
.report{margin:2rem 0 1rem}
.report summary{cursor:pointer;color:var(--muted)}
.report fieldset{border:1px solid var(--line);border-radius:4px;margin:.75rem 0;display:grid;gap:.25rem}
.report textarea{display:block;width:100%;margin:.25rem 0 .75rem;padding:.4rem .5rem;border:1px solid var(--line);border-radius:4px;background:var(--card);color:var(--fg);font:inherit}
pre{overflow-x:auto;padding:.75rem;background:var(--card);border:1px solid var(--line);border-radius:4px;font-size:13px}
.muted{color:var(--muted)}
.field{display:grid;gap:.25rem;margin:0 0 1rem}
.inline{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}
.inline input[type=url]{flex:1 1 12rem}
input[type=password],input[type=url],select,textarea{width:100%;min-width:0;padding:.45rem .5rem;border:1px solid var(--line);border-radius:4px;background:var(--card);color:var(--fg);font:inherit}
.drop{padding:1rem;border:2px dashed var(--line);border-radius:6px}
.dragging .drop{border-color:var(--focus);background:var(--card)}
.options{margin:0 0 1rem}
.options summary{cursor:pointer;color:var(--muted);margin-bottom:.5rem}
button.primary{background:var(--link);border-color:var(--link);color:var(--bg);font-weight:600}
.announce{min-height:1.5em;font-weight:600}
.rows{list-style:none;padding:0;display:grid;gap:.75rem}
.row{padding:.75rem;background:var(--card);border:1px solid var(--line);border-radius:6px;overflow-wrap:anywhere}
.row p{margin:.25rem 0}
.row progress{width:100%}
.row-status.failed{color:var(--error)}
.row-shared{font-weight:600}
.result{display:grid;gap:.5rem 1rem;margin-top:.5rem;grid-template-columns:auto 1fr;align-items:start}
.result .thumb img{display:block;max-width:160px;height:auto;border-radius:4px}
.result .embed{grid-column:1/-1}
.embed summary{cursor:pointer;color:var(--muted)}
.embed h3{font-size:1rem;margin:.75rem 0 .25rem}
@media (max-width:640px){.code{grid-template-columns:1fr auto}.code label{grid-column:1/-1}.result{grid-template-columns:1fr}}`;

/**
 * The copy buttons: hidden until this script runs (without JavaScript the fields are still there to select), then
 * each copies its field to the clipboard, or selects it where the clipboard is refused.
 */
const COPY_SCRIPT = `for(const b of document.querySelectorAll('button[data-copy]')){b.hidden=false;b.addEventListener('click',()=>{const f=document.getElementById(b.dataset.copy);const done=()=>{b.textContent='Copied';setTimeout(()=>{b.textContent='Copy'},1500)};navigator.clipboard.writeText(f.value).then(done,()=>{f.focus();f.select()})})}`;

/** The sources the pages' CSP allows for `style-src` and `script-src`. */
export const PAGE_STYLE_SOURCE = cspHash(STYLE);
export const PAGE_SCRIPT_SOURCE = cspHash(COPY_SCRIPT);

interface PageParts {
  title: string;
  main: string;
  /** More `<head>` lines (the viewer's link-preview tags). */
  head?: string;
  /** The page's script, inline (its CSP allows it by its hash): the copy buttons', the upload page's. */
  script?: string;
}

/** A page of the service: its one stylesheet, its script if it has one. */
export function htmlPage({ title, main, head = '', script }: PageParts): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
${head}<style>${STYLE}</style>
</head>
<body>
<main>
${main}
</main>
${script === undefined ? '' : `<script>${script}</script>\n`}</body>
</html>
`;
}

/** `<time>` of an instant: relative in the text, the exact date (and zone) on hover. */
function timeElement(epochMs: number, text: string, timeZone: string): string {
  const exact = `${formatDateTime(epochMs, timeZone)} ${timeZone}`;
  return `<time datetime="${new Date(epochMs).toISOString()}" title="${escapeHtml(exact)}">${escapeHtml(text)}</time>`;
}

/** `JPEG`, `PNG`, `GIF`, `WEBP`... from a MIME type. */
function formatName(mime: string): string {
  return (mime.split('/')[1] ?? mime).toUpperCase();
}

/** The picture at display size (the medium rendition, animated when the image is), linking to the original. */
function picture(image: ImageView): string {
  const { medium } = image;
  const img = `<img src="${escapeHtml(medium.url)}" alt="${escapeHtml(image.title)}" width="${medium.width}" height="${medium.height}">`;
  if (!image.nsfw) return `<div class="picture"><a href="${escapeHtml(image.original.url)}">${img}</a></div>`;
  // Blurred until a click (or Space on the focused control) reveals it: a checkbox and CSS, no script.
  return `<div class="picture"><label class="sensitive"><input type="checkbox" aria-label="Show the sensitive image">${img}<span class="veil">Sensitive image: click to show</span></label>
<p><a href="${escapeHtml(image.original.url)}">Open the original</a></p></div>`;
}

/** Link-preview tags (Open Graph, Twitter card): the medium rendition as the picture, none for a sensitive image. */
function previewTags(image: ImageView): string {
  const tag = (attribute: 'property' | 'name', key: string, value: string | number): string =>
    `<meta ${attribute}="${key}" content="${escapeHtml(String(value))}">\n`;
  const tags = [
    tag('property', 'og:type', 'website'),
    tag('property', 'og:title', image.title),
    tag('property', 'og:url', image.viewerUrl),
    ...(image.description === null ? [] : [tag('property', 'og:description', image.description)]),
  ];
  if (image.nsfw) return [...tags, tag('name', 'twitter:card', 'summary')].join('');
  const preview: FileView = image.medium;
  return [
    ...tags,
    tag('property', 'og:image', preview.url),
    tag('property', 'og:image:type', preview.mime),
    tag('property', 'og:image:width', preview.width),
    tag('property', 'og:image:height', preview.height),
    tag('property', 'og:image:alt', image.title),
    tag('name', 'twitter:card', 'summary_large_image'),
    tag('name', 'twitter:title', image.title),
    tag('name', 'twitter:image', preview.url),
    tag('name', 'twitter:image:alt', image.title),
  ].join('');
}

/** The codes to copy, grouped: each a labelled read-only field and its copy button. */
function shareSection(image: ImageView): string {
  const groups = embedCodes(image).map(
    (group) => `<h2>${escapeHtml(group.title)}</h2>
<div class="codes">
${group.codes
  .map(
    (code) =>
      `<div class="code"><label for="${code.id}">${escapeHtml(code.label)}</label><input type="text" id="${code.id}" readonly value="${escapeHtml(code.code)}"><button type="button" data-copy="${code.id}" aria-label="Copy ${escapeHtml(`${group.title}, ${code.label}`)}" hidden>Copy</button></div>`,
  )
  .join('\n')}
</div>`,
  );
  return `<section aria-label="Share">\n${groups.join('\n')}\n</section>`;
}

/**
 * A report form folded away under its summary: no script, posted to this site only (its CSP's form-action), with the
 * token that vouches for it where a browser does not say where a request comes from (`core/moderation/report-tokens.ts`).
 */
function reportSection(image: ImageView, reportToken: string): string {
  const reasons = Object.entries(REPORT_REASONS)
    .map(([value, label]) => `<label><input type="radio" name="reason" value="${value}" required> ${escapeHtml(label)}</label>`)
    .join('\n');
  return `<details class="report"><summary>Report this image</summary>
<form method="post" action="${reportPath(image.idEncoded)}">
<input type="hidden" name="token" value="${escapeHtml(reportToken)}">
<fieldset><legend>What is wrong with it?</legend>
${reasons}
</fieldset>
<label for="report-note">Anything the site's operator should know (optional)</label>
<textarea id="report-note" name="note" maxlength="${MAX_REPORT_NOTE}" rows="3"></textarea>
<button type="submit">Send the report</button>
</form>
</details>`;
}

/** The viewer page of one image (`url_viewer`): the picture, its facts, the codes to share it, a report form. */
export function viewerPage(image: ImageView, timeZone: string, nowMs: number, reportToken = ''): string {
  const { original } = image;
  const description = image.description === null ? '' : `<p class="description">${escapeHtml(image.description)}</p>\n`;
  const expires =
    image.expiresAtMs === null
      ? ''
      : `<dt>Expires</dt><dd>${timeElement(image.expiresAtMs, howLongUntil(image.expiresAtMs, nowMs), timeZone)}</dd>\n`;
  const facts = `<dl class="facts">
<dt>Dimensions</dt><dd>${original.width} × ${original.height}${image.animated ? ' (animated)' : ''}</dd>
<dt>Size</dt><dd>${formatSize(original.size)}</dd>
<dt>Format</dt><dd>${escapeHtml(formatName(original.mime))}</dd>
<dt>Uploaded</dt><dd>${timeElement(image.createdAtMs, howLongAgo(image.createdAtMs, nowMs), timeZone)}</dd>
${expires}<dt>Views</dt><dd>${image.views} ${image.views === 1 ? 'view' : 'views'}</dd>
</dl>`;
  return htmlPage({
    title: image.title,
    head: previewTags(image),
    script: COPY_SCRIPT,
    main: `<h1>${escapeHtml(image.title)}</h1>
${picture(image)}
${description}${facts}
${shareSection(image)}
${reportSection(image, reportToken)}`,
  });
}

export function notFoundPage(): string {
  return htmlPage({
    title: 'Not found',
    main: '<h1>Not found</h1>\n<p>There is no image here. It may have expired or been deleted.</p>',
  });
}

/** The page a delete link opens: what will go, and a button; nothing is deleted until it is pressed (a POST). */
export function deleteConfirmPage(image: ImageView): string {
  const { thumb } = image;
  return htmlPage({
    title: `Delete ${image.title}?`,
    main: `<h1>Delete this image?</h1>
<div class="picture"><img src="${escapeHtml(thumb.url)}" alt="${escapeHtml(image.title)}" width="${thumb.width}" height="${thumb.height}"></div>
<p><strong>${escapeHtml(image.title)}</strong> (${image.original.width} × ${image.original.height}, ${formatSize(image.original.size)}): the original and its thumbnails will be deleted for good, and its links will stop working.</p>
<form method="post"><button type="submit" class="danger">Delete for good</button></form>
<p class="muted">Changed your mind? Just leave this page: nothing has been deleted.</p>`,
  });
}

export function deletedPage(outcome: 'deleted' | 'released'): string {
  const text =
    outcome === 'deleted'
      ? 'The image and its thumbnails are gone.'
      : 'Your upload is gone. The same image was uploaded again from your network, and it stays online until that upload is deleted too.';
  return htmlPage({ title: 'Deleted', main: `<h1>Deleted</h1>\n<p>${text}</p>` });
}

/** The answer to a report. */
export function reportedPage(outcome: 'received' | 'already'): string {
  const text =
    outcome === 'received'
      ? "Thank you. The report was sent to this site's operator, who will look at the image."
      : 'You reported this image already; the operator has your report.';
  return htmlPage({ title: 'Report sent', main: `<h1>Report sent</h1>\n<p>${text}</p>` });
}

/** A page for an error a page request ran into (a store failed). */
export function errorPage(message: string): string {
  return htmlPage({ title: 'Error', main: `<h1>Error</h1>\n<p>${escapeHtml(message)}</p>` });
}

/** The root page: what this host is and how to upload to it. The key is the operator's and never shown. */
export function homePage(publicUrl: string): string {
  const api = uploadUrl(publicUrl);
  const curl = `curl -F "source=@photo.jpg" -F "key=${KEY_PLACEHOLDER}" "${api}?format=json"`;
  const sharex = sharexConfig(publicUrl, KEY_PLACEHOLDER);
  return htmlPage({
    title: 'Image upload service',
    main: `<h1>Image upload service</h1>
<p>An image host that speaks Chevereto's API v1: ShareX, PicGo, the <code>imgbb-uploader</code> package and curl upload to it as they would to Chevereto. Every upload gets a page to share, direct links, thumbnails and a delete link.</p>
<h2>Upload with curl</h2>
<pre>${escapeHtml(curl)}</pre>
<h2>Upload with ShareX</h2>
<p>Save this as a <code>.sxcu</code> file and open it (Destinations, Custom uploader settings, Import):</p>
<pre>${escapeHtml(sharex.trimEnd())}</pre>
<p class="muted">Uploads need the key of this host's operator. API: <code>${escapeHtml(api)}</code></p>
<p><a href="${UPLOAD_PAGE.page}">Upload from this browser</a>: several pictures at once, dropped, pasted or from a URL, on a computer or a phone.</p>`,
  });
}
