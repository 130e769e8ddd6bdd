import { eventBytes, toApiGatewayEvent } from '../../../local/api-gateway-event';
import { bodyBytes } from '../../../functions/http/api-event';
import { isBinaryMediaType, MAX_EVENT_BYTES, maxBodyBytes } from '../../../functions/http/edge-contract';

describe('the edge contract', () => {
  it.each([
    ['multipart/form-data; boundary=x', true],
    ['IMAGE/PNG', true],
    ['image/svg+xml', true],
    ['application/octet-stream', true],
    ['application/x-www-form-urlencoded', false],
    ['application/json', false],
    ['text/plain', false],
    [undefined, false],
  ])('treats %s as binary: %s', (type, binary) => {
    expect(isBinaryMediaType(type)).toBe(binary);
  });

  it('lets 4.6 MB of binary body and 6.2 MB of text body through', () => {
    expect(maxBodyBytes('multipart/form-data')).toBe(4_600_000);
    expect(maxBodyBytes('application/x-www-form-urlencoded')).toBe(6_200_000);
  });

  it.each(['multipart/form-data; boundary=b', 'application/x-www-form-urlencoded'])(
    'fits a %s body of the largest size into the event even with the most headers CloudFront passes',
    (contentType) => {
      // CloudFront's limit: 20,480 bytes of request line and headers; then the headers it and API Gateway add.
      const query = `key=${'k'.repeat(2000)}`;
      const rawHeaders = ['Content-Type', contentType];
      let headerBytes = `POST /api/1/upload?${query} HTTP/1.1\r\n`.length + `Content-Type: ${contentType}\r\n`.length;
      for (let index = 0; headerBytes < 20_480 - 40; index += 1) {
        const header = [`X-H${index}`, 'v'.repeat(20)];
        rawHeaders.push(...header);
        headerBytes += `${header[0]}: ${header[1]}\r\n`.length;
      }
      rawHeaders.push(
        'X-Origin-Verify',
        'a'.repeat(64),
        'X-Viewer-Address',
        '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff',
        'X-Amz-Cf-Id',
        'c'.repeat(56),
        'Via',
        `2.0 ${'d'.repeat(32)}.cloudfront.net (CloudFront)`,
        'X-Forwarded-For',
        '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff, 130.176.0.1',
        'X-Forwarded-Proto',
        'https',
        'X-Forwarded-Port',
        '443',
        'X-Amzn-Trace-Id',
        `Root=1-${'e'.repeat(8)}-${'f'.repeat(24)}`,
      );
      const event = toApiGatewayEvent({
        method: 'POST',
        url: `/api/1/upload?${query}`,
        rawHeaders,
        body: Buffer.alloc(maxBodyBytes(contentType), 0x41),
        sourceIp: '130.176.0.1',
      });
      expect(eventBytes(event)).toBeLessThanOrEqual(MAX_EVENT_BYTES);
    },
  );
});

describe('the size of an event as Lambda measures it', () => {
  it.each([
    ['a base64 body', 'image/png', Buffer.from([0xff, 0xfe, 0x00, 0x3e, 0x22, 0x5c])],
    ['a text body with characters JSON escapes', 'application/x-www-form-urlencoded', Buffer.from('a="b"\\c\n\u0001é')],
    ['no body', 'image/png', Buffer.alloc(0)],
  ])('is the length of its JSON in bytes, for %s', (_name, contentType, body) => {
    const event = toApiGatewayEvent({
      method: 'POST',
      url: '/api/1/upload?key=k',
      rawHeaders: ['Content-Type', contentType, 'X-Note', 'quote " and é'],
      body,
      sourceIp: '203.0.113.5',
    });
    expect(eventBytes(event)).toBe(Buffer.byteLength(JSON.stringify(event)));
  });
});

describe('a body handed over as its bytes (the local server)', () => {
  const request = (body: Buffer, contentType = 'multipart/form-data; boundary=x') => ({
    method: 'POST',
    url: '/api/1/upload',
    rawHeaders: ['Content-Type', contentType],
    body,
    sourceIp: '203.0.113.5',
  });

  it.each([1, 2, 3, 1000])('reads as the same bytes, and measures as its base64 would, for %i bytes', (length) => {
    const body = Buffer.from(Array.from({ length }, (_, index) => (index * 37) % 256));
    const encoded = toApiGatewayEvent(request(body));
    const raw = toApiGatewayEvent(request(body), { rawBody: true });
    expect(raw.body).toBe('');
    expect(raw.isBase64Encoded).toBe(true);
    expect(bodyBytes(raw).equals(body)).toBe(true);
    expect(bodyBytes(encoded).equals(body)).toBe(true);
    expect(eventBytes(raw)).toBe(eventBytes({ ...encoded, requestContext: raw.requestContext }));
    // what Lambda would get is JSON, which cannot carry the bytes: the handler then reads `body`, as in AWS
    expect(bodyBytes(JSON.parse(JSON.stringify(raw)) as typeof raw)).toEqual(Buffer.alloc(0));
  });

  it('stays text in the event for a text body', () => {
    const form = Buffer.from('key=k&source=abc');
    const event = toApiGatewayEvent(request(form, 'application/x-www-form-urlencoded'), { rawBody: true });
    expect([event.body, event.isBase64Encoded]).toEqual(['key=k&source=abc', false]);
  });
});
