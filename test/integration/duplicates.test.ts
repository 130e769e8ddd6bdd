import type { APIGatewayProxyResult } from 'aws-lambda';
import { makePng } from '../support/images';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { createTestService, jsonBody, multipartUpload, PUBLIC_URL, storesOf, type TestService } from '../support/test-service';

async function upload(
  service: TestService,
  bytes: Buffer,
  fields: Record<string, string> = {},
  sourceIp = '198.51.100.40',
): Promise<APIGatewayProxyResult> {
  return service.send(multipartUpload({ key: service.apiKey, ...fields, source: { bytes, filename: 'dup.png' } }), sourceIp);
}

async function activeRecords(service: TestService): Promise<number> {
  return (await service.items('IMG#')).filter((item) => item['status'] === 'active').length;
}

describe('duplicates', () => {
  it('answers the existing image for the same bytes from the same client, with a delete link of its own, storing nothing', async () => {
    const service = await createTestService();
    const bytes = await makePng(33, 22);
    const first = jsonBody(await upload(service, bytes)).image;
    const secondResponse = await upload(service, bytes, { title: 'another title' });
    expect(secondResponse.statusCode).toBe(200);
    const second = jsonBody(secondResponse).image;
    expect(second).toMatchObject({
      id_encoded: first['id_encoded'],
      url: first['url'],
      title: first['title'],
      md5: first['md5'],
    });
    expect(second['delete_url']).not.toBe(first['delete_url']);
    expect(await service.items('IMG#')).toHaveLength(1);
    expect(await service.objectKeys()).toHaveLength(3);

    // each delete link takes its own upload away; the image goes with the last one
    const post = (link: unknown) =>
      service.send(new Request(String(link), { method: 'POST', headers: { Accept: 'application/json' } }));
    expect(JSON.parse((await post(second['delete_url'])).body)).toEqual({
      status_code: 200,
      success: { message: 'upload deleted; the image stays for its other upload', code: 200 },
      status_txt: 'OK',
    });
    expect((await service.send(new Request(String(first['url_viewer'])))).statusCode).toBe(200);
    expect((await post(second['delete_url'])).statusCode).toBe(404);
    expect(await service.objectKeys()).toHaveLength(3);
    expect(JSON.parse((await post(first['delete_url'])).body)).toMatchObject({ success: { message: 'image deleted' } });
    expect(await service.objectKeys()).toHaveLength(0);
    // once it is gone, the same bytes are a new upload again
    const again = jsonBody(await upload(service, bytes)).image;
    expect(again['id_encoded']).not.toBe(first['id_encoded']);
    expect(await service.objectKeys()).toHaveLength(3);
  });

  it("gives a duplicate a hold of its own: its end keeps the image no longer than the others', its flag marks nothing", async () => {
    const service = await createTestService();
    const bytes = await makePng(34, 22);
    const record = async () => (await service.items('IMG#'))[0];
    const first = jsonBody(await upload(service, bytes, { title: 'first title' })).image;
    expect([first['nsfw'], first['expiration_date_gmt']]).toEqual(['0', null]);
    // another person behind the same address, with the file's URL, asks it marked and gone in five minutes: the first
    // upload's image is neither (it had no end, and keeps none)
    const second = jsonBody(await upload(service, bytes, { nsfw: '1', expiration: 'PT5M', title: 'second title' })).image;
    expect(second).toMatchObject({ id_encoded: first['id_encoded'], nsfw: '0', title: 'first title', expiration_date_gmt: null });
    expect(await record()).toMatchObject({ nsfw: false, expiresAtMs: null });
    const page = await service.send(new Request(String(first['url_viewer'])));
    expect(page.body).not.toContain('<label class="sensitive">');
    // once the first upload is deleted, the image is the second's alone: it ends when that one asked
    const released = await service.send(new Request(String(first['delete_url']), { method: 'POST' }));
    expect(released.body).toContain('stays online until that upload is deleted too');
    const endsAt = (await record())?.['expiresAtMs'] as number;
    expect(endsAt - Date.now()).toBeGreaterThan(4 * 60_000);
    expect(endsAt - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    expect((await service.send(new Request(String(second['url_viewer'])))).statusCode).toBe(200);
  });

  it('keeps an image with an end until the latest hold ends, and ends it with the last hold left', async () => {
    const service = await createTestService();
    const bytes = await makePng(36, 22);
    const hour = jsonBody(await upload(service, bytes, { expiration: 'PT1H' })).image;
    const endOf = (image: Record<string, unknown>) => Date.parse(String(image['expiration_date_gmt']));
    // a sooner end takes nothing from the first upload's hour; a later one keeps the image for the day
    const minutes = jsonBody(await upload(service, bytes, { expiration: 'PT5M' })).image;
    expect(minutes['expiration_date_gmt']).toBe(hour['expiration_date_gmt']);
    const day = jsonBody(await upload(service, bytes, { expiration: 'P1D' })).image;
    expect(endOf(day) - endOf(hour)).toBeGreaterThan(22 * 3_600_000);
    // the day's upload deleted: the hour's is the latest left
    await service.send(new Request(String(day['delete_url']), { method: 'POST' }));
    // (the answer's date is to the second)
    expect(Math.floor(((await service.items('IMG#'))[0]?.['expiresAtMs'] as number) / 1000) * 1000).toBe(endOf(hour));
    // then the other two: the image goes with the last
    await service.send(new Request(String(hour['delete_url']), { method: 'POST' }));
    expect(await activeRecords(service)).toBe(1);
    const gone = await service.send(new Request(String(minutes['delete_url']), { method: 'POST' }));
    expect(gone.body).not.toContain('stays online');
    expect(await activeRecords(service)).toBe(0);
  });

  it('keeps the image for the duplicate when the first uploader deletes theirs, and says so on the page', async () => {
    const service = await createTestService();
    const bytes = await makePng(34, 22);
    const first = jsonBody(await upload(service, bytes)).image;
    const second = jsonBody(await upload(service, bytes)).image;
    const page = await service.send(new Request(String(first['delete_url']), { method: 'POST' }));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('stays online until that upload is deleted too');
    expect((await service.send(new Request(String(second['url_viewer'])))).statusCode).toBe(200);
    expect(await service.objectKeys()).toHaveLength(3);
  });

  it('removes the image when the holders of both links delete at the same moment', async () => {
    const service = await createTestService();
    const bytes = await makePng(35, 22);
    const links = [jsonBody(await upload(service, bytes)).image, jsonBody(await upload(service, bytes)).image].map((image) =>
      String(image['delete_url']),
    );
    const answers = await Promise.all(links.map((link) => service.send(new Request(link, { method: 'POST' }))));
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200]);
    expect(await service.objectKeys()).toEqual([]);
    // gone but for its record, which the sweep forgets once it has purged the files at the CDN
    expect((await service.items('IMG#')).map((record) => record['status'])).toEqual(['deleting']);
  });

  it('treats another width, another client or other bytes as a new image', async () => {
    const service = await createTestService();
    const bytes = await makePng(60, 40);
    const ids = new Set<unknown>();
    ids.add(jsonBody(await upload(service, bytes)).image['id_encoded']);
    ids.add(jsonBody(await upload(service, bytes, { width: '30' })).image['id_encoded']);
    ids.add(jsonBody(await upload(service, bytes, {}, '198.51.100.41')).image['id_encoded']);
    ids.add(jsonBody(await upload(service, await makePng(61, 40))).image['id_encoded']);
    expect(ids.size).toBe(4);
    expect(jsonBody(await upload(service, bytes, { width: '30' })).image['id_encoded']).toBeDefined();
    expect(await activeRecords(service)).toBe(4);
  });

  it('refuses a duplicate with 409 code 101 when the operator rejects them', async () => {
    const service = await createTestService({ DUPLICATES: 'reject' });
    const bytes = await makePng(34, 22);
    expect((await upload(service, bytes)).statusCode).toBe(200);
    const refused = await upload(service, bytes);
    expect(refused.statusCode).toBe(409);
    expect(JSON.parse(refused.body)).toEqual({
      status_code: 409,
      error: { message: 'Duplicated upload', code: 101 },
      status_txt: 'Conflict',
    });
  });

  it('stores another copy when the operator allows duplicates', async () => {
    const service = await createTestService({ DUPLICATES: 'allow' });
    const bytes = await makePng(35, 22);
    const first = jsonBody(await upload(service, bytes)).image;
    const second = jsonBody(await upload(service, bytes)).image;
    expect(second['id_encoded']).not.toBe(first['id_encoded']);
    expect(await service.objectKeys()).toHaveLength(6);
  });

  it('stores one image for identical uploads arriving at once, rejecting the rest when the operator rejects duplicates', async () => {
    const service = await createTestService({ DUPLICATES: 'reject' });
    const bytes = await makePng(36, 22);
    const responses = await Promise.all(Array.from({ length: 8 }, () => upload(service, bytes)));
    expect(responses.map((response) => response.statusCode).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    expect(await activeRecords(service)).toBe(1);
  });

  it('stores one image for identical uploads arriving at once, answering it to all when duplicates return the existing one', async () => {
    const service = await createTestService();
    const bytes = await makePng(37, 22);
    const responses = await Promise.all(Array.from({ length: 8 }, () => upload(service, bytes)));
    expect(responses.every((response) => response.statusCode === 200)).toBe(true);
    const images = responses.map((response) => jsonBody(response).image);
    expect(new Set(images.map((image) => image['id_encoded'])).size).toBe(1);
    expect(new Set(images.map((image) => image['delete_url'])).size).toBe(8);
    expect(await activeRecords(service)).toBe(1);
    expect(await service.objectKeys()).toHaveLength(3);
    expect(String(images[0]?.['url'])).toMatch(new RegExp(`^${PUBLIC_URL}/images/`));
  });
});

