import { createSweepHandler } from '../../functions/roots/sweep';
import { makePng } from '../support/images';
import { createTestService, jsonBody, multipartUpload, PUBLIC_URL, type TestService } from '../support/test-service';

function sweeperFor(service: TestService, env: Record<string, string> = {}): ReturnType<typeof createSweepHandler> {
  return createSweepHandler({
    BUCKET_NAME: service.bucket,
    TABLE_NAME: service.table,
    PARAMETER_PREFIX: service.parameterPrefix,
    PUBLIC_URL,
    ...env,
  });
}

const DAY_MS = 86_400_000;

afterEach(() => jest.restoreAllMocks());

describe('expiration', () => {
  it('answers 404 at once after the expiry; the sweep then deletes the files, and keeps the record to restore', async () => {
    const service = await createTestService();
    const image = jsonBody(
      await service.send(
        multipartUpload({ key: service.apiKey, expiration: '300', source: { bytes: await makePng(20, 20), filename: 'e.png' } }),
      ),
    ).image;
    const viewer = String(image['url_viewer']);
    expect((await service.send(new Request(viewer))).statusCode).toBe(200);
    const sweep = sweeperFor(service);
    expect(await sweep()).toEqual({ removed: 0, failed: 0, purgedPaths: 0 });
    expect(await service.objectKeys()).toHaveLength(3);

    const realNow = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(realNow + 301_000);
    expect((await service.send(new Request(viewer))).statusCode).toBe(404);
    expect((await service.send(new Request(String(image['delete_url'])))).statusCode).toBe(404);
    expect(await sweep()).toEqual({ removed: 1, failed: 0, purgedPaths: 0 });
    expect(await service.objectKeys()).toEqual([]);
    // the record stays, removed and out of the sweep's index, as long as the bucket keeps the files (KEEP_DELETED_DAYS)
    const [record] = await service.items('IMG#');
    const until = realNow + 301_000 + 30 * DAY_MS;
    expect(record).toMatchObject({ status: 'removed', restorableUntilMs: until, ttl: Math.ceil(until / 1000) });
    expect(record).not.toHaveProperty('sweepShard');
    expect(await sweep()).toEqual({ removed: 0, failed: 0, purgedPaths: 0 });
    expect((await service.send(new Request(viewer))).statusCode).toBe(404);
    // the name stays claimed, so the URL never comes to mean another image
    expect(await service.items('KEY#')).toHaveLength(1);
  });

  it('forces an expiration on every upload when the operator sets one, as an upper bound', async () => {
    const service = await createTestService({ FORCED_EXPIRATION: 'PT10M' });
    const plain = jsonBody(
      await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await makePng(21, 20), filename: 'f.png' } })),
    ).image;
    const asked = jsonBody(
      await service.send(
        multipartUpload({ key: service.apiKey, expiration: 'P1D', source: { bytes: await makePng(22, 20), filename: 'g.png' } }),
      ),
    ).image;
    const shorter = jsonBody(
      await service.send(
        multipartUpload({ key: service.apiKey, expiration: 'PT5M', source: { bytes: await makePng(23, 20), filename: 'h.png' } }),
      ),
    ).image;
    const lifetime = (image: Record<string, unknown>): number =>
      (Date.parse(`${String(image['expiration_date_gmt']).replace(' ', 'T')}Z`) -
        Date.parse(`${String(image['date_gmt']).replace(' ', 'T')}Z`)) /
      1000;
    expect([lifetime(plain), lifetime(asked), lifetime(shorter)]).toEqual([600, 600, 300]);
  });
});

