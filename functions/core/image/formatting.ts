const SIZE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

/** Decimal size with one decimal and no trailing `.0`: 1050 -> `1.1 KB`, 3011299 -> `3 MB`. */
export function formatSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (unit < SIZE_UNITS.length - 1 && Math.round(value * 10) / 10 >= 1000) {
    value /= 1000;
    unit += 1;
  }
  const rounded = Math.round(value * 10) / 10;
  return `${rounded.toFixed(1).replace(/\.0$/, '')} ${SIZE_UNITS[unit]}`;
}

/** `YYYY-MM-DD HH:MM:SS` of an instant in an IANA time zone. */
export function formatDateTime(epochMs: number, timeZone: string): string {
  const parts = dateParts(epochMs, timeZone);
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

/** `YYYY/MM/DD` of an instant in an IANA time zone: the folder of the stored files. */
export function formatDateFolder(epochMs: number, timeZone: string): string {
  const parts = dateParts(epochMs, timeZone);
  return `${parts.year}/${parts.month}/${parts.day}`;
}

interface DateParts {
  year: string;
  month: string;
  day: string;
  hour: string;
  minute: string;
  second: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function dateParts(epochMs: number, timeZone: string): DateParts {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  const found: Record<string, string> = {};
  for (const part of formatter.formatToParts(new Date(epochMs))) found[part.type] = part.value;
  const pick = (type: keyof DateParts): string => found[type] ?? '00';
  return {
    year: pick('year').padStart(4, '0'),
    month: pick('month'),
    day: pick('day'),
    hour: pick('hour'),
    minute: pick('minute'),
    second: pick('second'),
  };
}

/** True when the text names a time zone this runtime knows. */
export function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone });
    return true;
  } catch {
    return false;
  }
}

const AGO_UNITS: ReadonlyArray<[string, number]> = [
  ['year', 365 * 86400],
  ['month', 30 * 86400],
  ['week', 7 * 86400],
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
];

/** Largest whole unit between two instants: `moments ago`, `5 minutes ago`, `1 day ago`. */
export function howLongAgo(thenMs: number, nowMs: number): string {
  const span = largestUnit(nowMs - thenMs);
  return span === undefined ? 'moments ago' : `${span} ago`;
}

/** The same, for an instant to come: `in 5 minutes`, `in 1 day`, `in moments`. */
export function howLongUntil(thenMs: number, nowMs: number): string {
  const span = largestUnit(thenMs - nowMs);
  return span === undefined ? 'in moments' : `in ${span}`;
}

/** `5 minutes`, `1 day`: the largest whole unit in a span; undefined under a minute. */
function largestUnit(spanMs: number): string | undefined {
  const seconds = Math.max(0, Math.floor(spanMs / 1000));
  for (const [unit, unitSeconds] of AGO_UNITS) {
    const count = Math.floor(seconds / unitSeconds);
    if (count >= 1) return `${count} ${unit}${count === 1 ? '' : 's'}`;
  }
  return undefined;
}
