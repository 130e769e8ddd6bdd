import { APPS_PAGE, UPLOAD_PAGE } from '../core/image/links';
import { cspHash } from './csp';
import { escapeHtml } from './html';

/**
 * What every page of the service shares (`docs/pages.md`): one stylesheet, and a header with the site's name linking
 * home, the upload page and the API and apps page; a footer; the site's icon.
 */

/** What a page shows of the site: its name (`SITE_NAME`, or the public URL's host name). */
export interface Site {
  name: string;
}

/** The site of the service's settings: its name, or the host its links point at. */
export function siteOf(settings: { publicUrl: string; siteName?: string | undefined }): Site {
  return { name: settings.siteName ?? new URL(settings.publicUrl).host };
}

/** The site's icon, the upload page's app icon (`upload-page.ts`), at the size a browser tab wants. */
export const SITE_ICON = `${UPLOAD_PAGE.iconPrefix}192.png`;

/**
 * The pages' one stylesheet: small, no web fonts, light or dark by the system setting, readable on a phone, a focus
 * ring on whatever has the keyboard. Allowed by the CSP through its hash, like the pages' scripts: nothing else inline.
 */
const STYLE = `:root{color-scheme:light dark;--bg:#f6f6f4;--fg:#1b1b1b;--muted:#5c5f66;--card:#fff;--line:#cfd1d4;--link:#0a58ca;--focus:#0a58ca;--danger:#b3261e;--error:#b3261e}
@media (prefers-color-scheme:dark){:root{--bg:#131416;--fg:#e9e9e9;--muted:#a3a6ad;--card:#1e1f22;--line:#3b3d42;--link:#8ab4f8;--focus:#8ab4f8;--danger:#b3261e;--error:#f2b8b5}}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1100px;margin:0 auto;padding:16px}
.site{background:var(--card);border-bottom:1px solid var(--line)}
.site .bar{max-width:1100px;margin:0 auto;padding:.6rem 16px;display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:center;justify-content:space-between}
.brand{display:inline-flex;gap:.5rem;align-items:center;font-weight:700;font-size:1.1rem;color:var(--fg);text-decoration:none;overflow-wrap:anywhere}
.brand img{width:28px;height:28px;border-radius:6px}
.site nav{display:flex;gap:1rem;flex-wrap:wrap}
.site nav a{text-decoration:none;font-weight:600}
.site nav a[aria-current]{color:var(--fg)}
footer{max-width:1100px;margin:2rem auto 0;padding:1rem 16px 2rem;border-top:1px solid var(--line);color:var(--muted);font-size:.9rem}
footer a{color:inherit}
h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
a{color:var(--link)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.picture{margin:1rem 0;text-align:center}
.picture img{display:block;margin:0 auto;max-width:100%;max-height:80vh;height:auto;object-fit:contain;background:var(--card);border-radius:4px}
.sensitive{position:relative;display:inline-flex;align-items:center;justify-content:center;min-width:min(100%,20rem);min-height:9rem;cursor:pointer;overflow:hidden;border-radius:4px;background:var(--card)}
.sensitive input{position:absolute;opacity:0;width:1px;height:1px}
.sensitive input:not(:checked)~img,.sensitive input:not(:checked)~picture img{filter:blur(36px)}
.sensitive .veil{position:absolute;inset:0;display:flex;align-items:center;justify-content:center;padding:.5rem;background:rgba(0,0,0,.65);color:#fff;font-weight:600;text-align:center;line-height:1.3}
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
button,a.button,label.button{display:inline-block;font:inherit;padding:.4rem .9rem;border:1px solid var(--line);border-radius:4px;background:var(--card);color:var(--fg);cursor:pointer;text-decoration:none;line-height:1.5}
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
.drop{display:grid;justify-items:center;gap:.75rem;padding:2.5rem 1rem;border:2px dashed var(--line);border-radius:10px;background:var(--card);text-align:center}
.drop-title{margin:0;font-size:1.35rem;font-weight:700}
.drop .muted{margin:0}
.dragging .drop{border-color:var(--focus);background:var(--bg)}
.scripted .drop input[type=file]{position:absolute;width:1px;height:1px;opacity:0;overflow:hidden}
.drop label.choose{font-size:1.05rem;padding:.6rem 1.4rem}
.scripted-only{display:none}
.scripted .scripted-only{display:revert}
.drop input[type=file]:focus-visible+label{outline:3px solid var(--focus);outline-offset:2px}
.summary{font-weight:600;margin:.25rem 0}
.row-head{display:flex;gap:.75rem;align-items:center}
.row-head .preview{width:64px;height:64px;object-fit:cover;border-radius:4px;flex:none;background:var(--bg)}
.row-head .row-name{flex:1 1 auto;min-width:0;margin:0}

.options{margin:0 0 1rem}
.options summary{cursor:pointer;color:var(--muted);margin-bottom:.5rem}
button.primary,.button.primary{background:var(--link);border-color:var(--link);color:var(--bg);font-weight:600}
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
@media (max-width:640px){.code{grid-template-columns:1fr auto}.code label{grid-column:1/-1}.result{grid-template-columns:1fr}}
.meta{color:var(--muted);margin:.25rem 0 1rem}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:1rem 0}
.chooser{display:grid;grid-template-columns:minmax(0,16rem) minmax(0,1fr) auto;gap:.5rem;align-items:center}
.downloads{display:grid;gap:.75rem;padding:0;list-style:none}
.downloads li{padding:.75rem;background:var(--card);border:1px solid var(--line);border-radius:6px}
@media (max-width:640px){.chooser{grid-template-columns:minmax(0,1fr) auto}.chooser select{grid-column:1/-1}}`;

/** The source the pages' CSP allows for `style-src`. */
export const PAGE_STYLE_SOURCE = cspHash(STYLE);

/** Where a page stands in the header's links: marked as the current one. */
export type Place = 'upload' | 'apps' | 'other';

interface PageParts {
  site: Site;
  title: string;
  main: string;
  /** The header link that is this page. */
  place?: Place;
  /** More `<head>` lines (the viewer's link-preview tags). */
  head?: string;
  /** The page's script, inline (its CSP allows it by its hash): the viewer's, the upload page's. */
  script?: string;
}

function header(site: Site, place: Place): string {
  const link = (href: string, text: string, here: boolean): string =>
    `<a href="${href}"${here ? ' aria-current="page"' : ''}>${text}</a>`;
  return `<header class="site"><div class="bar">
<a class="brand" href="/"><img src="${SITE_ICON}" alt="" width="28" height="28">${escapeHtml(site.name)}</a>
<nav aria-label="Site">${link('/', 'Upload', place === 'upload')}${link(APPS_PAGE, 'API and apps', place === 'apps')}</nav>
</div></header>`;
}

/** A page of the service: the header, its one stylesheet, its script if it has one, the footer. */
export function htmlPage({ site, title, main, place = 'other', head = '', script }: PageParts): string {
  const name = escapeHtml(site.name);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · ${name}</title>
<link rel="icon" href="${SITE_ICON}">
${head}<style>${STYLE}</style>
</head>
<body>
${header(site, place)}
<main>
${main}
</main>
<footer><a href="/">${name}</a> · pictures shared by link · <a href="${APPS_PAGE}">API and apps</a></footer>
${script === undefined ? '' : `<script>${script}</script>\n`}</body>
</html>
`;
}
