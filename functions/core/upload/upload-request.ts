import { ServiceError } from '../errors';

export type ResponseFormat = 'json' | 'txt' | 'redirect';

/** The `source` (or `image`) value as the request carried it; validated only after the key is checked. */
export type SourceInput =
  | { kind: 'file'; bytes: Uint8Array; filename: string; truncated: boolean }
  | { kind: 'text'; value: string }
  /** `upload_token`: the second step of a two-step upload, its bytes staged already. */
  | { kind: 'staged'; token: string };

/** An upload request as the HTTP layer read it: raw texts, nothing validated but the format. */
export interface UploadRequest {
  /** `X-API-Key` header, else the `key` parameter. */
  key: string | undefined;
  source: SourceInput | undefined;
  /** The request used the `image` parameter: answer in imgBB's shape. */
  imgbb: boolean;
  format: ResponseFormat;
  title: string | undefined;
  description: string | undefined;
  nsfw: string | undefined;
  expiration: string | undefined;
  width: string | undefined;
  clientIp: string;
}

const MAX_TITLE_CHARS = 100;
const MAX_DESCRIPTION_CHARS = 5000;
const MIN_EXPIRATION_SECONDS = 300;
const MAX_EXPIRATION_SECONDS = 31_536_000;
const MAX_TARGET_WIDTH = 100_000;

/** `json` (default), `txt`, `redirect`; any other value is `json`. */
export function parseFormat(value: string | undefined): ResponseFormat {
  const lower = value?.trim().toLowerCase();
  return lower === 'txt' || lower === 'redirect' ? lower : 'json';
}

/** Only `1` marks an image as not safe for work. */
export function parseNsfw(value: string | undefined): boolean {
  return value?.trim() === '1';
}

/** A title as given, control characters removed, at most 100 characters; undefined when empty. */
export function cleanTitle(value: string | undefined): string | undefined {
  const cleaned = truncateChars(removeControlChars(value ?? '').trim(), MAX_TITLE_CHARS);
  return cleaned.length > 0 ? cleaned : undefined;
}

/** A description as given (line breaks kept), at most 5,000 characters; null when empty. */
export function cleanDescription(value: string | undefined): string | null {
  const cleaned = truncateChars(
    (value ?? '').replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '').trim(),
    MAX_DESCRIPTION_CHARS,
  );
  return cleaned.length > 0 ? cleaned : null;
}

/** `width`: a positive whole number of pixels, or nothing. */
export function parseTargetWidth(value: string | undefined): number | undefined {
  const text = value?.trim() ?? '';
  if (text === '') return undefined;
  const width = /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(width >= 1 && width <= MAX_TARGET_WIDTH)) throw new ServiceError('InvalidWidth', 'Invalid target width');
  return width;
}

const DURATION_UNIT_SECONDS: Record<string, number> = {
  Y: 31_536_000,
  M: 2_592_000, // 30 days, in the date part
  W: 604_800,
  D: 86_400,
  h: 3_600, // time part, lower-cased below to tell minutes from months
  m: 60,
  s: 1,
};

/**
 * `expiration`: digits (seconds) or an ISO-8601 duration (`PT5M`, `P1D`, `P2W`, `P1M`, `P1Y`), clamped to
 * [300, 31536000] seconds; undefined when absent or empty.
 */
export function parseExpirationSeconds(value: string | undefined): number | undefined {
  const text = value?.trim() ?? '';
  if (text === '') return undefined;
  let seconds: number | undefined;
  if (/^\d{1,12}$/.test(text)) seconds = Number(text);
  else seconds = parseIsoDuration(text.toUpperCase());
  if (seconds === undefined) throw new ServiceError('InvalidExpiration', 'Invalid expiration');
  return Math.min(MAX_EXPIRATION_SECONDS, Math.max(MIN_EXPIRATION_SECONDS, seconds));
}

/** An ISO-8601 duration (`PT10M`, `P7D`, `P1Y2M`), upper case, in seconds (a month 30 days, a year 365); undefined if none. */
export function parseIsoDuration(text: string): number | undefined {
  const match =
    /^P(?:(\d{1,6})Y)?(?:(\d{1,6})M)?(?:(\d{1,6})W)?(?:(\d{1,6})D)?(?:T(?:(\d{1,8})H)?(?:(\d{1,8})M)?(?:(\d{1,10})S)?)?$/.exec(
      text,
    );
  if (!match || text === 'P' || text.endsWith('T')) return undefined;
  const units = ['Y', 'M', 'W', 'D', 'h', 'm', 's'];
  let seconds = 0;
  units.forEach((unit, index) => {
    const amount = match[index + 1];
    if (amount !== undefined) seconds += Number(amount) * (DURATION_UNIT_SECONDS[unit] ?? 0);
  });
  return seconds;
}

function removeControlChars(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

function truncateChars(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? chars.slice(0, max).join('').trim() : text;
}
