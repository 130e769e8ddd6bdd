import { dayOf } from '../daily-stats';
import { ServiceError } from '../errors';
import type { FloodGuard } from '../flood';
import type { IdCodecs } from '../image/id-codec';
import { viewerUrl } from '../image/links';
import type { Clock, DailyStats, ImageRecords, Logger, Report, ReportList } from '../ports';

/** Why a viewer may report an image, as the form offers it (`docs/moderation.md`, "Reports"). */
export const REPORT_REASONS = {
  illegal: 'Illegal content',
  sexual: 'Nudity or sexual content',
  minor: 'It may involve a minor',
  violence: 'Violence or gore',
  hate: 'Harassment or hate',
  copyright: 'Copyright infringement',
  spam: 'Spam or scam',
  other: 'Something else',
} as const;

export type ReportReason = keyof typeof REPORT_REASONS;

/** The longest note a report keeps, in characters. */
export const MAX_REPORT_NOTE = 500;

export interface ImageReportsDeps {
  reports: Pick<ReportList, 'add'>;
  images: Pick<ImageRecords, 'find'>;
  codecs: IdCodecs;
  /** Reports a client may send an hour (`REPORTS_PER_HOUR`). */
  guard: Pick<FloodGuard, 'reserve'>;
  stats: Pick<DailyStats, 'add'>;
  clock: Clock;
  logger: Logger;
}

/**
 * Viewers' reports: one per client and image, at most `REPORTS_PER_HOUR` a client, kept for the operator
 * (`npm run admin -- reports`), counted in the day's figures.
 */
export class ImageReports {
  constructor(private readonly deps: ImageReportsDeps) {}

  /** `received`, or `already` when this client reported this image before (nothing more is kept). */
  async report(
    idEncoded: string,
    clientIp: string,
    form: { reason: string | undefined; note: string | undefined },
  ): Promise<'received' | 'already'> {
    const reason = form.reason ?? '';
    if (!Object.hasOwn(REPORT_REASONS, reason)) throw new ServiceError('InvalidReport', 'Choose why you report this image');
    const note = (form.note ?? '').trim();
    if ([...note].length > MAX_REPORT_NOTE)
      throw new ServiceError('InvalidReport', `The note is too long - max ${MAX_REPORT_NOTE} characters`);
    const id = (await this.deps.codecs.codec()).decode(idEncoded);
    const record = id === undefined ? undefined : await this.deps.images.find(id);
    if (!record || record.status !== 'active') throw new ServiceError('NotFound', 'Image not found');
    const atMs = this.deps.clock.nowMs();
    const slot = await this.deps.guard.reserve(clientIp, atMs);
    const report: Report = { imageId: record.id, clientIp, reason, note, atMs };
    if (!(await this.deps.reports.add(report))) {
      await slot.release();
      return 'already';
    }
    // the report is kept: a figure that cannot be added is logged, not answered as a failure
    await this.deps.stats.add(dayOf(atMs), { reports: 1 }).catch((error: unknown) => {
      this.deps.logger.warn('a report was not counted in the day', { error: String(error) });
    });
    this.deps.logger.info('image reported', { imageId: record.id, reason });
    return 'received';
  }
}

/** What viewers said of one image. */
export interface ReportSummary {
  /** How many clients reported it. */
  count: number;
  /** How many gave each reason. */
  reasons: Record<string, number>;
  /** What they added, newest first (empty notes left out). */
  notes: string[];
  /** When the last report came; 0 when none did. */
  lastAtMs: number;
}

/** An image viewers reported, with what they said. */
export interface ReportedImage extends ReportSummary {
  idEncoded: string;
  viewerUrl: string;
}

/** The reports of one image, summed up: `admin reports` and `admin info` show them so. */
export function summarize(reports: readonly Report[]): ReportSummary {
  const newest = [...reports].sort((a, b) => b.atMs - a.atMs);
  const reasons: Record<string, number> = {};
  for (const { reason } of reports) reasons[reason] = (reasons[reason] ?? 0) + 1;
  const notes = newest.map((report) => report.note).filter((note) => note !== '');
  return { count: reports.length, reasons, notes, lastAtMs: newest[0]?.atMs ?? 0 };
}

/**
 * The images viewers reported and still shown, most reported first (`npm run admin -- reports`); the reports of images
 * gone for good meanwhile are resolved on the way. The whole table is read.
 */
export async function reportedImages(deps: {
  reports: ReportList;
  images: Pick<ImageRecords, 'find'>;
  codecs: IdCodecs;
  publicUrl: string;
}): Promise<ReportedImage[]> {
  const byImage = new Map<number, Report[]>();
  for await (const page of deps.reports.all()) {
    for (const report of page) byImage.set(report.imageId, [...(byImage.get(report.imageId) ?? []), report]);
  }
  const codec = await deps.codecs.codec();
  const reported: ReportedImage[] = [];
  for (const [imageId, reports] of byImage) {
    const status = (await deps.images.find(imageId))?.status;
    if (status !== 'active') {
      // gone for good; one deleted and kept for a restore keeps its reports (they come back with it)
      if (status === undefined) await deps.reports.resolve(imageId);
      continue;
    }
    const idEncoded = codec.encode(imageId);
    reported.push({ idEncoded, viewerUrl: viewerUrl(deps.publicUrl, idEncoded), ...summarize(reports) });
  }
  return reported.sort((a, b) => b.count - a.count || b.lastAtMs - a.lastAtMs);
}
