import type { Admin } from '../functions/core/admin/admin';
import { formatDateTime, formatSize } from '../functions/core/image/formatting';
import { parseIsoDuration } from '../functions/core/upload/upload-request';
import { AdminError } from '../functions/core/admin/admin-error';
import { fieldSafe } from './terminal-text';

/** The options a verb may take, besides the target's (`--data-dir`, `--stack`, `--outputs`, `--id-padding`). */
export const VERB_OPTIONS = {
  block: { type: 'boolean' },
  similar: { type: 'boolean' },
  inside: { type: 'boolean' },
  within: { type: 'string' },
  for: { type: 'string' },
  since: { type: 'string' },
  ip: { type: 'string' },
  limit: { type: 'string' },
  days: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export type VerbOption = keyof typeof VERB_OPTIONS;
export type OptionValues = { [name in VerbOption]?: (typeof VERB_OPTIONS)[name]['type'] extends 'boolean' ? boolean : string };

/** The API key's parameter, read and written with the operator's credentials (`key show`, `key rotate`). */
export interface KeyParameter {
  read(): Promise<string | undefined>;
  write(value: string): Promise<void>;
}

/** What a verb runs with. */
export interface Call {
  admin: Admin;
  /** Its arguments, as many as its usage names (checked before it runs). */
  args: string[];
  values: OptionValues;
  print: (line: string) => void;
  /** Steps of a long run, to standard error on a terminal only. */
  progress: (line: string) => void;
  /** Something the operator should know besides the result (standard error). */
  warn: (line: string) => void;
  /** Whether a CDN is in front of the files (a deployed stack; not the local service). */
  cdn: boolean;
  /** When a block or a ban made now is in force where the target's uploads are checked (`Target`'s). */
  inForce: string;
  key: KeyParameter;
}

/** A command of the admin tool: its arguments (`[NAME]`: optional), options, what it does, and how. */
export interface Verb {
  args: readonly string[];
  options: readonly VerbOption[];
  /** One line for the list of commands. */
  summary: string;
  /** What `help VERB` adds. */
  more?: string;
  run(call: Call): Promise<void>;
}

/** A command line the tool cannot run: said in one line, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const utc = (epochMs: number): string => `${formatDateTime(epochMs, 'UTC')} UTC`;
export const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;
/** When a block or a ban is in force in AWS: each instance of the function reads them again after its cache's time. */
export const IN_FORCE = 'in force within MODERATION_CACHE_SECONDS, 30 s by default';

/** JSON for `--json`: every time (`createdAtMs`, `untilMs`...) as an ISO 8601 date under its name without `Ms`. */
export function jsonOf(value: unknown): string {
  const dated = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(dated);
    if (typeof item !== 'object' || item === null) return item;
    return Object.fromEntries(
      Object.entries(item).map(([name, inner]) =>
        /(At|Until|until)Ms$/.test(name) && (typeof inner === 'number' || inner === null)
          ? [name.slice(0, -2), typeof inner === 'number' ? new Date(inner).toISOString() : null]
          : [name, dated(inner)],
      ),
    );
  };
  return JSON.stringify(dated(value), null, 2);
}

/** `30m`, `12h`, `7d`, `2w`, seconds, or an ISO-8601 duration as the API takes for expirations (`PT10M`, `P7D`), in ms. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  const iso = /^p/i.test(trimmed) ? parseIsoDuration(trimmed.toUpperCase()) : undefined;
  if (iso !== undefined && iso > 0) return iso * 1000;
  const match = /^(\d+)(s|m|h|d|w)?$/.exec(trimmed);
  if (!match || Number(match[1]) === 0) throw new AdminError(`not a duration: ${text} (say 30m, 12h, 7d, 2w, or PT10M, P7D)`);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[(match[2] ?? 's') as 's'];
  return Number(match[1]) * unit * 1000;
}

/** A whole number option within bounds, or a clear refusal. */
export function wholeNumber(option: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < min || value > max)
    throw new AdminError(`${option} must be a whole number from ${min} to ${max}: ${text}`);
  return value;
}

