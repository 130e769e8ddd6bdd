import { AdminError } from './admin-error';
import { BanAdmin } from './ban-admin';
import { BlockAdmin, TAKEDOWN_PART, takedownReason, type BlockAdminDeps } from './block-admin';
import { dayOf, NO_FIGURES, type DailyStats, type DayFigures } from '../daily-stats';
import type { IdCodecs } from '../image/id-codec';
import { imageInfo, type ImageInfo } from './image-info';
import { imageOfReference } from './image-reference';
import { viewerUrl } from '../image/links';
import { reportedImages, type ReportedImage } from '../moderation/reports';
import {
  canonicalRange,
  comparableHashes,
  inRange,
  PICTURE_MATCH_DISTANCE,
  type BanList,
  type BlockList,
} from '../moderation/moderation';
import type {
  Clock,
  ImageRecord,
  ImageRecords,
  ImageRemovals,
  ImageScan,
  NameClaims,
  ReportList,
  StagedObjectStore,
  StagedUsage,
} from '../ports';
import type { PictureBlockStore } from '../moderation/picture-blocks';
import { fileKeys, removeImage, type RemovalDeps } from '../lifecycle/remove-image';
import { restoreImage, type Restored } from '../lifecycle/restore-image';
import { nearRecords, SIMILAR_DISTANCE, type SimilarImage } from '../moderation/similar-images';

export interface AdminDeps extends RemovalDeps {
  images: ImageRecords & ImageRemovals & Pick<NameClaims, 'imageIdOfName'> & ImageScan;
  codecs: IdCodecs;
  moderation: BanList & BlockList;
  pictureBlocks: PictureBlockStore;
  /** The hashes a block adds for a picture besides its record's (`BlockAdminDeps`' `pictureCrops`). */
  pictureCrops?: BlockAdminDeps['pictureCrops'] | undefined;
  stats: DailyStats;
  reports: ReportList;
  /** The two-step upload's staging place, whose bytes the figures show. */
  staged: Pick<StagedObjectStore, 'usage'>;
  clock: Clock;
  /** The service's public base URL, for the links the commands print. */
  publicUrl: string;
}

/** What a takedown did: the image named, every image of the same bytes it removed (that one first), what it blocked. */
export interface Takedown {
  idEncoded: string;
  /** Each image taken down; `distance`: a similar picture's, in PDQ bits (`--similar`). */
  removed: Array<{ idEncoded: string; clientIp: string; files: string[]; distance?: number }>;
  blocked: string[];
  /** The PDQ hashes of the picture blocked with it, and how many of its crops' and of the pictures inside it (`partsOf`). */
  blockedPictures: string[];
  blockedCrops: number;
  /** With `inside` only: the hashes of the pictures found inside it, blocked too. */
  blockedInside: number;
  /** Viewers' reports of the images taken down, resolved with them. */
  resolvedReports: number;
}

export interface ListedUpload {
  idEncoded: string;
  viewerUrl: string;
  size: number;
  clientIp: string;
  createdAtMs: number;
  expiresAtMs: number | null;
  /** Marked `nsfw`, by its uploader or by the classifier. */
  nsfw: boolean;
  /** The NSFW classifier's score, 0 to 1; null when it did not run (`NSFW_POLICY` off, an older record). */
  nsfwScore: number | null;
}

/**
 * The operator's commands (`npm run admin`, `docs/operations.md`): take an image down, ban address ranges, see what is
 * uploaded. They run with the operator's AWS credentials against the stores, never through a public endpoint.
 */
export class Admin {
  /** The blocked bytes and pictures: listed, added, lifted. */
  readonly blocks: BlockAdmin;
  /** The address ranges refused: listed, added, lifted. */
  readonly bans: BanAdmin;

  constructor(private readonly deps: AdminDeps) {
    this.blocks = new BlockAdmin(deps);
    this.bans = new BanAdmin(deps);
  }

  /** The image a reference names (`image-reference.ts`). */
  resolve(reference: string): Promise<ImageRecord> {
    return imageOfReference(this.deps, reference);
  }

