import { formatDateTime, formatSize } from '../core/formatting';
import type { ImageView } from '../core/image-view';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

function page(title: string, main: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;background:#111;color:#eee}
main{max-width:960px;margin:0 auto;padding:24px}
img{max-width:100%;height:auto;display:block;margin:16px auto;background:#222}
a{color:#8cf}dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px}dt{color:#999}
input{width:100%;box-sizing:border-box;background:#222;color:#eee;border:1px solid #444;padding:6px}
button{padding:8px 16px;font-size:1em}
</style>
</head>
<body><main>
${main}
</main></body>
</html>
`;
}

/** The viewer page of one image (`url_viewer`). */
export function viewerPage(image: ImageView, timeZone: string): string {
  const { original, medium } = image;
  const views = `${image.views} ${image.views === 1 ? 'view' : 'views'}`;
  const description = image.description === null ? '' : `<p>${escapeHtml(image.description)}</p>`;
  const expires = image.expiresAtMs === null ? '' : `<dt>Expires</dt><dd>${formatDateTime(image.expiresAtMs, 'UTC')} UTC</dd>`;
  return page(
    image.title,
    `<h1>${escapeHtml(image.title)}</h1>
${description}
<a href="${escapeHtml(original.url)}"><img src="${escapeHtml(medium.url)}" alt="${escapeHtml(image.title)}" width="${medium.width}" height="${medium.height}"></a>
<dl>
<dt>Size</dt><dd>${original.width} × ${original.height} · ${formatSize(original.size)} · ${escapeHtml(original.mime)}</dd>
<dt>Uploaded</dt><dd>${formatDateTime(image.createdAtMs, timeZone)}</dd>
${expires}
<dt>Views</dt><dd>${views}</dd>
<dt>Direct link</dt><dd><input readonly value="${escapeHtml(original.url)}"></dd>
</dl>`,
  );
}

export function notFoundPage(): string {
  return page('Not found', '<h1>Not found</h1><p>There is no image here. It may have expired or been deleted.</p>');
}

/** The page a delete link opens: it deletes nothing until its button is pressed (a POST to the same URL). */
export function deleteConfirmPage(image: ImageView): string {
  return page(
    `Delete ${image.title}?`,
    `<h1>Delete this image?</h1>
<img src="${escapeHtml(image.medium.url)}" alt="${escapeHtml(image.title)}" width="${image.medium.width}" height="${image.medium.height}">
<p>${escapeHtml(image.title)}: the original and its thumbnails will be deleted for good.</p>
<form method="post"><button type="submit">Delete</button></form>`,
  );
}

export function deletedPage(outcome: 'deleted' | 'released'): string {
  return outcome === 'deleted'
    ? page('Deleted', '<h1>Deleted</h1><p>The image and its thumbnails are gone.</p>')
    : page(
        'Deleted',
        '<h1>Deleted</h1><p>Your upload is gone. The same image was uploaded again from your network, and it stays online until that upload is deleted too.</p>',
      );
}

/** A page for an error a page request ran into (a store failed). */
export function errorPage(message: string): string {
  return page('Error', `<h1>Error</h1><p>${escapeHtml(message)}</p>`);
}

/** The root page: what this host is and where its API is, for a person who opens the base URL. */
export function homePage(publicUrl: string): string {
  const api = `${publicUrl}/api/1/upload`;
  return page(
    'Image upload service',
    `<h1>Image upload service</h1>
<p>A Chevereto-compatible API v1 image host. Upload with ShareX, PicGo, imgbb-uploader or curl:</p>
<p><input readonly value="${escapeHtml(`curl -F "source=@photo.jpg" -F "key=YOUR_KEY" ${api}`)}"></p>
<p>The key is the operator's.</p>`,
  );
}
