/**
 * What the service worker and the page agree on for pictures shared from another app: the worker keeps each in a
 * cache under `/upload/shared/{batch}/{n}` (the links shared with them under `.../links`, a JSON list), and sends the
 * browser to `/upload?shared={batch}`, where the page takes them out.
 */
import type { Source } from './api-client';

export const SHARE_CACHE = 'shared-pictures';

const SHARED_ENTRY = /^\/upload\/shared\/([a-z0-9]{1,20})\/(?:\d{1,4}|links)$/;

export function sharedEntry(batch: string, name: number | 'links'): string {
  return `/upload/shared/${batch}/${name}`;
}

/** The batch an entry of the cache belongs to; undefined for anything else. */
export function sharedBatchOf(path: string): string | undefined {
  return SHARED_ENTRY.exec(path)?.[1];
}

export function isWebAddress(text: string): boolean {
  return /^https?:\/\/\S+$/i.test(text);
}

/**
 * What a share of `batch` (the page's `?shared=` value) handed over, taken out of the worker's cache; or what to say
 * when nothing came.
 */
export async function takeShared(batch: string): Promise<{ sources: Source[] } | { problem: string }> {
  if (batch === 'missed')
    return { problem: 'The shared pictures did not arrive: this browser had not opened this page before. Share them again.' };
  if (batch === 'failed')
    return { problem: "The shared pictures could not be kept (this browser's storage may be full): share them again." };
  const cache = await caches.open(SHARE_CACHE);
  const sources: Source[] = [];
  for (const entry of await cache.keys()) {
    if (sharedBatchOf(new URL(entry.url).pathname) !== batch) continue;
    const response = await cache.match(entry);
    await cache.delete(entry);
    if (!response) continue;
    if (entry.url.endsWith('/links')) {
      for (const url of ((await response.json()) as string[]).filter(isWebAddress)) sources.push({ kind: 'url', url });
      continue;
    }
    const name = decodeURIComponent(response.headers.get('X-File-Name') ?? '');
    const blob = await response.blob();
    sources.push({ kind: 'file', file: new File([blob], name, { type: blob.type }) });
  }
  return sources.length > 0 ? { sources } : { problem: 'Nothing arrived from the share: share the pictures again.' };
}
