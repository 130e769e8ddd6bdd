import { deleteTokens } from '../image/delete-tokens';
import { changeHolds } from './holds';
import { ServiceError } from '../errors';
import type { IdCodecs } from '../image/id-codec';
import { toImageView, type ImageView } from './image-view';
import { isLive } from './lifecycle';
import type { Clock, ImageRecord, ImageRecords, ImageRemovals } from '../ports';
import { removeFiles, type RemovalDeps } from './remove-image';

/** No CDN purger: a delete link's purge is the sweep's, batched with the others of its run (`planPurge`). */
export interface ImageAccessDeps extends Omit<RemovalDeps, 'purger' | 'images'> {
  images: Pick<ImageRecords, 'find' | 'addView' | 'writeHolds'> & Pick<ImageRemovals, 'markDeleting'>;
  clock: Clock;
  codecs: IdCodecs;
  publicUrl: string;
}

/** The reads of stored images (viewer, delete page) and deletes by delete link. */
export class ImageAccess {
  constructor(private readonly deps: ImageAccessDeps) {}

  /**
   * The image behind an encoded id, with one more view counted; 404 when it is not shown (anymore). The count is
   * best effort: a counter that cannot be written (a viral image's item past its 1,000 writes a second) still shows
   * the page, with the count read.
   */
  async view(idEncoded: string): Promise<ImageView> {
    const record = await this.liveRecord(idEncoded);
    const counted = await this.deps.images.addView(record.id).catch((error: unknown) => {
      this.deps.logger.warn('view not counted', { id: record.id, error });
      return undefined;
    });
    return toImageView(counted ?? record, this.deps.publicUrl, idEncoded);
  }

  /** The image a delete link points at, if the link is valid; it deletes nothing (GET, link previewers). */
  async deletable(idEncoded: string, token: string): Promise<ImageView> {
    return toImageView((await this.deletableRecord(idEncoded, token)).record, this.deps.publicUrl, idEncoded);
  }

  /**
   * What a valid delete link asks. An image is held by every upload answered with it: the first, and each duplicate
   * answered with it (same bytes, same client, within a day), each with a delete link of its own (`holds.ts`). A link
   * takes its own upload away; the image goes (its three objects, its duplicate entry, its record) when no other hold
   * is left whose time is not up, so one person behind a shared address cannot delete another's upload, and the image
   * ends when the latest of those left does. Answers which of the two happened.
   * The files go at once; their cached copies at the CDN go with the next sweep run, which purges every removal of
   * the run together within its budget of paths (what one client's deletes can cost is bounded: docs/deployment.md),
   * then forgets the record.
   */
  async delete(idEncoded: string, token: string): Promise<'deleted' | 'released'> {
    const { record, tokenHash } = await this.deletableRecord(idEncoded, token);
    const nowMs = this.deps.clock.nowMs();
    let last = false;
    const after = await changeHolds(this.deps.images, record, (holds) => {
      // gone already: this link's release met by its retry
      if (!(tokenHash in holds)) return undefined;
      const others = Object.fromEntries(Object.entries(holds).filter(([hash]) => hash !== tokenHash));
      last = !Object.values(others).some((end) => end === null || end > nowMs);
      return last ? undefined : others;
    });
    if (after && !last) return 'released';
    // From here the image answers 404, and is due: the sweep purges it and finishes the removal.
    if (!(await this.deps.images.markDeleting(record.id, tokenHash, nowMs))) throw notFound();
    await removeFiles(this.deps, record);
    return 'deleted';
  }

  private async deletableRecord(idEncoded: string, token: string): Promise<{ record: ImageRecord; tokenHash: string }> {
    const record = await this.liveRecord(idEncoded);
    const tokenHash = deleteTokens.hashOf(token);
    if (tokenHash === undefined || !record.deleteTokenHashes.includes(tokenHash)) throw notFound();
    return { record, tokenHash };
  }

  private async liveRecord(idEncoded: string): Promise<ImageRecord> {
    const id = (await this.deps.codecs.codec()).decode(idEncoded);
    const record = id === undefined ? undefined : await this.deps.images.find(id);
    if (!record || !isLive(record, this.deps.clock.nowMs())) throw notFound();
    return record;
  }
}

function notFound(): ServiceError {
  return new ServiceError('NotFound', 'Image not found');
}