describe('the duplicate claim a record holds', () => {
  it('is kept by its width alone, and read from the key that records written before carry', async () => {
    const service = await createTestService();
    const response = await service.send(
      multipartUpload({ key: service.apiKey, source: { bytes: await makePng(44, 22), filename: 'held.png' } }),
      '203.0.113.44',
    );
    const id = (await service.idCodec()).decode(String(jsonBody(response).image['id_encoded'])) ?? 0;
    const item = (await service.item(`IMG#${id}`)) ?? {};
    expect([item['dupWidth'], item['duplicateKey']]).toEqual([0, undefined]);
    const images = storesOf(service).images;
    const held = (await images.find(id))?.fingerprint;
    expect(held).toEqual({ clientIp: '203.0.113.44', md5: item['sourceMd5'], width: undefined });
    // as an earlier version wrote it
    const rest = Object.fromEntries(Object.entries(item).filter(([name]) => name !== 'dupWidth'));
    const documents = DynamoDBDocumentClient.from(service.clients.dynamodb);
    await documents.send(
      new PutCommand({
        TableName: service.table,
        Item: { ...rest, duplicateKey: `DUP#203.0.113.44#${String(item['sourceMd5'])}#-` },
      }),
    );
    expect((await images.find(id))?.fingerprint).toEqual(held);
  });
});
