import { formatSize } from '../core/image/formatting';
import type { ImageView } from '../core/lifecycle/image-view';
import { escapeHtml } from './html';
import { htmlPage, type Site } from './page-shell';

/** The service's small pages: not found, a delete link's two, a report's answer, an error. */

export function notFoundPage(site: Site): string {
  return htmlPage({
    site,
    title: 'Not found',
    main: '<h1>Not found</h1>\n<p>There is no image here. It may have expired or been deleted.</p>\n<p><a href="/">Upload a picture</a></p>',
  });
}

/** The page a delete link opens: what will go, and a button; nothing is deleted until it is pressed (a POST). */
export function deleteConfirmPage(site: Site, image: ImageView): string {
  const { thumb } = image;
  return htmlPage({
    site,
    title: `Delete ${image.title}?`,
    main: `<h1>Delete this image?</h1>
<div class="picture"><img src="${escapeHtml(thumb.url)}" alt="${escapeHtml(image.title)}" width="${thumb.width}" height="${thumb.height}"></div>
<p><strong>${escapeHtml(image.title)}</strong> (${image.original.width} × ${image.original.height}, ${formatSize(image.original.size)}): the original and its thumbnails will be deleted for good, and its links will stop working.</p>
<form method="post"><button type="submit" class="danger">Delete for good</button></form>
<p class="muted">Changed your mind? Just leave this page: nothing has been deleted.</p>`,
  });
}

export function deletedPage(site: Site, outcome: 'deleted' | 'released'): string {
  const text =
    outcome === 'deleted'
      ? 'The image and its thumbnails are gone.'
      : 'Your upload is gone. The same image was uploaded again from your network, and it stays online until that upload is deleted too.';
  return htmlPage({ site, title: 'Deleted', main: `<h1>Deleted</h1>\n<p>${text}</p>` });
}

/** The answer to a report. */
export function reportedPage(site: Site, outcome: 'received' | 'already'): string {
  const text =
    outcome === 'received'
      ? "Thank you. The report was sent to this site's operator, who will look at the image."
      : 'You reported this image already; the operator has your report.';
  return htmlPage({ site, title: 'Report sent', main: `<h1>Report sent</h1>\n<p>${text}</p>` });
}

/** A page for an error a page request ran into (a store failed). */
export function errorPage(site: Site, message: string): string {
  return htmlPage({ site, title: 'Error', main: `<h1>Error</h1>\n<p>${escapeHtml(message)}</p>` });
}
