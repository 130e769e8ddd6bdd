import { AdminError } from './admin-error';
import type { IdCodecs } from '../image/id-codec';
import { IMAGES_PREFIX, routeOf } from '../image/links';
import type { ImageRecord, ImageRecords, NameClaims } from '../ports';

export interface ReferenceDeps {
  images: Pick<ImageRecords, 'find'> & Pick<NameClaims, 'imageIdOfName'>;
  codecs: IdCodecs;
  /** This host's base URL: a link of another host names none of its images. */
  publicUrl: string;
}

/**
 * The image a reference names, for the operator's tools: a viewer URL (`/image/{id}` or `/image/{slug}.{id}`), a file
 * URL (the original or a rendition, `/images/YYYY/MM/DD/...`) of this host, or an `id_encoded`.
 */
export async function imageOfReference(deps: ReferenceDeps, reference: string): Promise<ImageRecord> {
  const text = reference.trim();
  let url: URL | undefined;
  try {
    url = /^https?:\/\//i.test(text) ? new URL(text) : undefined;
  } catch {
    throw new AdminError(`not a URL: ${text}`);
  }
  // a link of another host names none of this host's images, whatever its path
  const ours = new URL(deps.publicUrl);
  if (url && url.host !== ours.host) throw new AdminError(`not a link of this host (${ours.host}): ${text}`);
  const path = url?.pathname;
  let id: number | undefined;
  if (path?.startsWith(`/${IMAGES_PREFIX}`)) {
    // a rendition's key names its original's: `name.th.png` -> `name.png`
    const key = decodeURIComponent(path.slice(1)).replace(/\.(th|md)(\.[a-z0-9]+)$/, '$2');
    id = await deps.images.imageIdOfName(key);
    if (id === undefined) throw new AdminError(`no image has the file ${path}`);
  } else {
    const route = path === undefined ? undefined : routeOf(path);
    const idEncoded = route === undefined ? text : route.page === 'viewer' || route.page === 'delete' ? route.idEncoded : '';
    if (!/^[A-Za-z0-9]+$/.test(idEncoded)) throw new AdminError(`not an image reference: ${text}`);
    id = (await deps.codecs.codec()).decode(idEncoded);
    if (id === undefined) throw new AdminError(`not an image id: ${idEncoded}`);
  }
  const record = await deps.images.find(id);
  if (!record) throw new AdminError(`no image ${text}: unknown, taken down, or removed for good`);
  return record;
}
