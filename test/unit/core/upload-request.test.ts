import { ServiceError } from '../../../functions/core/errors';
import {
  cleanDescription,
  cleanTitle,
  parseExpirationSeconds,
  parseFormat,
  parseNsfw,
  parseTargetWidth,
} from '../../../functions/core/upload/upload-request';

describe('request parameters', () => {
  it.each([
    [undefined, 'json'],
    ['JSON', 'json'],
    ['txt', 'txt'],
    ['TXT', 'txt'],
    ['Redirect', 'redirect'],
    ['xml', 'json'],
  ])('reads format %j as %s', (value, format) => {
    expect(parseFormat(value)).toBe(format);
  });

  it('marks nsfw only for 1', () => {
    expect([parseNsfw('1'), parseNsfw('true'), parseNsfw('0'), parseNsfw(undefined)]).toEqual([true, false, false, false]);
  });

  it('truncates titles to 100 characters and descriptions to 5,000, counting characters not bytes', () => {
    expect(cleanTitle('é'.repeat(150))).toBe('é'.repeat(100));
    expect(cleanTitle('  ')).toBeUndefined();
    expect(cleanTitle('line\r\nbreak')).toBe('line  break');
    expect(cleanDescription('d'.repeat(6000))).toHaveLength(5000);
    expect(cleanDescription('')).toBeNull();
    expect(cleanDescription('two\nlines')).toBe('two\nlines');
  });

  it('reads a target width and refuses what is not a positive number of pixels', () => {
    expect(parseTargetWidth('640')).toBe(640);
    expect(parseTargetWidth('')).toBeUndefined();
    for (const bad of ['0', '-5', '12.5', 'wide', '9999999']) {
      expect(() => parseTargetWidth(bad)).toThrow(expect.objectContaining({ kind: 'InvalidWidth' }) as Error);
    }
  });

  it.each([
    ['600', 600],
    ['60', 300],
    ['0', 300],
    ['99999999999', 31_536_000],
    ['PT5M', 300],
    ['PT1H', 3600],
    ['P1D', 86400],
    ['P2W', 1_209_600],
    ['P1M', 2_592_000],
    ['P1Y', 31_536_000],
    ['P1DT12H', 129_600],
    ['pt10m', 600],
  ])('reads expiration %s as %i seconds', (value, seconds) => {
    expect(parseExpirationSeconds(value)).toBe(seconds);
  });

  it.each(['P', 'PT', 'P1', '1h', 'P1.5D', 'tomorrow', '-600', 'P-1D'])('refuses expiration %j with code 620', (value) => {
    expect(() => parseExpirationSeconds(value)).toThrow(new ServiceError('InvalidExpiration', 'Invalid expiration'));
  });
});
