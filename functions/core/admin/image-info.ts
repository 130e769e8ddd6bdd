import { holdsOf } from '../lifecycle/holds';
import type { IdCodecs } from '../image/id-codec';
import { viewerUrl } from '../image/links';
import type { ImageRecord, Report, ReportList, StoredFile } from '../ports';
import { summarize } from '../moderation/reports';

export interface InfoDeps {
  reports: Pick<ReportList, 'all'>;
  codecs: IdCodecs;
  publicUrl: string;
}

/** Everything the service keeps of an image, for `npm run admin -- info` (`docs/operations.md`). */
export interface ImageInfo {
  idEncoded: string;
  viewerUrl: string;
  /** `active`, `deleting` (being removed), or `removed` (restorable until `restorableUntilMs`). */
  status: ImageRecord['status'];
  title: string;
  description: string | null;
  originalFilename: string;
  files: Array<Pick<StoredFile, 'key' | 'size' | 'width' | 'height' | 'mime'>>;
  animated: boolean;
  createdAtMs: number;
  expiresAtMs: number | null;
  restorableUntilMs: number | null;
  views: number;
  clientIp: string;
  nsfw: boolean;
  nsfwScore: number | null;
  /** The md5 of the bytes as uploaded and as stored (what a block of its bytes names). */
  md5: { uploaded: string; stored: string };
  /** Its picture's PDQ hashes and their quality; none for an animation, a flat picture or an older record. */
  pdq: { hashes: string[]; quality: number | null };
  /** Delete links handed out (one per upload answered with it) and not used. */
  deleteLinks: number;
  /** The end each of those uploads asked for, soonest first, null (none) last: the image ends with the latest. */
  holdEnds: Array<number | null>;
  /** Viewers' reports of it, by reason, with their notes, newest first. */
  reports: { count: number; reasons: Record<string, number>; notes: string[] };
}

/** What `info` shows of a record; the reports table is read whole (an operator's tool). */
export async function imageInfo(deps: InfoDeps, record: ImageRecord): Promise<ImageInfo> {
  const idEncoded = (await deps.codecs.codec()).encode(record.id);
  const mine: Report[] = [];
  for await (const page of deps.reports.all()) mine.push(...page.filter((report) => report.imageId === record.id));
  const { count, reasons, notes } = summarize(mine);
  const file = ({ key, size, width, height, mime }: StoredFile) => ({ key, size, width, height, mime });
  return {
    idEncoded,
    viewerUrl: viewerUrl(deps.publicUrl, idEncoded),
    status: record.status,
    title: record.title,
    description: record.description,
    originalFilename: record.originalFilename,
    files: [file(record.original), file(record.medium), file(record.thumb)],
    animated: record.animated,
    createdAtMs: record.createdAtMs,
    expiresAtMs: record.expiresAtMs,
    restorableUntilMs: record.restorableUntilMs ?? null,
    views: record.views,
    clientIp: record.clientIp,
    nsfw: record.nsfw,
    nsfwScore: record.nsfwScore ?? null,
    md5: { uploaded: record.sourceMd5, stored: record.original.md5 },
    pdq: { hashes: record.perceptual?.hashes ?? [], quality: record.perceptual?.quality ?? null },
    deleteLinks: record.deleteTokenHashes.length,
    holdEnds: Object.values(holdsOf(record)).sort((a, b) => (a ?? Infinity) - (b ?? Infinity)),
    reports: { count, reasons, notes },
  };
}
