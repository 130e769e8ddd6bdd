import {
  formatDateFolder,
  formatDateTime,
  formatSize,
  howLongAgo,
  isValidTimeZone,
} from '../../../functions/core/image/formatting';

describe('formatSize', () => {
  it.each([
    [0, '0 B'],
    [42, '42 B'],
    [999, '999 B'],
    [1000, '1 KB'],
    [1050, '1.1 KB'],
    [512345, '512.3 KB'],
    [999_949, '999.9 KB'],
    [999_999, '1 MB'],
    [3011299, '3 MB'],
    [10_000_000, '10 MB'],
    [4_500_000, '4.5 MB'],
    [1_234_567_890, '1.2 GB'],
  ])('formats %i bytes as %s', (bytes, text) => {
    expect(formatSize(bytes)).toBe(text);
  });
});

describe('formatDateTime', () => {
  const instant = Date.UTC(2026, 0, 5, 23, 4, 9);

  it('writes UTC as YYYY-MM-DD HH:MM:SS', () => {
    expect(formatDateTime(instant, 'UTC')).toBe('2026-01-05 23:04:09');
  });

  it('writes the operator time zone, crossing the date line', () => {
    expect(formatDateTime(instant, 'Asia/Tokyo')).toBe('2026-01-06 08:04:09');
    expect(formatDateFolder(instant, 'Asia/Tokyo')).toBe('2026/01/06');
    expect(formatDateFolder(instant, 'UTC')).toBe('2026/01/05');
  });

  it('writes midnight as 00, not 24', () => {
    expect(formatDateTime(Date.UTC(2026, 5, 1, 0, 0, 0), 'UTC')).toBe('2026-06-01 00:00:00');
  });

  it('knows valid and invalid time zones', () => {
    expect(isValidTimeZone('Europe/Madrid')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus')).toBe(false);
  });
});

describe('howLongAgo', () => {
  const now = Date.UTC(2026, 10, 22, 12, 0, 0);
  it.each([
    [0, 'moments ago'],
    [59, 'moments ago'],
    [60, '1 minute ago'],
    [5 * 60 + 30, '5 minutes ago'],
    [3600, '1 hour ago'],
    [86400, '1 day ago'],
    [3 * 86400, '3 days ago'],
    [14 * 86400, '2 weeks ago'],
    [31 * 86400, '1 month ago'],
    [800 * 86400, '2 years ago'],
  ])('writes %i seconds as %s', (seconds, text) => {
    expect(howLongAgo(now - seconds * 1000, now)).toBe(text);
  });
});
