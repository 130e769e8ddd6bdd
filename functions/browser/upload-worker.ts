/**
 * The upload page's service worker (`/upload-worker.js`, scope `/upload`): it answers one request, the POST an app's
 * "Share" makes to the manifest's share target. The pictures are kept in a cache for the page (`share-target.ts`), which
 * lists them for the operator to upload with the key; every other request goes to the network untouched.
 * Bundled by `npm run build:browser` with the page's script.
 */
import { UPLOAD_PAGE } from '../core/image/links';
import { SHARE_CACHE, sharedEntry } from './share-target';

/** The parts of the service worker's global scope used here (the project's types are the page's, not a worker's). */
interface FetchEventLike extends Event {
  request: Request;
  respondWith(answer: Promise<Response>): void;
}
interface WorkerScope {
  addEventListener(type: 'fetch', listener: (event: FetchEventLike) => void): void;
  addEventListener(
    type: 'install' | 'activate',
    listener: (event: Event & { waitUntil(done: Promise<unknown>): void }) => void,
  ): void;
  skipWaiting(): Promise<void>;
  clients: { claim(): Promise<void> };
  location: Location;
}

const worker = self as unknown as WorkerScope;

/**
 * The most pictures one share may hand over, and the largest each may be: past what any upload takes (the two-step
 * upload's limit, `MAX_STAGED_UPLOAD_BYTES`, is 32 MB by default), so that the service, not the worker, says no.
 */
const MAX_SHARED_FILES = 50;
const MAX_SHARED_BYTES = 100_000_000;

worker.addEventListener('install', (event) => event.waitUntil(worker.skipWaiting()));
worker.addEventListener('activate', (event) => event.waitUntil(worker.clients.claim()));
worker.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'POST' || url.origin !== worker.location.origin || url.pathname !== UPLOAD_PAGE.share) return;
  event.respondWith(receive(event.request));
});

/** Keeps the shared pictures (only the last share's), then sends the browser to the page, which lists them. */
async function receive(request: Request): Promise<Response> {
  const batch = Date.now().toString(36);
  try {
    const form = await request.formData();
    const cache = await caches.open(SHARE_CACHE);
    for (const old of await cache.keys()) await cache.delete(old);
    const pictures = form
      .getAll('pictures')
      .filter((value): value is File => typeof value !== 'string' && value.size <= MAX_SHARED_BYTES)
      .slice(0, MAX_SHARED_FILES);
    let n = 0;
    for (const picture of pictures) {
      const headers = {
        'Content-Type': picture.type || 'application/octet-stream',
        'X-File-Name': encodeURIComponent(picture.name),
      };
      await cache.put(sharedEntry(batch, (n += 1)), new Response(picture, { headers }));
    }
    // a link shared from a browser or a gallery that hands over an address: a URL source
    const found = ['url', 'text']
      .map((name) => form.get(name))
      .filter((value): value is string => typeof value === 'string')
      .flatMap((value) => value.match(/https?:\/\/\S+/gi) ?? [])
      // a link at the end of a sentence: not its full stop or closing bracket
      .map((link) => link.replace(/[.,;:!?)\]}>'"]+$/, ''));
    // apps often put the same link in both
    const links = [...new Set(found)].slice(0, MAX_SHARED_FILES);
    if (links.length > 0)
      await cache.put(
        sharedEntry(batch, 'links'),
        new Response(JSON.stringify(links), { headers: { 'Content-Type': 'application/json' } }),
      );
  } catch {
    return Response.redirect(`${UPLOAD_PAGE.page}?shared=failed`, 303);
  }
  return Response.redirect(`${UPLOAD_PAGE.page}?shared=${batch}`, 303);
}
