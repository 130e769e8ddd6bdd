import { setFlagsFromString } from 'node:v8';
import { decodeBase64Source } from '../../../functions/core/upload/base64-source';
import { ServiceError } from '../../../functions/core/errors';

// V8 does not always optimise a regular expression; unoptimised, an anchored `[...]+$` keeps one backtrack entry per
// character and overflowed on a 10 MB field in a CI run (a 500 instead of a 4xx). The module's expressions are compiled
// at their first run, so every test of this file runs them unoptimised: the checks must not depend on the engine.
beforeAll(() => setFlagsFromString('--no-regexp-optimization'));
afterAll(() => setFlagsFromString('--regexp-optimization'));

describe('base64 sources', () => {
  const bytes = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0xfb, 0xef, 0xbe]);
  const standard = bytes.toString('base64');

  it.each([
    ['standard', standard],
    ['data URL', `data:image/jpeg;base64,${standard}`],
    ['spaces for plus signs', standard.replace(/\+/g, ' ')],
    ['line breaks and tabs', `${standard.slice(0, 4)}\r\n${standard.slice(4, 8)}\t${standard.slice(8)}`],
    ['URL-safe alphabet', bytes.toString('base64url')],
    ['missing padding', standard.replace(/=+$/, '')],
  ])('decodes the %s form', (_name, text) => {
    expect(Buffer.compare(decodeBase64Source(text), bytes)).toBe(0);
  });

  it.each(['', '====', 'abc$', 'a', 'YWJj=YWJj'])('refuses %j with code 120', (text) => {
    expect(() => decodeBase64Source(text)).toThrow(new ServiceError('InvalidBase64', 'Invalid base64 string'));
  });
});

describe('base64 sources whose plus signs became spaces at the ends', () => {
  it('reads leading and trailing spaces as plus signs', () => {
    const bytes = Buffer.from([0xfb, 0xef, 0xbe, 0x01, 0x02, 0xfb, 0xef, 0xbe]);
    const text = bytes.toString('base64');
    expect(text.startsWith('+')).toBe(true);
    expect(Buffer.compare(decodeBase64Source(text.replace(/\+/g, ' ')), bytes)).toBe(0);
  });
});

describe('base64 sources as long as a request allows', () => {
  it('decodes a 10 MB field and refuses one with a bad character at its end, without a RangeError', () => {
    const valid = 'A'.repeat(10_000_000);
    expect(decodeBase64Source(valid)).toHaveLength(7_500_000);
    expect(() => decodeBase64Source(`${valid}$`)).toThrow(new ServiceError('InvalidBase64', 'Invalid base64 string'));
  });
});
