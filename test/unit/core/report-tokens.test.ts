import { isReportToken, REPORT_TOKEN_MAX_AGE_MS, reportToken } from '../../../functions/core/moderation/report-tokens';

describe("the report form's token", () => {
  const secret = 'deployment-secret';
  const now = Date.UTC(2026, 10, 27, 12, 0, 0);
  const token = reportToken(secret, 'abc', '203.0.113.5', now);

  it('vouches for the form of the image it was served with, to the client it was served to, for a day', () => {
    expect(isReportToken(secret, token, 'abc', '203.0.113.5', now + 60_000)).toBe(true);
    expect(isReportToken(secret, token, 'abc', '203.0.113.5', now + REPORT_TOKEN_MAX_AGE_MS)).toBe(true);
    expect(isReportToken(secret, token, 'abc', '203.0.113.5', now + REPORT_TOKEN_MAX_AGE_MS + 1_000)).toBe(false);
  });

  it('vouches for nothing else: another image, client, secret or time, or a token altered', () => {
    expect(isReportToken(secret, token, 'abd', '203.0.113.5', now)).toBe(false);
    expect(isReportToken(secret, token, 'abc', '203.0.113.6', now)).toBe(false);
    expect(isReportToken('another-secret', token, 'abc', '203.0.113.5', now)).toBe(false);
    const [issued, mac] = token.split('.') as [string, string];
    expect(isReportToken(secret, `${Number(issued) + 1}.${mac}`, 'abc', '203.0.113.5', now)).toBe(false);
    expect(isReportToken(secret, `${issued}.${mac.slice(0, -1)}0`, 'abc', '203.0.113.5', now)).toBe(mac.endsWith('0'));
    for (const bad of [undefined, null, '', 'x', `${issued}.${mac}x`, `-1.${mac}`])
      expect(isReportToken(secret, bad, 'abc', '203.0.113.5', now)).toBe(false);
  });

  it('follows an IPv6 client within its /64, as the flood limits count it', () => {
    const v6 = reportToken(secret, 'abc', '2001:db8:1:2::10', now);
    expect(isReportToken(secret, v6, 'abc', '2001:db8:1:2:aaaa::20', now)).toBe(true);
    expect(isReportToken(secret, v6, 'abc', '2001:db8:1:3::10', now)).toBe(false);
  });
});
