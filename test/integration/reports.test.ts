import { makePng } from '../support/images';
import { createTestService, jsonBody, multipartUpload, PUBLIC_URL, adminOf, type TestService } from '../support/test-service';

jest.setTimeout(60_000);

async function uploaded(service: TestService, seed: number): Promise<string> {
  const response = await service.send(
    multipartUpload({ key: service.apiKey, source: { bytes: await makePng(30 + seed, 20), filename: `r${seed}.png` } }),
  );
  return String(jsonBody(response).image['id_encoded']);
}

/** What the viewer page's form sends: a same-site POST of the form's fields. */
function reportRequest(idEncoded: string, fields: Record<string, string>, site = 'same-origin'): Request {
  return new Request(`${PUBLIC_URL}/image/${idEncoded}/report`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': site, Origin: PUBLIC_URL },
    body: new URLSearchParams(fields).toString(),
  });
}

describe("viewers' reports", () => {
  it('takes a report from the viewer page, once per client and image, and the operator sees it until a takedown', async () => {
    const service = await createTestService();
    const admin = adminOf(service);
    const image = await uploaded(service, 1);
    const other = await uploaded(service, 2);
    const sent = await service.send(
      reportRequest(image, { reason: 'sexual', note: '  not for a\nfamily site  ' }),
      '203.0.113.1',
    );
    expect([sent.statusCode, sent.headers?.['Content-Type']]).toEqual([200, 'text/html; charset=utf-8']);
    expect(sent.body).toContain('The report was sent');
    const again = await service.send(reportRequest(image, { reason: 'spam' }), '203.0.113.1');
    expect([again.statusCode, again.body.includes('You reported this image already')]).toEqual([200, true]);
    await service.send(reportRequest(image, { reason: 'sexual' }), '198.51.100.2');
    await service.send(reportRequest(other, { reason: 'copyright' }), '198.51.100.2');
    const reported = await admin.reports();
    expect(reported.map(({ idEncoded, count, reasons, notes }) => ({ idEncoded, count, reasons, notes }))).toEqual([
      { idEncoded: image, count: 2, reasons: { sexual: 2 }, notes: ['not for a\nfamily site'] },
      { idEncoded: other, count: 1, reasons: { copyright: 1 }, notes: [] },
    ]);
    expect((await admin.stats(1))[0]?.reports).toBe(3);
    const done = await admin.takedown(image, { block: false });
    expect(done.resolvedReports).toBe(2);
    expect((await admin.reports()).map((entry) => entry.idEncoded)).toEqual([other]);
  });

  it.each([
    ['no reason', { note: 'bad' }, 400, 'Choose why you report this image'],
    ['a reason not offered', { reason: 'boring' }, 400, 'Choose why you report this image'],
    ['a note past 500 characters', { reason: 'other', note: 'x'.repeat(501) }, 400, 'The note is too long - max 500 characters'],
  ])('refuses a report with %s, with a page that says why, and keeps nothing', async (_name, fields, status, message) => {
    const service = await createTestService();
    const image = await uploaded(service, 3);
    const response = await service.send(reportRequest(image, fields));
    expect([response.statusCode, response.body.includes(message)]).toEqual([status, true]);
    expect(await service.items('REPORT#')).toEqual([]);
  });

  it('refuses reports from another site, of images not shown, by GET, and past REPORTS_PER_HOUR', async () => {
    const service = await createTestService({ REPORTS_PER_HOUR: '2' });
    const image = await uploaded(service, 4);
    const crossSite = await service.send(reportRequest(image, { reason: 'spam' }, 'cross-site'), '203.0.113.9');
    expect(crossSite.statusCode).toBe(403);
    expect((await service.send(reportRequest('zzzzzz', { reason: 'spam' }))).statusCode).toBe(404);
    const read = await service.send(new Request(`${PUBLIC_URL}/image/${image}/report`));
    expect(read.statusCode).toBe(405);
    const ids = [image, await uploaded(service, 5), await uploaded(service, 6)];
    const statuses: number[] = [];
    for (const id of ids) statuses.push((await service.send(reportRequest(id, { reason: 'spam' }), '203.0.113.7')).statusCode);
    expect(statuses).toEqual([200, 200, 429]);
    expect(await service.items('REPORT#')).toHaveLength(2);
  });

  it('takes the form of a browser that does not say where a request comes from, by the token its page gave it', async () => {
    const service = await createTestService();
    const image = await uploaded(service, 7);
    /** The viewer page's form as a browser without Sec-Fetch-Site posts it: Origin null (no-referrer), its token. */
    const oldBrowser = (fields: Record<string, string>, origin = 'null') =>
      new Request(`${PUBLIC_URL}/image/${image}/report`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: origin },
        body: new URLSearchParams(fields).toString(),
      });
    const viewer = await service.send(new Request(`${PUBLIC_URL}/image/${image}`), '203.0.113.20');
    const token = /name="token" value="([^"]+)"/.exec(viewer.body)?.[1] ?? '';
    expect(token).toMatch(/^\d+\.[0-9a-f]{64}$/);
    const refused = (response: { statusCode: number; body: string }) => [
      response.statusCode,
      response.body.includes('Cross-site report refused'),
    ];
    // without it, or with another client's, or from a page of another site, refused as before
    expect(refused(await service.send(oldBrowser({ reason: 'spam' }), '203.0.113.20'))).toEqual([403, true]);
    expect(refused(await service.send(oldBrowser({ reason: 'spam', token }), '198.51.100.3'))).toEqual([403, true]);
    const elsewhere = oldBrowser({ reason: 'spam', token }, 'https://evil.example');
    expect(refused(await service.send(elsewhere, '203.0.113.20'))).toEqual([403, true]);
    // a browser that says the post is cross-site is refused whatever it carries
    const marked = reportRequest(image, { reason: 'spam', token }, 'cross-site');
    expect((await service.send(marked, '203.0.113.20')).statusCode).toBe(403);
    expect(await service.items('REPORT#')).toHaveLength(0);
    const taken = await service.send(oldBrowser({ reason: 'spam', token }), '203.0.113.20');
    expect([taken.statusCode, taken.body.includes('The report was sent')]).toEqual([200, true]);
    expect(await service.items('REPORT#')).toHaveLength(1);
  });
});