  /**
   * Takes an image down for every upload that holds it: its files, its record, its copies at the CDN (one
   * invalidation). The same bytes uploaded by other clients are other images (duplicates are per client); they are
   * found by their fingerprints (the bytes as uploaded, and as stored) and taken down too. With `block`, those
   * fingerprints are kept first, so the same bytes uploaded again are refused. With `similar`, every stored image
   * whose picture is within the block's distance of this one goes too.
   */
  async takedown(reference: string, options: { block: boolean; similar?: boolean; inside?: boolean }): Promise<Takedown> {
    if (options.inside && !options.block) throw new AdminError('--inside blocks the pictures inside it: give --block too');
    const record = await this.resolve(reference);
    // read while the original is there: the picture's crops are blocked with it
    const parts = options.block
      ? await this.blocks.partsOf(record, { inside: options.inside === true })
      : { crops: [], inside: [] };
    const near = options.similar ? await nearRecords(this.deps.images, record, PICTURE_MATCH_DISTANCE, 'any') : [];
    const codec = await this.deps.codecs.codec();
    const fingerprints = [...new Set([record.sourceMd5, record.original.md5])];
    const nowMs = this.deps.clock.nowMs();
    const idEncoded = codec.encode(record.id);
    const copies: Array<{ copy: ImageRecord; distance?: number }> = [{ copy: record }];
    // whatever their status: one deleted by its link and kept for a restore goes for good too
    for await (const page of this.deps.images.withContent(fingerprints)) {
      copies.push(...page.filter((copy) => copy.id !== record.id).map((copy) => ({ copy })));
    }
    for (const { record: copy, distance } of near)
      if (!copies.some((one) => one.copy.id === copy.id)) copies.push({ copy, distance });
    const removed: Takedown['removed'] = [];
    let resolvedReports = 0;
    for (const { copy, distance } of copies) {
      // from here the image answers 404, and the sweep finishes the removal should this stop half way
      if (!(await this.deps.images.markTakenDown(copy.id, nowMs))) {
        if (copy === record) throw new AdminError(`no image ${reference}: taken down already`);
        continue;
      }
      await removeImage(this.deps, copy);
      const files = fileKeys(copy);
      resolvedReports += await this.deps.reports.resolve(copy.id);
      removed.push({
        idEncoded: codec.encode(copy.id),
        clientIp: copy.clientIp,
        files,
        ...(distance === undefined ? {} : { distance }),
      });
    }
    // blocked once everything is down: a block that fails leaves nothing online (the error names what to import)
    const blockedPictures = options.block ? comparableHashes(record.perceptual) : [];
    // each part its own batch, so that `blocks` says which hashes came from which part, and one lifts alone
    const reason = takedownReason(idEncoded);
    const batches = [
      { hashes: blockedPictures, reason },
      { hashes: parts.crops, reason: `${reason}, ${TAKEDOWN_PART.crops}` },
      { hashes: parts.inside, reason: `${reason}, ${TAKEDOWN_PART.inside}` },
    ];
    if (options.block) await this.block(fingerprints, batches, reason);
    // a takedown keeps nothing: the versions the bucket keeps for a restore go last, once all is down and blocked
    await this.purgeVersions(removed.flatMap((one) => one.files));
    return {
      idEncoded,
      removed,
      blocked: options.block ? fingerprints : [],
      blockedPictures,
      blockedCrops: parts.crops.length,
      blockedInside: parts.inside.length,
      resolvedReports,
    };
  }

  /** Everything kept of an image, whatever its status (`imageInfo`). */
  async info(reference: string): Promise<ImageInfo> {
    return imageInfo(this.deps, await this.resolve(reference));
  }

  /** Brings back a removed image, files and record (`restoreImage`); answers its viewer URL. */
  async restore(reference: string): Promise<Restored & { idEncoded: string; viewerUrl: string }> {
    const record = await this.resolve(reference);
    const restored = await restoreImage(this.deps, record, reference);
    const idEncoded = (await this.deps.codecs.codec()).encode(record.id);
    return { ...restored, idEncoded, viewerUrl: viewerUrl(this.deps.publicUrl, idEncoded) };
  }

