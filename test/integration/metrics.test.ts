import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { MEASURE, measureCalls } from '../../functions/roots/stores';
import { makePng } from '../support/images';
import { clearOfMinuteEnd } from '../support/in-memory';
import { createTestService, InMemoryMetrics, multipartUpload, type TestService } from '../support/test-service';

describe('metrics', () => {
  const metrics = new InMemoryMetrics();
  let service: TestService;

  beforeAll(async () => {
    service = await createTestService({}, { metrics });
    await service.setFloodLimits({ minute: 3 });
    // the flood refusal counted below needs this file's uploads in one minute window
    await clearOfMinuteEnd(15_000);
  });
  beforeEach(() => metrics.clear());

  it('counts a stored upload with the bytes it wrote, its imaging time and the latency of every store it called', async () => {
    const bytes = await makePng(64, 48);
    const response = await service.send(multipartUpload({ key: service.apiKey, source: { bytes, filename: 'm.png' } }));
    expect(response.statusCode).toBe(200);
    const image = (JSON.parse(response.body) as { image: { size: number; thumb: { size: number }; medium: { size: number } } })
      .image;
    expect(metrics.sum('UploadStored')).toBe(1);
    expect(metrics.sum('BytesStored')).toBe(image.size + image.thumb.size + image.medium.size);
    expect(metrics.count('ImagingTime')).toBe(1);
    // the default policy (flag) scores every upload: the classifier's own time, once
    expect(metrics.count('ClassifierTime')).toBe(1);
    expect(metrics.sum('ClassifierTime')).toBeGreaterThan(0);
    expect(metrics.count('S3Latency')).toBe(3); // the original and two renditions
    expect(metrics.count('DynamoDBLatency')).toBeGreaterThan(0);
    expect(metrics.count('SSMLatency')).toBeGreaterThan(0);
    expect(metrics.flushes).toBeGreaterThan(0);
  });

  it('counts a duplicate, a refusal by kind, and a flood refusal', async () => {
    const bytes = await makePng(65, 48);
    const send = (key: string, source = bytes) =>
      service.send(multipartUpload({ key, source: { bytes: source, filename: 'm.png' } }));
    expect((await send(service.apiKey)).statusCode).toBe(200);
    expect((await send(service.apiKey)).statusCode).toBe(200);
    expect(metrics.sum('UploadDuplicate')).toBe(1);
    expect(metrics.sum('UploadStored')).toBe(1);
    expect((await send('wrong')).statusCode).toBe(401);
    expect(metrics.sum('UploadErrors', 'Kind=InvalidKey')).toBe(1);
    // 3 a minute: the first test's upload, this one's, and its duplicate (which counts as any upload answered)
    expect((await send(service.apiKey, await makePng(66, 48))).statusCode).toBe(429);
    expect(metrics.sum('FloodRefusals')).toBe(1);
    expect(metrics.sum('UploadRefused')).toBe(2);
    expect(metrics.sum('UploadErrors', 'Kind=Flooding')).toBe(1);
    // the classifier ran for every one of them that was let past its decode, the duplicate's too, each run's time
    // counted; the one over the flood limit was refused before its classifier could run
    expect(metrics.count('ClassifierTime')).toBe(2);
  });

  it("counts a method the upload does not take as a refused upload, and not the OpenAPI document's or the upload URL's", async () => {
    const refused = await Promise.all(
      [
        ['PUT', '/api/1/upload'],
        ['POST', '/api/1/openapi.json'],
        ['GET', '/api/1/upload-url?format=txt'],
      ].map(([method = '', path = '']) => service.send(new Request(`https://img.example.test${path}`, { method }))),
    );
    expect(refused.map((response) => response.statusCode)).toEqual([405, 405, 405]);
    // the upload URL's answers are JSON, its refusals too
    expect(refused[2]?.headers?.['Content-Type']).toMatch(/^application\/json/);
    expect(metrics.sum('UploadErrors', 'Kind=MethodNotAllowed')).toBe(1);
  });

  it('counts a store call that fails in the end as StoreErrors of that store', async () => {
    const failing = new InMemoryMetrics();
    // nothing listens there: every attempt is refused
    const ssm = new SSMClient({ endpoint: 'http://127.0.0.1:1', maxAttempts: 2 });
    ssm.middlewareStack.add(measureCalls('SSM', failing), MEASURE);
    await expect(ssm.send(new GetParameterCommand({ Name: '/x' }))).rejects.toThrow();
    expect(failing.sum('StoreErrors', 'Store=SSM')).toBe(1);
    expect(failing.count('SSMLatency')).toBe(1);
  });
});
