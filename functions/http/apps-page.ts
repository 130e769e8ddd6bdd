import type { APIGatewayProxyResult } from 'aws-lambda';
import { APPS_PAGE, UPLOAD_PAGE, uploadUrl } from '../core/image/links';
import { clientConfig, KEY_PLACEHOLDER, type ClientName } from './client-configs';
import { escapeHtml } from './html';
import { htmlPage, type Site } from './page-shell';
import { respond } from './responses';

/**
 * The API and apps page (`/apps`, `docs/pages.md`): the upload endpoint, the curl line, and the clients' settings as
 * files to download (`/apps/sharex.sxcu`...), each with where it goes. The key is the operator's: the files hold a
 * placeholder, never a key.
 */

interface AppFile {
  client: ClientName;
  file: string;
  type: string;
  name: string;
  how: string;
}

const APP_FILES: readonly AppFile[] = [
  {
    client: 'sharex',
    file: 'sharex.sxcu',
    type: 'application/json; charset=utf-8',
    name: 'ShareX',
    how: 'Open the file (or Destinations, Custom uploader settings, Import), then put the key in its <code>X-API-Key</code> header.',
  },
  {
    client: 'picgo',
    file: 'picgo.json',
    type: 'application/json; charset=utf-8',
    name: 'PicGo and PicList',
    how: "With the <code>web-uploader</code> plugin: merge it into PicGo's <code>data.json</code>, with the key in <code>customHeader</code>.",
  },
  {
    client: 'flameshot',
    file: 'flameshot.sh',
    type: 'text/x-shellscript; charset=utf-8',
    name: 'Flameshot',
    how: 'A script that captures a region, uploads it and copies the link: set <code>IMAGE_UPLOAD_KEY</code>, make it executable and bind it to a key.',
  },
];

/** The page: how to upload with curl, and each app's file to download. */
export function appsPage(site: Site, publicUrl: string): string {
  const api = uploadUrl(publicUrl);
  const curl = `curl -F "source=@photo.jpg" -F "key=${KEY_PLACEHOLDER}" "${api}?format=json"`;
  const files = APP_FILES.map(
    (app) =>
      `<li><a class="button" href="${APPS_PAGE}/${app.file}" download>${escapeHtml(app.name)}: ${app.file}</a><p>${app.how}</p></li>`,
  ).join('\n');
  return htmlPage({
    site,
    title: 'API and apps',
    place: 'apps',
    main: `<h1>API and apps</h1>
<p>This host speaks Chevereto's API v1: ShareX, PicGo, the <code>imgbb-uploader</code> package and curl upload to it as they would to Chevereto. Every upload gets a page to share, direct links, thumbnails and a delete link.</p>
<h2>The API</h2>
<p>Endpoint: <code>${escapeHtml(api)}</code>. Uploads need the key of this host's operator, in the <code>key</code> field or the <code>X-API-Key</code> header.</p>
<pre>${escapeHtml(curl)}</pre>
<h2>Apps</h2>
<ul class="downloads">
${files}
</ul>
<p>Or <a href="${UPLOAD_PAGE.page}">upload from this browser</a>: several pictures at once, dropped, pasted or from a URL.</p>`,
  });
}

/** An app's file, to download; undefined for a name that is none. */
export function appFile(name: string, publicUrl: string): APIGatewayProxyResult | undefined {
  const app = APP_FILES.find((candidate) => candidate.file === name);
  if (app === undefined) return undefined;
  return respond(200, app.type, clientConfig(app.client, publicUrl, KEY_PLACEHOLDER), {
    'Content-Disposition': `attachment; filename="${app.file}"`,
    'Cache-Control': 'no-cache',
  });
}
