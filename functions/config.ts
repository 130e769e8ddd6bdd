import { parameterNames, type SettingsParameters } from './adapters/parameter-names';
import { isValidTimeZone } from './core/image/formatting';
import type { NsfwRule } from './core/moderation/moderation';
import type { NamingMode } from './core/upload/naming';
import type { DuplicatePolicy } from './core/upload/duplicate-guard';
import type { IdScheme } from './core/image/id-codec';
import { parseExpirationSeconds } from './core/upload/upload-request';
import { REPLACED_SETTINGS, SETTINGS, type SettingName } from './settings-table';

/** Everything the function reads from its environment, checked once at cold start. */
export interface Config {
  bucketName: string;
  tableName: string;
  /** Base of every URL in responses, without a trailing slash; undefined: read from the `/public-url` parameter. */
  publicUrl: string | undefined;
  /** Names of the SSM parameters, all under PARAMETER_PREFIX. */
  parameters: SettingsParameters;
  /** Only requests that carry the distribution's secret origin header are served (AWS, behind CloudFront). */
  originVerify: boolean;
  /** SHA-256 (hex) of the origin secret CloudFront was deployed with; undefined: the parameter's secrets only. */
  originSecretSha256: string | undefined;
  /** How long a removed image's record is kept, restorable. */
  keepDeletedDays: number;
  /** How long the SSM parameters are kept (all read in one call). */
  parametersCacheSeconds: number;
  /** How long the bans and the blocked pictures are kept. */
  moderationCacheSeconds: number;
  timeZone: string;
  /** The site's name in the pages' header; undefined: the public URL's host name. */
  siteName: string | undefined;
  maxUploadBytes: number;
  maxUrlUploadBytes: number;
  maxStagedUploadBytes: number;
  uploadUrlsPerHour: number;
  statsFlushSeconds: number;
  maxPixels: number;
  maxHeicPixels: number;
  maxFrames: number;
  imagingTimeLimitSeconds: number;
  thumbSize: number;
  mediumWidth: number;
  naming: NamingMode;
  duplicates: DuplicatePolicy;
  idScheme: IdScheme;
  idPadding: number;
  forcedExpirationSeconds: number | undefined;
  corsOrigins: readonly string[];
  keepMetadata: boolean;
  urlFetchAllowHosts: readonly string[];
  /** Viewers' reports a client may send an hour; 0: no limit. */
  reportsPerHour: number;
  /** URL sources per client and hour that may fail before the client's URL uploads are refused; 0: no limit. */
  urlFetchFailuresPerHour: number;
  urlFetchesPerHour: number;
  urlFetchesAtOnce: number;
  urlFetchMegabytesPerHour: number;
  /** What the NSFW classifier's verdict does (`docs/moderation.md`); `off` does not load it. */
  nsfw: NsfwRule;
}

/** Reads settings from the environment, each checked once; every problem is kept, to be told at once. */
function settingReader(env: Readonly<Record<string, string | undefined>>) {
  const problems: string[] = [];
  const raw = (name: SettingName): string => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? (SETTINGS[name].default ?? '') : value;
  };
  return {
    problems,
    raw,
    required: (name: SettingName): string => {
      const value = raw(name);
      if (value === '') problems.push(`${name} is required`);
      return value;
    },
    integer: (name: SettingName, min: number, max: number): number => {
      const text = raw(name);
      const value = /^\d+$/.test(text) ? Number(text) : NaN;
      if (!(value >= min && value <= max)) problems.push(`${name} must be a whole number from ${min} to ${max}, got "${text}"`);
      return value;
    },
    oneOf: <T extends string>(name: SettingName, allowed: readonly T[]): T => {
      const value = raw(name);
      if (!(allowed as readonly string[]).includes(value))
        problems.push(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
      return value as T;
    },
    /** A value of this shape; empty: undefined. */
    matching: (name: SettingName, pattern: RegExp, what: string): string | undefined => {
      const value = raw(name);
      if (value === '') return undefined;
      if (!pattern.test(value)) problems.push(`${name} must be ${what}, got "${value}"`);
      return value;
    },
    list: (name: SettingName): string[] =>
      raw(name)
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
  };
}

type SettingReader = ReturnType<typeof settingReader>;

