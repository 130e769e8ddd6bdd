import { makePng } from '../support/images';
import { createTestService, jsonBody, multipartUpload, ONE_PROCESS_LIMITS } from '../support/test-service';

jest.setTimeout(120_000);

describe('concurrency', () => {
  it('stores 100 parallel uploads of distinct images under one file name: 100 ids, 100 names, 100 records, 300 objects', async () => {
    const service = await createTestService({}, { storeCallLimits: ONE_PROCESS_LIMITS });
    await service.setFloodLimits({});
    const images = await Promise.all(
      Array.from({ length: 100 }, (_, index) => makePng(16 + (index % 10), 16 + Math.floor(index / 10))),
    );
    const responses = await Promise.all(
      images.map((bytes, index) =>
        service.send(
          multipartUpload({ key: service.apiKey, source: { bytes, filename: 'same name.png' } }),
          `198.51.100.${index % 250}`,
        ),
      ),
    );
    expect(responses.map((response) => response.statusCode)).toEqual(Array.from({ length: 100 }, () => 200));
    const bodies = responses.map((response) => jsonBody(response).image);
    expect(new Set(bodies.map((image) => image['id_encoded'])).size).toBe(100);
    expect(new Set(bodies.map((image) => image['name'])).size).toBe(100);
    expect(bodies.filter((image) => image['name'] === 'same-name')).toHaveLength(1);
    const records = await service.items('IMG#');
    expect(records.filter((record) => record['status'] === 'active')).toHaveLength(100);
    expect(await service.objectKeys()).toHaveLength(300);
    expect(new Set(bodies.map((image) => image['md5'])).size).toBe(100);
  });
});
