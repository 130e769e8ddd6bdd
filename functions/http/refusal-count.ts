import { ServiceError } from '../core/errors';
import type { RefusalCounter } from '../core/daily-stats';
import { METRIC, type Metrics } from '../core/metrics';
import type { UploadService } from '../core/upload/upload-service';
import { RequestError } from './request-errors';

/**
 * A failed upload in the metrics: refused (4xx) or failed (5xx), and by kind; and a refusal in the day's figures,
 * apart when the request did not carry the key (anyone can send those: they would drown what users meet).
 */
export async function countRefusal(
  deps: { metrics: Metrics; refusals?: RefusalCounter | undefined; service: Pick<UploadService, 'holdsKey'> },
  error: unknown,
  status: number,
  key: string | undefined,
): Promise<void> {
  const kind = error instanceof ServiceError || error instanceof RequestError ? error.kind : 'Unexpected';
  deps.metrics.add(status >= 500 ? METRIC.uploadFailed : METRIC.uploadRefused, 'Count', 1);
  if (status < 500 && deps.refusals) deps.refusals.count(await deps.service.holdsKey(key));
  deps.metrics.add(METRIC.uploadErrors, 'Count', 1, { name: 'Kind', value: kind });
  if (kind === 'Flooding') deps.metrics.add(METRIC.floodRefusals, 'Count', 1);
  if (kind === 'UrlFetchFailed') deps.metrics.add(METRIC.urlFetchFailures, 'Count', 1);
}
