import sharp from 'sharp';
import { loadConfig } from '../../functions/config';
import {
  adminOf,
  createTestService,
  InMemoryMetrics,
  jsonBody,
  multipartUpload,
  type TestService,
} from '../support/test-service';

/**
 * NSFW_POLICY through the handler, with the embedded model itself. No explicit picture is available here
 * (`docs/moderation.md`), so the policies are driven by a threshold of 1%: a picture of noise scores about 6% (its
 * Porn and Hentai together), over 1% and far under the default 60%.
 */

/** 224x224 pixels of noise (the model's own input size), the same every run. */
async function noise(): Promise<Buffer> {
  const pixels = Buffer.alloc(224 * 224 * 3);
  let state = 7;
  for (let i = 0; i < pixels.length; i += 1) pixels[i] = (state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 24;
  return sharp(pixels, { raw: { width: 224, height: 224, channels: 3 } })
    .png()
    .toBuffer();
}

async function send(service: TestService, fields: { nsfw?: string } = {}) {
  const upload = multipartUpload({ key: service.apiKey, source: { bytes: await noise(), filename: 'noise.png' }, ...fields });
  return service.send(upload);
}

/** The score each stored record keeps. */
async function storedScores(service: TestService): Promise<unknown[]> {
  return (await service.items('IMG#')).map((item) => item['nsfwScore']);
}

describe('NSFW_POLICY, with the embedded classifier', () => {
  it('by default (flag, 60%), scores the upload, keeps the score on the record, and leaves a safe picture unmarked', async () => {
    const service = await createTestService();
    const response = await send(service);
    expect(response.statusCode).toBe(200);
    expect(jsonBody(response).image['nsfw']).toBe('0');
    const [score] = await storedScores(service);
    expect(score).toEqual(expect.any(Number));
    expect(score as number).toBeGreaterThan(0.01);
    expect(score as number).toBeLessThan(0.6);
    const [listed] = await adminOf(service).list({ sinceMs: 0, limit: 10 });
    expect(listed).toMatchObject({ nsfw: false, nsfwScore: score });
  });

  it('under flag, marks an upload scored at or over the threshold nsfw "1", in the answer, the record and admin list', async () => {
    const service = await createTestService({ NSFW_POLICY: 'flag', NSFW_THRESHOLD_PERCENT: '1' });
    const response = await send(service);
    expect(response.statusCode).toBe(200);
    expect(jsonBody(response).image['nsfw']).toBe('1');
    const [item] = await service.items('IMG#');
    expect(item?.['nsfw']).toBe(true);
    expect((await adminOf(service).list({ sinceMs: 0, limit: 10 }))[0]?.nsfw).toBe(true);
  });

  it('under reject, refuses it with 403, code 153, and stores nothing of it', async () => {
    const service = await createTestService({ NSFW_POLICY: 'reject', NSFW_THRESHOLD_PERCENT: '1' });
    const response = await send(service);
    expect(response.statusCode).toBe(403);
    expect(JSON.parse(response.body)).toEqual({
      status_code: 403,
      error: { message: 'Adult content is not accepted here', code: 153 },
      status_txt: 'Forbidden',
    });
    expect(await service.items('IMG#')).toEqual([]);
    expect(await service.objectKeys()).toEqual([]);
  });

  it('under off, does not score at all: no score on the record, no classifier time, and a client\'s "1" as sent', async () => {
    const metrics = new InMemoryMetrics();
    const service = await createTestService({ NSFW_POLICY: 'off', NSFW_THRESHOLD_PERCENT: '1' }, { metrics });
    const response = await send(service, { nsfw: '1' });
    expect(jsonBody(response).image['nsfw']).toBe('1');
    expect(await storedScores(service)).toEqual([undefined]);
    expect(metrics.count('ImagingTime')).toBe(1);
    expect(metrics.count('ClassifierTime')).toBe(0);
  });

  it('refuses to start with a policy or threshold it does not know, naming both', () => {
    const env = { BUCKET_NAME: 'b', TABLE_NAME: 't', NSFW_POLICY: 'blur', NSFW_THRESHOLD_PERCENT: '0.5' };
    expect(() => loadConfig(env)).toThrow(
      /NSFW_POLICY must be one of off, flag, reject, got "blur"\n- NSFW_THRESHOLD_PERCENT must be a whole number from 1 to 100, got "0.5"/,
    );
  });
});