/** The settings that are more than a number or a choice: the public URL, the parameters' prefix, time and expiry. */
function readShaped(read: SettingReader): Pick<Config, 'publicUrl' | 'parameters' | 'timeZone' | 'forcedExpirationSeconds'> {
  const { raw, problems } = read;
  const publicUrl = raw('PUBLIC_URL').replace(/\/+$/, '');
  if (publicUrl !== '' && !isPublicUrl(publicUrl)) problems.push(`PUBLIC_URL must be an http(s) URL, got "${publicUrl}"`);
  const prefix = raw('PARAMETER_PREFIX').replace(/\/+$/, '');
  if (!/^\/[A-Za-z0-9_.\-/]+$/.test(prefix))
    problems.push(`PARAMETER_PREFIX must be a path such as /image-upload, got "${prefix}"`);
  const timeZone = raw('TIME_ZONE');
  if (!isValidTimeZone(timeZone)) problems.push(`TIME_ZONE is not a known time zone: "${timeZone}"`);
  let forcedExpirationSeconds: number | undefined;
  try {
    forcedExpirationSeconds = parseExpirationSeconds(raw('FORCED_EXPIRATION'));
  } catch {
    problems.push(`FORCED_EXPIRATION must be seconds or an ISO-8601 duration, got "${raw('FORCED_EXPIRATION')}"`);
  }
  return {
    publicUrl: publicUrl === '' ? undefined : publicUrl,
    parameters: parameterNames(prefix),
    timeZone,
    forcedExpirationSeconds,
  };
}

/** Settings that cannot be used: every problem, each on a line of its own. A person's mistake, not a bug. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n- ${problems.join('\n- ')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and checks the environment; throws one error that lists every problem. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Readonly<Config> {
  const read = settingReader(env);
  const { integer, oneOf, list } = read;
  const config: Config = {
    ...readShaped(read),
    bucketName: read.required('BUCKET_NAME'),
    tableName: read.required('TABLE_NAME'),
    originVerify: oneOf('ORIGIN_VERIFY', ['off', 'required']) === 'required',
    siteName: read.matching('SITE_NAME', /^[^\p{Cc}]{1,60}$/u, 'up to 60 characters, none a control character'),
    originSecretSha256: read.matching('ORIGIN_SECRET_SHA256', /^[0-9a-f]{64}$/, 'a SHA-256 digest in lowercase hex'),
    keepDeletedDays: integer('KEEP_DELETED_DAYS', 0, 365),
    parametersCacheSeconds: integer('PARAMETERS_CACHE_SECONDS', 0, 300),
    moderationCacheSeconds: integer('MODERATION_CACHE_SECONDS', 0, 300),
    maxUploadBytes: integer('MAX_UPLOAD_BYTES', 1, 1_000_000_000),
    maxUrlUploadBytes: integer('MAX_URL_UPLOAD_BYTES', 1, 1_000_000_000),
    maxStagedUploadBytes: integer('MAX_STAGED_UPLOAD_BYTES', 1, 1_000_000_000),
    uploadUrlsPerHour: integer('UPLOAD_URLS_PER_HOUR', 0, 1_000_000),
    statsFlushSeconds: integer('STATS_FLUSH_SECONDS', 0, 3600),
    maxPixels: integer('MAX_PIXELS', 1, 1_000_000_000),
    maxFrames: integer('MAX_FRAMES', 1, 10_000),
    maxHeicPixels: integer('MAX_HEIC_PIXELS', 1, 1_000_000_000),
    imagingTimeLimitSeconds: integer('IMAGING_TIME_LIMIT_SECONDS', 1, 25),
    thumbSize: integer('THUMB_SIZE', 16, 2000),
    mediumWidth: integer('MEDIUM_WIDTH', 16, 4000),
    naming: oneOf('NAMING', ['original', 'random', 'id']),
    duplicates: oneOf('DUPLICATES', ['return-existing', 'reject', 'allow']),
    idScheme: oneOf('ID_SCHEME', ['random', 'sequential']),
    idPadding: integer('ID_PADDING', 0, 1_000_000),
    corsOrigins: list('CORS_ORIGINS'),
    keepMetadata: oneOf('KEEP_METADATA', ['true', 'false']) === 'true',
    urlFetchAllowHosts: list('URL_FETCH_ALLOW_HOSTS').map((host) => host.toLowerCase()),
    urlFetchFailuresPerHour: integer('URL_FETCH_FAILURES_PER_HOUR', 0, 1_000_000),
    urlFetchesPerHour: integer('URL_FETCHES_PER_HOUR', 0, 1_000_000),
    urlFetchesAtOnce: integer('URL_FETCHES_AT_ONCE', 0, 1_000),
    urlFetchMegabytesPerHour: integer('URL_FETCH_MEGABYTES_PER_HOUR', 0, 1_000_000_000),
    reportsPerHour: integer('REPORTS_PER_HOUR', 0, 1_000_000),
    nsfw: {
      policy: oneOf('NSFW_POLICY', ['off', 'flag', 'reject']),
      threshold: integer('NSFW_THRESHOLD_PERCENT', 1, 100) / 100,
    },
  };
  for (const [name, replacements] of Object.entries(REPLACED_SETTINGS))
    if (env[name] !== undefined) read.problems.push(`${name} is no longer read: use ${replacements.join(' or ')}`);
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  return Object.freeze(config);
}

/** An http(s) base URL without query or fragment: what every URL in responses starts with. */
export function isPublicUrl(text: string): boolean {
  return /^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(text);
}
