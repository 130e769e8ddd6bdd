import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ServiceError } from '../core/errors';
import { isReportToken } from '../core/moderation/report-tokens';
import type { ImageReports } from '../core/moderation/reports';
import { bodyBytes, headerValue } from './api-event';
import { siteOf } from './page-shell';
import { reportedPage } from './pages';
import { clientIp, refuseCrossSite, type OriginSettings } from './request-origin';
import { pageResponse } from './responses';

/** The longest report form a request may carry: a reason and a note of 500 characters, each 9 bytes at most escaped. */
const MAX_REPORT_BODY_BYTES = 8192;

export interface ReportRouteDeps {
  reports: ImageReports;
  settings: OriginSettings;
  /** The deployment's secret the report form's tokens are made with (`core/moderation/report-tokens.ts`). */
  formSecret: () => Promise<string>;
}

/**
 * POST from the viewer page's report form (same site only): a viewer's report of the image, answered with a page. A
 * browser that says where the request comes from is taken at its word; one that does not (its Origin `null` under the
 * pages' no-referrer policy, or none), by the form's token.
 */
export async function report(
  deps: ReportRouteDeps,
  event: APIGatewayProxyEvent,
  { idEncoded }: { idEncoded: string },
): Promise<APIGatewayProxyResult> {
  const body = bodyBytes(event);
  if (body.length > MAX_REPORT_BODY_BYTES) throw new ServiceError('InvalidReport', 'The report is too long');
  const form = new URLSearchParams(body.toString('utf8'));
  const ip = clientIp(event, deps.settings);
  const origin = headerValue(event, 'origin');
  const unmarked = headerValue(event, 'sec-fetch-site') === undefined && (origin === undefined || origin === 'null');
  const vouched = unmarked && isReportToken(await deps.formSecret(), form.get('token'), idEncoded, ip, Date.now());
  if (!vouched) refuseCrossSite(event, deps.settings, 'report');
  const outcome = await deps.reports.report(idEncoded, ip, {
    reason: form.get('reason') ?? undefined,
    note: form.get('note') ?? undefined,
  });
  return pageResponse(200, reportedPage(siteOf(deps.settings), outcome), deps.settings.publicUrl);
}
