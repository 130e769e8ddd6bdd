import { parameterNames, type SettingsParameters } from './adapters/parameter-names';
import { isValidTimeZone } from './core/formatting';
import type { NsfwRule } from './core/moderation/moderation';
import type { NamingMode } from './core/upload/naming';
import type { DuplicatePolicy } from './core/upload/duplicate-guard';
import type { IdScheme } from './core/id-codec';
import { parseExpirationSeconds } from './core/upload/upload-request';

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

/** A setting of the function: its default, what it means, and how the docs show its default. */
interface Setting {
  default: string | undefined;
  /** What it does (Markdown), as `docs/settings.md` shows it. */
  meaning: string;
  /** The default as the docs show it, when not the value itself. */
  shown?: string;
  /** The stack sets it on the function: no context key. */
  setByStack?: true;
}

/**
 * Every setting: its environment variable, default and meaning. `docs/settings.md` is written from it (`npm run
 * docs:settings`), and the stack's context keys are its names in camel case (`THUMB_SIZE`: `thumbSize`).
 */
export const SETTINGS = {
  BUCKET_NAME: {
    default: undefined,
    meaning: 'S3 bucket of the stored files',
    shown: 'set by the stack / local server',
    setByStack: true,
  },
  TABLE_NAME: {
    default: undefined,
    meaning: 'DynamoDB table of the image records',
    shown: 'set by the stack / local server',
    setByStack: true,
  },
  PUBLIC_URL: {
    default: '',
    meaning: 'base of every URL in responses; in AWS empty, and read from the `/public-url` parameter the stack writes',
    shown: 'set by the local server',
    setByStack: true,
  },
  PARAMETER_PREFIX: {
    default: '/image-upload',
    meaning:
      'prefix of the SSM parameters `/api-key`, `/flood-limits`, `/id-salt`, `/public-url`, `/origin-secret`, `/distribution-id`',
  },
  ORIGIN_VERIFY: {
    default: 'off',
    meaning:
      "`required`: serve only requests that carry the distribution's secret origin header, and take the client IP from the viewer address CloudFront writes (`X-Viewer-Address`)",
    shown: '`off` (the stack sets `required`)',
    setByStack: true,
  },
  ORIGIN_SECRET_SHA256: {
    default: '',
    meaning:
      'SHA-256 (hex) of the origin secret CloudFront was deployed with: accepted whatever the `/origin-secret` parameter says, so that no edit of it locks the distribution out',
    shown: 'empty (the stack sets it)',
    setByStack: true,
  },
  KEEP_DELETED_DAYS: {
    default: '30',
    meaning:
      'days the record of a deleted or expired image is kept, restorable with `npm run admin -- restore` ([operations.md](operations.md#restoring-a-deleted-image)), as the bucket keeps its files; a takedown keeps nothing',
    shown: "30 (the stack sets it from `keepDeletedDays`, the bucket's own; `0` on the local stand-ins, which keep no versions)",
    setByStack: true,
  },
  PARAMETERS_CACHE_SECONDS: {
    default: '30',
    meaning:
      'how long each function instance keeps the SSM parameters (all read in one call): a rotated API key or edited flood limits are in force within this time',
  },
  MODERATION_CACHE_SECONDS: {
    default: '30',
    meaning:
      'how long each function instance keeps the bans and the blocked pictures: a ban, a block or their lifting is in force within this time',
  },
  TIME_ZONE: { default: 'UTC', meaning: 'IANA time zone of `date` and of the date folders' },
  MAX_UPLOAD_BYTES: { default: '10000000', meaning: 'largest image accepted, in bytes (decoded)' },
  MAX_URL_UPLOAD_BYTES: { default: '10000000', meaning: 'largest image fetched from a URL source, in bytes' },
  MAX_STAGED_UPLOAD_BYTES: {
    default: '32000000',
    meaning:
      'largest image of a two-step upload (`POST /api/1/upload-url`, then the upload with `upload_token`; [large-uploads.md](large-uploads.md))',
  },
  UPLOAD_URLS_PER_HOUR: {
    default: '100',
    meaning: 'upload URLs of the two-step upload handed out per client and hour (`0`: no limit)',
  },
  STATS_FLUSH_SECONDS: {
    default: '60',
    meaning:
      'how often each function instance writes its count of refused uploads to the daily figures of `npm run admin -- stats` (`0`: at once)',
  },
  MAX_PIXELS: { default: '100000000', meaning: 'most pixels of an image (all frames of an animation together)' },
  MAX_FRAMES: { default: '300', meaning: 'most frames of an animation' },
  MAX_HEIC_PIXELS: {
    default: '24000000',
    meaning: 'most pixels of a HEIC/HEIF image (its WebAssembly decoder takes about 40 MiB and 160 ms per megapixel)',
  },
  IMAGING_TIME_LIMIT_SECONDS: {
    default: '10',
    meaning:
      "longest the imaging of one upload may take; past it the upload answers `413`, code `615` (the function's timeout is 28 s)",
  },
  THUMB_SIZE: { default: '320', meaning: 'side of the square thumb, in pixels' },
  MEDIUM_WIDTH: { default: '500', meaning: 'width of the medium rendition, in pixels (never upscaled)' },
  NAMING: { default: 'original', meaning: 'stored file names: `original`, `random` (32 hex) or `id`' },
  DUPLICATES: { default: 'return-existing', meaning: 'repeated uploads: `return-existing`, `reject` or `allow`' },
  ID_SCHEME: {
    default: 'random',
    meaning:
      "`random`: ids drawn from 2^53, so links cannot be guessed; `sequential`: Chevereto's counter (for data migrated from it)",
  },
  ID_PADDING: { default: '999', meaning: 'padding of the id codec (Chevereto compatible)' },
  FORCED_EXPIRATION: {
    default: '',
    meaning: 'every guest upload expires after at most this (seconds or ISO-8601 duration)',
    shown: 'empty (never)',
  },
  CORS_ORIGINS: {
    default: '',
    meaning: 'comma-separated origins allowed to call the API from a browser (`*` for any)',
    shown: 'empty (none)',
  },
  KEEP_METADATA: { default: 'false', meaning: '`true` keeps EXIF/XMP/IPTC in stored originals' },
  URL_FETCH_ALLOW_HOSTS: {
    default: '',
    meaning: 'comma-separated host names a URL source may reach even on non-public addresses',
  },
  REPORTS_PER_HOUR: {
    default: '10',
    meaning: "viewers' reports of images a client may send an hour (`0`: no limit); one per client and image in any case",
  },
  NSFW_POLICY: {
    default: 'flag',
    meaning:
      'what the embedded classifier does with an upload it scores at or over `NSFW_THRESHOLD_PERCENT` ([moderation.md](moderation.md)): `flag` marks it `nsfw` "1" (a client\'s "1" is never cleared), `reject` refuses it with `403`, code `153`, `off` does not load the classifier',
  },
  NSFW_THRESHOLD_PERCENT: {
    default: '60',
    meaning:
      "the classifier's score (its Porn and Hentai probabilities together, in percent) at or over which `NSFW_POLICY` applies",
  },
  URL_FETCH_FAILURES_PER_HOUR: {
    default: '20',
    meaning: 'URL sources per client and hour that may fail to be fetched before its URL uploads answer `429` (`0`: no limit)',
  },
  URL_FETCHES_PER_HOUR: {
    default: '100',
    meaning:
      'URL sources per client and hour the service fetches, whatever comes of them, before its URL uploads answer `429` (`0`: no limit)',
  },
  URL_FETCHES_AT_ONCE: {
    default: '3',
    meaning: 'URL sources one client may have the service fetch at once; past them its URL uploads answer `429` (`0`: no limit)',
  },
  URL_FETCH_MEGABYTES_PER_HOUR: {
    default: '500',
    meaning:
      'megabytes per client and hour the service fetches from URL sources (a megabyte begun counts whole), whatever comes of them, before its URL uploads answer `429` (`0`: no limit)',
  },
} as const satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;

/**
 * Settings of earlier versions and the ones that took their place (`docs/settings.md`, "Replaced settings"): one still
 * set is refused, naming them, rather than ignored.
 */
export const REPLACED_SETTINGS: Readonly<Record<string, readonly SettingName[]>> = {
  KEY_CACHE_SECONDS: ['PARAMETERS_CACHE_SECONDS', 'MODERATION_CACHE_SECONDS'],
  FLOOD_LIMITS_CACHE_SECONDS: ['PARAMETERS_CACHE_SECONDS'],
};

/** The stack's context key of a setting: its name in camel case (`MAX_UPLOAD_BYTES`: `maxUploadBytes`). */
export function contextKeyOf(name: string): string {
  return name.toLowerCase().replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
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
