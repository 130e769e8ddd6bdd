import type { APIGatewayProxyEvent } from 'aws-lambda';
import { clientIp, corsHeaders, refuseCrossSite } from '../../../functions/http/request-origin';

/** An event with these headers, from a source address. */
function event(headers: Record<string, string>, sourceIp = '198.51.100.9'): APIGatewayProxyEvent {
  return { headers, requestContext: { identity: { sourceIp } } } as unknown as APIGatewayProxyEvent;
}

const settings = { publicUrl: 'https://img.example', corsOrigins: ['https://app.example'], originVerify: true };

describe('the router steps that read where a request comes from', () => {
  it('refuses uploads marked cross-site or same-site, or from a foreign Origin, and lets tools and allowed pages through', () => {
    for (const headers of [
      { 'Sec-Fetch-Site': 'cross-site' },
      { 'sec-fetch-site': 'Same-Site' },
      { Origin: 'https://evil.example' },
      { Origin: 'null' },
    ])
      expect(() => refuseCrossSite(event(headers), settings)).toThrow(expect.objectContaining({ kind: 'CrossSite' }) as Error);
    for (const headers of [
      {},
      { 'Sec-Fetch-Site': 'none' },
      { 'Sec-Fetch-Site': 'same-origin', Origin: 'https://img.example' },
      { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://app.example' },
      // a form of this site's own pages, whose no-referrer policy makes the browser send `Origin: null`
      { 'Sec-Fetch-Site': 'same-origin', Origin: 'null' },
    ])
      expect(() => refuseCrossSite(event(headers), settings)).not.toThrow();
    expect(() => refuseCrossSite(event({ 'Sec-Fetch-Site': 'same-site' }), settings, 'report')).toThrow(
      "Cross-site report refused: only this site's own pages may send reports",
    );
  });

  it('answers CORS headers to allowed origins only', () => {
    expect(corsHeaders(event({ Origin: 'https://app.example' }), settings)).toEqual({
      'Access-Control-Allow-Origin': 'https://app.example',
      Vary: 'Origin',
    });
    expect(corsHeaders(event({ Origin: 'https://evil.example' }), settings)).toBeUndefined();
    expect(corsHeaders(event({}), settings)).toBeUndefined();
  });

  it("takes the client's address from CloudFront's header behind the distribution, never from X-Forwarded-For", () => {
    expect(clientIp(event({ 'X-Viewer-Address': '203.0.113.5:443', 'X-Forwarded-For': '10.0.0.1' }), settings)).toBe(
      '203.0.113.5',
    );
    expect(clientIp(event({ 'X-Forwarded-For': '10.0.0.1' }), settings)).toBe('198.51.100.9');
    expect(clientIp(event({ 'X-Viewer-Address': '203.0.113.5:443' }), { originVerify: false })).toBe('198.51.100.9');
  });
});
