import type { Metrics } from './ports';

export type { MetricUnit, Metrics } from './ports';

/** The CloudWatch namespace of every metric of the service. */
export const METRICS_NAMESPACE = 'ImageUpload';

/** The `service` dimension of each function's metrics. */
export const METRIC_SERVICE = { api: 'image-upload', sweep: 'image-upload-sweep' } as const;

/** Every metric the service emits; the stack's alarms and dashboard read the same names. */
export const METRIC = {
  /** An upload answered 200 with a newly stored image. */
  uploadStored: 'UploadStored',
  /** An upload answered 200 with an earlier image (a duplicate). */
  uploadDuplicate: 'UploadDuplicate',
  /** An upload refused with a 4xx; `UploadErrors` by `Kind` says why. */
  uploadRefused: 'UploadRefused',
  /** An upload that failed with a 5xx. */
  uploadFailed: 'UploadFailed',
  /** Failed uploads by error kind (`FileTooBig`, `DependencyFailed`, ...), as the dimension `Kind`. */
  uploadErrors: 'UploadErrors',
  /** Bytes written to S3 for one stored upload (original and renditions). */
  bytesStored: 'BytesStored',
  /** Time of the imaging step of one upload, decode to the last rendition. */
  imagingTime: 'ImagingTime',
  /**
   * The NSFW classifier's own work for one upload (the squeeze to its input and the model's run, on its thread), ms:
   * what moderation costs on the function's processor (`docs/moderation.md`, "Cost").
   */
  classifierTime: 'ClassifierTime',
  /** Uploads refused by the flood limits. */
  floodRefusals: 'FloodRefusals',
  /** URL sources that could not be fetched. */
  urlFetchFailures: 'UrlFetchFailures',
  /** Calls to a store (S3, DynamoDB, SSM, CloudFront) that failed, after the SDK's retries. */
  storeErrors: 'StoreErrors',
  /** Images the sweep removed (expired, dead uploads, unfinished deletes). */
  sweepRemoved: 'SweepRemoved',
  /** Images the sweep could not remove (the next run tries again). */
  sweepFailed: 'SweepFailed',
  /** Age of the oldest record due for the sweep and not yet removed, at the end of a run. */
  sweepBacklogAge: 'SweepBacklogAge',
  /** Paths sent to the CDN for invalidation. */
  purgedPaths: 'PurgedPaths',
  /** CDN invalidations that failed or were throttled (queued for the next sweep). */
  purgeFailures: 'PurgeFailures',
  /** Staged uploads the sweep removed: put past their token's life, or never finished. */
  stagedRemoved: 'StagedRemoved',
} as const;

/** The latency metric of one store: `S3Latency`, `DynamoDBLatency`, `SSMLatency`, `CloudFrontLatency`. */
export function storeLatencyMetric(store: string): string {
  return `${store}Latency`;
}

/** Metrics that go nowhere. */
export const NO_METRICS: Metrics = { add: () => undefined, flush: () => undefined };