describe('delete links', () => {
  it('shows a confirmation on GET and deletes nothing; POST deletes the three objects, the sweep retires the record', async () => {
    const service = await createTestService();
    const image = jsonBody(
      await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await makePng(24, 20), filename: 'd.png' } })),
    ).image;
    const deleteUrl = String(image['delete_url']);
    expect(deleteUrl).toMatch(new RegExp(`^${PUBLIC_URL}/image/${String(image['id_encoded'])}/delete/[0-9a-f]{48}$`));

    for (let preview = 0; preview < 2; preview += 1) {
      const page = await service.send(new Request(deleteUrl));
      expect(page.statusCode).toBe(200);
      expect(page.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
      expect(page.body).toContain('<form method="post">');
    }
    expect(await service.objectKeys()).toHaveLength(3);

    const done = await service.send(new Request(deleteUrl, { method: 'POST' }));
    expect(done.statusCode).toBe(200);
    expect(done.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expect(await service.objectKeys()).toEqual([]);
    expect((await service.send(new Request(String(image['url_viewer'])))).statusCode).toBe(404);
    expect((await service.send(new Request(deleteUrl, { method: 'POST' }))).statusCode).toBe(404);
    // the record waits, deleting and due, for the sweep: it purges the files at the CDN with the run's others
    expect((await service.items('IMG#')).map((record) => record['status'])).toEqual(['deleting']);
    expect(await sweeperFor(service)()).toMatchObject({ removed: 1, failed: 0 });
    expect((await service.items('IMG#')).map((record) => record['status'])).toEqual(['removed']);
  });

  it('removes the record with the files when KEEP_DELETED_DAYS is 0', async () => {
    const service = await createTestService();
    const image = jsonBody(
      await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await makePng(26, 20), filename: 'z.png' } })),
    ).image;
    expect((await service.send(new Request(String(image['delete_url']), { method: 'POST' }))).statusCode).toBe(200);
    expect(await sweeperFor(service, { KEEP_DELETED_DAYS: '0' })()).toMatchObject({ removed: 1, failed: 0 });
    expect(await service.items('IMG#')).toEqual([]);
  });

  it('answers JSON to a client that asks for it', async () => {
    const service = await createTestService();
    const image = jsonBody(
      await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await makePng(25, 20), filename: 'j.png' } })),
    ).image;
    const done = await service.send(
      new Request(String(image['delete_url']), { method: 'POST', headers: { Accept: 'application/json' } }),
    );
    expect(JSON.parse(done.body)).toEqual({
      status_code: 200,
      success: { message: 'image deleted', code: 200 },
      status_txt: 'OK',
    });
    const again = await service.send(
      new Request(String(image['delete_url']), { method: 'POST', headers: { Accept: 'application/json' } }),
    );
    expect(JSON.parse(again.body)).toMatchObject({ status_code: 404, error: { code: 404 } });
  });

  it('answers a wrong token exactly as an unknown id: 404, deleting nothing', async () => {
    const service = await createTestService();
    const image = jsonBody(
      await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await makePng(26, 20), filename: 'w.png' } })),
    ).image;
    const wrongToken = String(image['delete_url']).replace(/[0-9a-f]{48}$/, 'a'.repeat(48));
    const unknownId = `${PUBLIC_URL}/image/zzzz/delete/${'a'.repeat(48)}`;
    const responses = await Promise.all(
      [wrongToken, unknownId, `${wrongToken}x`].flatMap((url) => [
        service.send(new Request(url)),
        service.send(new Request(url, { method: 'POST' })),
      ]),
    );
    expect(responses.map((response) => response.statusCode)).toEqual([404, 404, 404, 404, 404, 404]);
    expect(new Set(responses.map((response) => response.body)).size).toBe(1);
    expect(await service.objectKeys()).toHaveLength(3);
  });
});

describe('views', () => {
  it('counts every view of the viewer page atomically and carries the count as a string', async () => {
    const service = await createTestService();
    const image = jsonBody(
      await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await makePng(27, 20), filename: 'v.png' } })),
    ).image;
    expect(image['views']).toBe('0');
    await Promise.all(Array.from({ length: 20 }, () => service.send(new Request(String(image['url_viewer'])))));
    const id = (await service.idCodec()).decode(String(image['id_encoded']));
    expect((await service.item(`IMG#${id}`))?.['views']).toBe(20);
    // a duplicate upload answers the image as it is now
    const again = jsonBody(
      await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await makePng(27, 20), filename: 'v.png' } })),
    ).image;
    expect([again['views'], again['views_label']]).toEqual(['20', 'views']);
  });
});
