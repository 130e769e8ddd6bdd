/**
 * What the service worker and the page agree on for pictures shared from another app: the worker keeps each in a
 * cache under `/upload/shared/{batch}/{n}` (the links shared with them under `.../links`, a JSON list), and sends the
 * browser to `/upload?shared={batch}`, where the page takes them out.
 */
export const SHARE_CACHE = 'shared-pictures';

const SHARED_ENTRY = /^\/upload\/shared\/([a-z0-9]{1,20})\/(?:\d{1,4}|links)$/;

export function sharedEntry(batch: string, name: number | 'links'): string {
  return `/upload/shared/${batch}/${name}`;
}

/** The batch an entry of the cache belongs to; undefined for anything else. */
export function sharedBatchOf(path: string): string | undefined {
  return SHARED_ENTRY.exec(path)?.[1];
}