/** The verbs of images: take down, restore, look into, compare, list, count. */
export const IMAGE_VERBS: Record<string, Verb> = {
  takedown: {
    args: ['REFERENCE'],
    options: ['block', 'similar', 'inside'],
    summary: 'remove an image for every upload of it, and every other image of the same bytes',
    more: `REFERENCE: a viewer URL, a file URL (original or rendition) or an id_encoded of this host.
--similar: and every image of the same picture (within 31 PDQ bits).
--block: refuse those bytes and that picture (re-encoded, resized, edited: docs/moderation.md) from then on.
--inside (with --block): and each picture found inside it (a screenshot's, a collage's panels), alone: only when
  every one of them is to be refused (a collage's harmless panel would be blocked for everyone too).
Nothing is kept for a restore: every version of its files goes.`,
    async run({ admin, args, values, print, cdn, inForce }) {
      const done = await admin.takedown(args[0] ?? '', {
        block: values.block === true,
        similar: values.similar === true,
        inside: values.inside === true,
      });
      for (const image of done.removed) {
        const kind = image.distance === undefined ? 'the same bytes' : `a similar picture, ${image.distance} bits apart`;
        const copy = image.idEncoded === done.idEncoded ? '' : ` (${kind}, uploaded from ${image.clientIp})`;
        const where = cdn ? ', its record, and its copies at the CDN' : ' and its record';
        print(`took down ${image.idEncoded}${copy}: removed ${image.files.join(', ')}${where}`);
      }
      if (done.blocked.length > 0)
        print(`blocked its bytes (md5 ${done.blocked.join(', ')}): the same image uploaded again is refused`);
      if (done.resolvedReports > 0)
        print(`resolved ${plural(done.resolvedReports, "viewer's report", "viewers' reports")} of it`);
      if (done.blockedPictures.length > 0) {
        const crops = done.blockedCrops > 0 ? ` and ${done.blockedCrops} hashes of its crops` : ' (no crop of it says enough)';
        const inside = done.blockedInside > 0 ? `, and ${done.blockedInside} of the pictures found inside it` : '';
        print(
          `blocked its picture (PDQ ${done.blockedPictures.join(', ')})${crops}${inside}: edited copies of it are refused too (${inForce})`,
        );
      }
    },
  },
  restore: {
    args: ['REFERENCE'],
    options: [],
    summary: 'bring back an image removed by its delete link or its expiry: files, record, links',
    more: `Within keepDeletedDays (30 by default) of the removal; never an image taken down (docs/operations.md,
"Restoring a deleted image"). An expiry already past is dropped.`,
    async run({ admin, args, print }) {
      const done = await admin.restore(args[0] ?? '');
      const expiry = done.expiresAtMs === null ? 'no expiry' : `expires ${utc(done.expiresAtMs)}`;
      print(`restored ${done.idEncoded} (${expiry}): ${done.files.join(', ')} and its record; ${done.viewerUrl}`);
    },
  },
  info: {
    args: ['REFERENCE'],
    options: ['json'],
    summary: 'all that is kept of an image: record, files, delete links, reports, hashes',
    async run({ admin, args, values, print }) {
      const info = await admin.info(args[0] ?? '');
      if (values.json) return print(jsonOf(info));
      const status =
        info.restorableUntilMs === null ? info.status : `${info.status}, restorable until ${utc(info.restorableUntilMs)}`;
      const reasons = Object.entries(info.reports.reasons).map(([reason, count]) => `${reason} ${count}`);
      const rows: Array<[string, string]> = [
        ['image', `${info.idEncoded} ${info.viewerUrl}`],
        ['status', status],
        ['title', fieldSafe(info.title)],
        ['description', info.description === null ? '-' : fieldSafe(info.description)],
        ['uploaded', `${utc(info.createdAtMs)} from ${info.clientIp}, as ${fieldSafe(info.originalFilename)}`],
        ['expires', info.expiresAtMs === null ? 'never' : utc(info.expiresAtMs)],
        ['views', String(info.views)],
        [
          'nsfw',
          `${info.nsfw ? 'yes' : 'no'}${info.nsfwScore === null ? '' : ` (classifier ${Math.round(info.nsfwScore * 100)}%)`}`,
        ],
        ...info.files.map((file): [string, string] => [
          'file',
          `${file.key}\t${file.width}x${file.height}\t${formatSize(file.size)}\t${file.mime}`,
        ]),
        ['md5', `${info.md5.uploaded} as uploaded, ${info.md5.stored} as stored`],
        ['pdq', info.pdq.hashes.length === 0 ? 'none' : `${info.pdq.hashes.join(', ')} (quality ${info.pdq.quality})`],
        [
          'delete links',
          `${info.deleteLinks} issued, unused; their uploads end ${info.holdEnds.map((end) => (end === null ? 'never' : utc(end))).join(', ')}`,
        ],
        [
          'reports',
          info.reports.count === 0 ? 'none' : `${plural(info.reports.count, 'report', 'reports')} (${reasons.join(', ')})`,
        ],
        ...info.reports.notes.map((note): [string, string] => ['', JSON.stringify(note)]),
      ];
      for (const [label, text] of rows) print(`${label.padEnd(13)}${text}`);
    },
  },
  reports: {
    args: [],
    options: ['json'],
    summary: 'images viewers reported, most reported first, with their reasons and notes',
    more: "A takedown resolves an image's reports.",
    async run({ admin, values, print }) {
      const reported = await admin.reports();
      if (values.json) return print(jsonOf(reported));
      if (reported.length === 0) return print('no reports');
      for (const image of reported) {
        const reasons = Object.entries(image.reasons)
          .map(([reason, count]) => `${reason} ${count}`)
          .join(', ');
        print(
          `${image.idEncoded}\t${image.viewerUrl}\t${plural(image.count, 'report', 'reports')} (${reasons})\tlast ${utc(image.lastAtMs)}`,
        );
        for (const note of image.notes) print(`\t${JSON.stringify(note)}`);
      }
    },
  },
  similar: {
    args: ['REFERENCE'],
    options: ['within', 'json'],
    summary: "stored images whose picture is near this one's, nearest first",
    more: '--within N: how near, in PDQ bits (default 63; a block takes 31).',
    async run({ admin, args, values, print }) {
      const within = values.within === undefined ? undefined : wholeNumber('--within', values.within, 0, 128);
      const near = await admin.similar(args[0] ?? '', within);
      if (values.json) return print(jsonOf(near));
      if (near.length === 0) return print('no similar images');
      for (const image of near)
        print(`${image.idEncoded}\t${image.viewerUrl}\t${image.distance} bits\t${image.clientIp}\t${utc(image.createdAtMs)}`);
    },
  },
  list: {
    args: [],
    options: ['since', 'ip', 'limit', 'json'],
    summary: 'recent uploads, newest first (default: the last day, 50)',
    more: '--since DURATION (30m, 12h, 7d, PT10M...), --ip ADDRESS|CIDR, --limit N.',
    async run({ admin, values, print }) {
      // the NSFW column: its mark and the classifier's score ("nsfw 87%", "- 3%", "-" where it did not run)
      const nsfwColumn = (upload: { nsfw: boolean; nsfwScore: number | null }): string =>
        `${upload.nsfw ? 'nsfw' : '-'}${upload.nsfwScore === null ? '' : ` ${Math.round(upload.nsfwScore * 100)}%`}`;
      const uploads = await admin.list({
        sinceMs: Date.now() - parseDuration(values.since ?? '1d'),
        ...(values.ip ? { ip: values.ip } : {}),
        limit: wholeNumber('--limit', values.limit ?? '50', 1, 100_000),
      });
      if (values.json) return print(jsonOf(uploads));
      if (uploads.length === 0) return print('no uploads');
      print('id\tviewer\tsize\tclient\tuploaded (UTC)\tnsfw\texpires (UTC)');
      for (const upload of uploads) {
        const expiry = upload.expiresAtMs === null ? '-' : utc(upload.expiresAtMs);
        print(
          `${upload.idEncoded}\t${upload.viewerUrl}\t${formatSize(upload.size)}\t${upload.clientIp}\t${utc(upload.createdAtMs)}\t${nsfwColumn(upload)}\t${expiry}`,
        );
      }
    },
  },
  stats: {
    args: [],
    options: ['days', 'json'],
    summary: 'uploads, bytes and refusals per day (UTC; default 7 days)',
    more: '--days N. Uploads are counted by the sweep about 15 minutes after each upload.',
    async run({ admin, values, print }) {
      const days = await admin.stats(wholeNumber('--days', values.days ?? '7', 1, 3660));
      if (values.json) return print(jsonOf(days));
      print('day (UTC)\tuploads\tbytes\trefusals\twithout key\treports');
      for (const day of days)
        print(`${day.day}\t${day.uploads}\t${formatSize(day.bytes)}\t${day.refusals}\t${day.unauthenticated}\t${day.reports}`);
      const staged = await admin.staged();
      print(
        `staged now: ${plural(staged.files, 'file', 'files')}, ${formatSize(staged.bytes)} (two-step uploads; removed once no token can use them)`,
      );
      // the sweep counts an upload once it settles its name claim: a day's figures trail it by that much
      print('uploads and bytes are counted by the sweep about 15 minutes after each upload (docs/operations.md)');
    },
  },
};