  /** Removes every version of the files; a failure names them, so that they can be removed by hand. */
  private async purgeVersions(files: string[]): Promise<void> {
    try {
      await this.deps.objects.purge(files);
    } catch (cause) {
      throw new AdminError(
        `taken down, but earlier versions of its files are kept (${String(cause)}): remove every version of ${files.join(' ')} (s3:ListBucketVersions, s3:DeleteObjectVersion)`,
        { cause },
      );
    }
  }

  /** Blocks an image's bytes and picture (by batches of hashes), so that the same bytes, and an edited copy, are refused. */
  private async block(
    fingerprints: string[],
    batches: Array<{ hashes: string[]; reason: string }>,
    reason: string,
  ): Promise<void> {
    const pictures = batches.flatMap((batch) => batch.hashes);
    try {
      const nowMs = this.deps.clock.nowMs();
      for (const md5 of fingerprints) await this.deps.moderation.block(md5, reason, nowMs);
      if (pictures.length > 0) await this.blocks.addPictureBatches(batches);
    } catch (cause) {
      // one a line, as `block-hashes import` reads them
      const hashes = pictures.length > 0 ? `; to block its picture, import these PDQ hashes:\n${pictures.join('\n')}` : '';
      throw new AdminError(`taken down, but not blocked (${String(cause)})${hashes}`, { cause });
    }
  }

  /** Recent uploads, newest first: since `sinceMs`, from one address or range if asked, at most `limit`. */
  async list(options: { sinceMs: number; ip?: string; limit: number }): Promise<ListedUpload[]> {
    const range = options.ip === undefined ? undefined : canonicalRange(options.ip);
    if (options.ip !== undefined && !range) throw new AdminError(`not an address or CIDR range: ${options.ip}`);
    const codec = await this.deps.codecs.codec();
    const found: ImageRecord[] = [];
    for await (const page of this.deps.images.recent(options.sinceMs)) {
      found.push(...page.filter((record) => record.status === 'active' && (!range || inRange(record.clientIp, range))));
    }
    return found
      .sort((a, b) => b.createdAtMs - a.createdAtMs)
      .slice(0, options.limit)
      .map((record) => {
        const idEncoded = codec.encode(record.id);
        return {
          idEncoded,
          viewerUrl: viewerUrl(this.deps.publicUrl, idEncoded),
          size: record.original.size,
          clientIp: record.clientIp,
          createdAtMs: record.createdAtMs,
          expiresAtMs: record.expiresAtMs,
          nsfw: record.nsfw,
          nsfwScore: record.nsfwScore ?? null,
        };
      });
  }

  /** Stored images whose picture is within `withinBits` of this one's, nearest first; the whole table is read. */
  async similar(reference: string, withinBits = SIMILAR_DISTANCE): Promise<SimilarImage[]> {
    const codec = await this.deps.codecs.codec();
    return (await nearRecords(this.deps.images, await this.resolve(reference), withinBits)).map(({ record, distance }) => {
      const idEncoded = codec.encode(record.id);
      const { clientIp, createdAtMs } = record;
      return { idEncoded, viewerUrl: viewerUrl(this.deps.publicUrl, idEncoded), distance, clientIp, createdAtMs };
    });
  }

  /** The images viewers reported, most reported first (`reportedImages`). */
  reports(): Promise<ReportedImage[]> {
    return reportedImages(this.deps);
  }

  /** The figures of the last `days` days (UTC), oldest first. */
  async stats(days: number): Promise<Array<{ day: string } & DayFigures>> {
    const nowMs = this.deps.clock.nowMs();
    const wanted = Array.from({ length: days }, (_, index) => dayOf(nowMs - (days - 1 - index) * 86_400_000));
    const figures = await this.deps.stats.read(wanted);
    return wanted.map((day) => ({ day, ...(figures.get(day) ?? NO_FIGURES) }));
  }

  /** What waits in the staging place now: two-step uploads under way, and leftovers the sweep has not removed yet. */
  async staged(): Promise<StagedUsage> {
    return this.deps.staged.usage();
  }
}
