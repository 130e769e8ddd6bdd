/** What the runtime gives: settings, time, randomness, logs, metrics, fetched sources. */

/** Operator settings kept in SSM Parameter Store. */
export interface SettingsStore {
  /** The API key; undefined when the parameter is missing or empty. */
  apiKey(): Promise<string | undefined>;
  /** The flood-limits parameter's text; undefined when it is missing. */
  floodLimits(): Promise<string | undefined>;
  /** The salt of the id codec, created once per deployment. */
  idSalt(): Promise<string>;
  /** The public base URL the stack wrote; undefined when missing. */
  publicUrl(): Promise<string | undefined>;
  /** The secret header values CloudFront may send: the `/origin-secret` parameter's lines (the first is sent). */
  originSecrets(): Promise<readonly string[]>;
  /** The CloudFront distribution in front of the files; undefined when there is none (local). */
  distributionId(): Promise<string | undefined>;
}

/** Fetches the bytes behind a URL source. */
export interface SourceFetcher {
  fetch(url: string, maxBytes: number): Promise<{ bytes: Uint8Array; filename: string }>;
}

export interface Clock {
  nowMs(): number;
  sleep(ms: number): Promise<void>;
}

export interface RandomSource {
  /** `chars` random lowercase hex characters. */
  hex(chars: number): string;
  /** A random integer from 1 to 2^53 - 1 (every safe positive integer), uniformly. */
  safeInteger(): number;
}

/** Structured log lines; the Powertools Logger fits this shape. */
export interface Logger {
  info(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  error(message: string, ...extra: Record<string, unknown>[]): void;
}

/** Where the service writes its figures (CloudWatch embedded metric format in Lambda; nowhere, or a fake, elsewhere). */
export interface Metrics {
  /** Adds a value to a metric; with a dimension, the value counts under that dimension's value only. */
  add(name: string, unit: MetricUnit, value: number, dimension?: { name: string; value: string }): void;
  /** Writes what is buffered; called at the end of each invocation. */
  flush(): void;
}

export type MetricUnit = 'Count' | 'Milliseconds' | 'Bytes' | 'Seconds';
