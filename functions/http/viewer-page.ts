import { formatDateTime, formatSize, howLongAgo, howLongUntil } from '../core/image/formatting';
import type { FileView, ImageView } from '../core/lifecycle/image-view';
import { reportPath } from '../core/image/links';
import { MAX_REPORT_NOTE, REPORT_REASONS } from '../core/moderation/reports';
import { cspHash } from './csp';
import { codeName, embedCodes, type EmbedGroup } from './embed-codes';
import { escapeHtml } from './html';
import { htmlPage, type Site } from './page-shell';

/**
 * The viewer page of one image (`url_viewer`, `docs/pages.md`): the picture first, as large as the window allows, from
 * the rendition that fits; its facts; Download and Copy link; the codes to share it behind one chooser; a report form.
 */

/**
 * The viewer's script: shows the copy buttons and the codes' chooser in place of the list of every code in a field of
 * its own (what the page shows without it), fills the one field with the code chosen, and copies a field to the
 * clipboard; where there is no clipboard (plain http from another machine) or it is refused, the text is put in the
 * chooser's field, selected, to copy by hand.
 */
const VIEWER_SCRIPT = `const kind=document.getElementById('code-kind'),field=document.getElementById('code');if(kind){document.getElementById('chooser').hidden=false;document.getElementById('code-list').hidden=true;kind.addEventListener('change',()=>{field.value=kind.selectedOptions[0].dataset.code})}
for(const b of document.querySelectorAll('button[data-copy]')){const label=b.textContent;b.hidden=false;b.addEventListener('click',()=>{const f=document.getElementById(b.dataset.copy);const done=()=>{b.textContent='Copied';setTimeout(()=>{b.textContent=label},1500)};const select=()=>{const shown=f.type==='hidden'?field:f;shown.value=f.value;shown.focus();shown.select()};if(navigator.clipboard)navigator.clipboard.writeText(f.value).then(done,select);else select()})}`;

/** The source the CSP of a page without a script of its own allows for `script-src`: the viewer's. */
export const PAGE_SCRIPT_SOURCE = cspHash(VIEWER_SCRIPT);

/** The widest the picture is shown (the pages' column: `main`, 1100 px less its margins), and those margins. */
const MARGINS_PX = 32;
const COLUMN_PX = 1100 - MARGINS_PX;

/** `<time>` of an instant: relative in the text, the exact date (and zone) on hover. */
function timeElement(epochMs: number, text: string, timeZone: string): string {
  const exact = `${formatDateTime(epochMs, timeZone)} ${timeZone}`;
  return `<time datetime="${new Date(epochMs).toISOString()}" title="${escapeHtml(exact)}">${escapeHtml(text)}</time>`;
}

/** `JPEG`, `PNG`, `GIF`, `WEBP`... from a MIME type. */
function formatName(mime: string): string {
  return (mime.split('/')[1] ?? mime).toUpperCase();
}

/** Windows this narrow (in CSS pixels: phones, at any density) are shown the medium rendition, never the original. */
const PHONE_MAX_PX = 700;

/**
 * The picture as large as the window allows, up to its own size: the medium rendition or the original, whichever the
 * window needs (`srcset`; the thumbnail is a square crop, another picture, so it is not one of them), linking to the
 * original. The width the browser reckons with is the least of the column's, the window's, the one 80% of its height
 * allows, and the picture's own. A phone gets the medium whatever its screen's density (a `<source>` for narrow
 * windows): a 390 px screen at 3x would otherwise load a 12 MP original to show it 390 px wide.
 */
function picture(image: ImageView): string {
  const { medium, original } = image;
  const ratio = (original.width / original.height).toFixed(4);
  // the room the picture takes before it arrives (no jump when it does): its width in the column, at its proportions
  const width = Math.min(original.width, COLUMN_PX);
  const height = Math.max(1, Math.round((width * original.height) / original.width));
  const img = (sources: string): string =>
    `<img src="${escapeHtml(medium.url)}"${sources} alt="${escapeHtml(image.title)}" width="${width}" height="${height}">`;
  const shown =
    medium.url === original.url
      ? img('')
      : `<picture><source media="(max-width: ${PHONE_MAX_PX}px)" srcset="${escapeHtml(medium.url)}">${img(
          ` srcset="${escapeHtml(medium.url)} ${medium.width}w, ${escapeHtml(original.url)} ${original.width}w" sizes="min(${COLUMN_PX}px, calc(100vw - ${MARGINS_PX}px), calc(80vh * ${ratio}), ${original.width}px)"`,
        )}</picture>`;
  if (!image.nsfw) return `<div class="picture"><a href="${escapeHtml(original.url)}">${shown}</a></div>`;
  // Blurred until a click (or Space on the focused control) reveals it: a checkbox and CSS, no script.
  return `<div class="picture"><label class="sensitive"><input type="checkbox" aria-label="Show the sensitive image">${shown}<span class="veil">Sensitive image<br>Click to show</span></label></div>`;
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

/**
 * The codes to share, as imgBB groups them: one chooser of every code (viewer link, direct links, HTML, BBCode,
 * Markdown; full, medium, thumbnail) feeding one field with one copy button. Until the script shows the chooser (and
 * without script, which the chooser needs), every code in a labelled field of its own.
 */
function shareSection(groups: EmbedGroup[]): string {
  const first = groups[0]?.codes[0];
  const options = groups
    .map(
      (group) =>
        `<optgroup label="${escapeHtml(group.title)}">${group.codes
          .map(
            (code) =>
              `<option value="${code.id}" data-code="${escapeHtml(code.code)}">${escapeHtml(codeName(group, code))}</option>`,
          )
          .join('')}</optgroup>`,
    )
    .join('\n');
  const fields = groups
    .flatMap((group) =>
      group.codes.map(
        (code) =>
          `<div class="code"><label for="${code.id}">${escapeHtml(codeName(group, code))}</label><input type="text" id="${code.id}" readonly value="${escapeHtml(code.code)}"></div>`,
      ),
    )
    .join('\n');
  return `<section aria-labelledby="share-title">
<h2 id="share-title">Share</h2>
<div id="chooser" class="chooser" hidden>
<select id="code-kind" aria-label="Which link or code">
${options}
</select>
<input type="text" id="code" readonly aria-label="The link or code chosen" value="${escapeHtml(first?.code ?? '')}">
<button type="button" data-copy="code" hidden>Copy</button>
</div>
<div id="code-list" class="codes">
${fields}
</div>
</section>`;
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

/** The viewer page: the picture, its title and facts, Download and Copy link, the codes to share it, a report form. */
export function viewerPage(site: Site, image: ImageView, timeZone: string, nowMs: number, reportToken = ''): string {
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
  const actions = `<div class="actions">
<a class="button primary" id="download" href="${escapeHtml(original.url)}" download>Download</a>
<input type="hidden" id="viewer-link" value="${escapeHtml(image.viewerUrl)}">
<button type="button" data-copy="viewer-link" hidden>Copy link</button>
<a class="button" href="${escapeHtml(original.url)}">Full size</a>
</div>`;
  return htmlPage({
    site,
    title: image.title,
    head: previewTags(image),
    script: VIEWER_SCRIPT,
    main: `${picture(image)}
<h1>${escapeHtml(image.title)}</h1>
${description}${actions}
${facts}
${shareSection(embedCodes(image))}
${reportSection(image, reportToken)}`,
  });
}
