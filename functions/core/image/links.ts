/**
 * The service's public routes and the links that point at them: the one place their formats are written, for the
 * Image object, the router and the pages alike.
 */

/** The bucket's folder of stored files, served at `/images/...`: the one prefix the edge and the roles open. */
export const IMAGES_PREFIX = 'images/';

/** The upload endpoint, under the public base URL. */
export const UPLOAD_PATH = '/api/1/upload';

/** The upload page and the files that make it an installable web app (`docs/pages.md`). */
export const UPLOAD_PAGE = {
  page: '/upload',
  /** The manifest's share target, which the page's service worker answers. */
  share: '/upload/share',
  worker: '/upload-worker.js',
  manifest: '/upload.webmanifest',
  /** Followed by the size and `.png`. */
  iconPrefix: '/upload-icon-',
} as const;

/** The page of the API and the client apps' settings, and under it their files to download (`/apps/sharex.sxcu`). */
export const APPS_PAGE = '/apps';

/** The upload endpoint of a base URL (a trailing slash or not). */
export function uploadUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${UPLOAD_PATH}`;
}

/** Where the stored files are: `images/YYYY/MM/DD/{name}{suffix}.{ext}`. */
export function objectKey(folder: string, name: string, suffix: '' | '.th' | '.md', extension: string): string {
  return `${IMAGES_PREFIX}${folder}/${name}${suffix}.${extension}`;
}

/** Absolute URL of a stored object; keys hold only URL-safe characters by construction. */
export function objectUrl(publicUrl: string, key: string): string {
  return `${publicUrl}/${key}`;
}

/** The viewer page of an image (`url_viewer`). */
export function viewerUrl(publicUrl: string, idEncoded: string): string {
  return `${publicUrl}/image/${idEncoded}`;
}

/** Where the viewer page's report form posts. */
export function reportPath(idEncoded: string): string {
  return `/image/${idEncoded}/report`;
}

/** A delete link (`delete_url`). */
export function deleteUrl(publicUrl: string, idEncoded: string, token: string): string {
  return `${viewerUrl(publicUrl, idEncoded)}/delete/${token}`;
}

/** What a request path asks for. */
export type Route =
  | { page: 'home' }
  | { page: 'api'; version: string | undefined; action: string | undefined; extra: boolean }
  | { page: 'viewer'; idEncoded: string }
  | { page: 'delete'; idEncoded: string; token: string }
  | { page: 'report'; idEncoded: string }
  | { page: 'upload' }
  | { page: 'share' }
  | { page: 'asset'; path: string }
  | { page: 'apps' }
  | { page: 'app-file'; name: string }
  | { page: 'none' };

/**
 * The segments of a request path, or undefined when the path is not canonical: an empty segment (`//image/...`,
 * `/image//id`) anywhere but at its end (`/api/1/upload/` is the upload). Such paths are routed nowhere.
 */
function segmentsOf(path: string): string[] | undefined {
  const segments = path.split('/').slice(1);
  if (segments.at(-1) === '') segments.pop();
  return segments.includes('') ? undefined : segments;
}

/**
 * Reads a request path: `/`, `/api/1/upload`, `/image/{id}` (or `/image/{anything}.{id}`), `/image/{id}/report`,
 * `/image/{id}/delete/{token}`, `/apps` and its files, `/upload`, `/upload/share` and the upload page's files
 * (`/upload-worker.js`...).
 */
export function routeOf(path: string): Route {
  const segments = segmentsOf(path);
  if (segments === undefined) return { page: 'none' };
  const [first, second, third, fourth] = segments;
  if (first === undefined) return { page: 'home' };
  if (path === UPLOAD_PAGE.page || path === `${UPLOAD_PAGE.page}/`) return { page: 'upload' };
  if (path === UPLOAD_PAGE.share) return { page: 'share' };
  if (segments.length === 1 && first.startsWith('upload') && first.includes('.')) return { page: 'asset', path };
  if (path === APPS_PAGE || path === `${APPS_PAGE}/`) return { page: 'apps' };
  if (first === APPS_PAGE.slice(1) && second !== undefined && segments.length === 2) return { page: 'app-file', name: second };
  if (first === 'api') return { page: 'api', version: second, action: third, extra: segments.length > 3 };
  if (first === 'image' && second !== undefined && segments.length === 2) {
    return { page: 'viewer', idEncoded: second.slice(second.lastIndexOf('.') + 1) };
  }
  if (first === 'image' && second !== undefined && third === 'report' && segments.length === 3) {
    return { page: 'report', idEncoded: second };
  }
  if (first === 'image' && second !== undefined && third === 'delete' && fourth !== undefined && segments.length === 4) {
    return { page: 'delete', idEncoded: second, token: fourth };
  }
  return { page: 'none' };
}

/**
 * A path for a log: a delete link's token is a secret (only its hash is stored), so every segment after a `delete`
 * segment is replaced, wherever it stands and whatever the route (a path routed nowhere may still hold a real token).
 */
export function redactedPath(path: string): string {
  const segments = path.split('/');
  const at = segments.indexOf('delete');
  if (at === -1) return path;
  return [...segments.slice(0, at + 1), ...segments.slice(at + 1).map((segment) => (segment === '' ? '' : '[redacted]'))].join(
    '/',
  );
}
