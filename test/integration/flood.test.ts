import type { APIGatewayProxyResult } from 'aws-lambda';
import { makePng } from '../support/images';
import { clearOfMinuteEnd } from '../support/in-memory';
import { createTestService, jsonBody, multipartUpload, ONE_PROCESS_LIMITS, type TestService } from '../support/test-service';

async function upload(
  service: TestService,
  bytes: Buffer,
  sourceIp = '198.51.100.20',
  headers: Record<string, string> = {},
): Promise<APIGatewayProxyResult> {
  const request = multipartUpload({ key: service.apiKey, source: { bytes, filename: 'f.png' } });
  for (const [name, value] of Object.entries(headers)) request.headers.set(name, value);
  return service.send(request, sourceIp);
}

describe('flood protection', () => {
  it('stores exactly 10 of 50 concurrent uploads from one IP when the limit is 10 per minute', async () => {
    const service = await createTestService({}, { storeCallLimits: ONE_PROCESS_LIMITS });
    await service.setFloodLimits({ minute: 10 });
    const images = await Promise.all(Array.from({ length: 50 }, (_, index) => makePng(10 + index, 10)));
    // all 50 must fall in one minute window: start well clear of a minute boundary
    await clearOfMinuteEnd(15_000);
    const responses = await Promise.all(images.map((bytes) => upload(service, bytes)));
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(40);
    expect((await service.items('IMG#')).filter((item) => item['status'] === 'active')).toHaveLength(10);
    expect(await service.objectKeys()).toHaveLength(30);

    const refused = responses.find((response) => response.statusCode === 429)!;
    expect(JSON.parse(refused.body)).toEqual({
      status_code: 429,
      error: { message: 'Flooding detected. You can only upload 10 images per minute', code: 130 },
      status_txt: 'Too Many Requests',
    });
    const retryAfter = Number(refused.headers?.['Retry-After']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  it('counts only successful uploads: refused ones give their slot back', async () => {
    const service = await createTestService();
    await service.setFloodLimits({ hour: 2 });
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect((await upload(service, Buffer.from('not an image at all, just text'))).statusCode).toBe(415);
    }
    expect((await upload(service, await makePng(11, 11))).statusCode).toBe(200);
    expect((await upload(service, await makePng(12, 11))).statusCode).toBe(200);
    const third = await upload(service, await makePng(13, 11));
    expect(third.statusCode).toBe(429);
    expect(jsonBody(third)).toMatchObject({ error: { message: 'Flooding detected. You can only upload 2 images per hour' } });
  });

  it('says "image" for a limit of 1, counts per client, and ignores X-Forwarded-For', async () => {
    const service = await createTestService();
    await service.setFloodLimits({ day: 1 });
    expect((await upload(service, await makePng(20, 20), '198.51.100.30')).statusCode).toBe(200);
    const spoofed = await upload(service, await makePng(21, 20), '198.51.100.30', { 'X-Forwarded-For': '203.0.113.99' });
    expect(spoofed.statusCode).toBe(429);
    expect(jsonBody(spoofed)).toMatchObject({ error: { message: 'Flooding detected. You can only upload 1 image per day' } });
    expect((await upload(service, await makePng(22, 20), '198.51.100.31')).statusCode).toBe(200);
  });

  it('counts an IPv6 client by its /64 network', async () => {
    const service = await createTestService();
    await service.setFloodLimits({ day: 1 });
    expect((await upload(service, await makePng(30, 20), '2001:db8:1:2::10')).statusCode).toBe(200);
    expect((await upload(service, await makePng(31, 20), '2001:db8:1:2:ffff::1')).statusCode).toBe(429);
    expect((await upload(service, await makePng(32, 20), '2001:db8:1:3::10')).statusCode).toBe(200);
  });

  it('turns windows off with 0 (nothing is counted in them) and takes a changed parameter within the cache age', async () => {
    const service = await createTestService();
    await service.setFloodLimits({});
    for (let index = 0; index < 4; index += 1)
      expect((await upload(service, await makePng(40 + index, 10))).statusCode).toBe(200);
    expect(await service.items('FLOOD#')).toEqual([]);
    await service.setFloodLimits({ day: 2 });
    expect((await upload(service, await makePng(50, 10))).statusCode).toBe(200);
    expect((await upload(service, await makePng(51, 10))).statusCode).toBe(200);
    expect((await upload(service, await makePng(52, 10))).statusCode).toBe(429);
  });
});
