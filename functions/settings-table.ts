/**
 * The function's settings, declared once: each environment variable, its default and meaning (`docs/settings.md` is
 * written from this table), the settings it replaced, and the stack's context key of each. `config.ts` reads them.
 */

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
  SITE_NAME: {
    default: '',
    meaning:
      "the site's name in the header of every page, linking home (up to 60 characters; [pages.md](pages.md)); empty: the public URL's host name",
    shown: "the public URL's host name",
  },
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
