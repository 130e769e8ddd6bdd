import { PutParameterCommand } from '@aws-sdk/client-ssm';
import { sha256Hex } from '../../functions/core/hashes';
import { viewerAddressIp } from '../../functions/http/router';
import { injectFaults } from '../support/faults';
import { makePng } from '../support/images';
import { createTestService, multipartUpload, PUBLIC_URL, type TestService } from '../support/test-service';

const SECRET = 'origin-secret-0123456789abcdef';

/** Writes the service's `/origin-secret` parameter, as the setup step (or an operator's hand) does. */
async function putOriginSecret(service: TestService, value: string): Promise<void> {
  await service.clients.ssm.send(
    new PutParameterCommand({
      Name: `${service.parameterPrefix}/origin-secret`,
      Value: value,
      Type: 'SecureString',
      Overwrite: true,
    }),
  );
}

async function behindDistribution(): Promise<TestService> {
  const service = await createTestService({ ORIGIN_VERIFY: 'required' });
  await putOriginSecret(service, SECRET);
  await service.setFloodLimits({ day: 1 });
  return service;
}

describe('behind the distribution', () => {
  it('refuses with 403 every request without the secret origin header, pages included', async () => {
    const service = await behindDistribution();
    const withoutHeader = await service.send(
      multipartUpload({ key: service.apiKey, source: { bytes: await makePng(10, 10), filename: 'a.png' } }),
    );
    expect(withoutHeader.statusCode).toBe(403);
    expect(JSON.parse(withoutHeader.body)).toEqual({
      status_code: 403,
      error: { message: 'Forbidden', code: 403 },
      status_txt: 'Forbidden',
    });
    const wrong = new Request(`${PUBLIC_URL}/image/abc`, { headers: { 'X-Origin-Verify': `${SECRET}x` } });
    expect((await service.send(wrong)).statusCode).toBe(403);
    expect(await service.objectKeys()).toEqual([]);
  });

  it('serves requests with the header and counts the client by the viewer address CloudFront writes, never the gateway source IP', async () => {
    const service = await behindDistribution();
    const upload = async (viewer: string, width: number): Promise<number> => {
      const request = multipartUpload({ key: service.apiKey, source: { bytes: await makePng(width, 10), filename: 'a.png' } });
      request.headers.set('X-Origin-Verify', SECRET);
      request.headers.set('X-Viewer-Address', viewer);
      request.headers.set('X-Forwarded-For', '192.0.2.99');
      // every request reaches API Gateway from a CloudFront edge: one source IP for all viewers
      return (await service.send(request, '130.176.0.1')).statusCode;
    };
    expect(await upload('198.51.100.7', 11)).toBe(200);
    expect(await upload('198.51.100.7', 12)).toBe(429);
    expect(await upload('2001:db8:5::1', 13)).toBe(200);
    expect(await upload('198.51.100.8', 14)).toBe(200);
  });
});

describe('the secrets accepted in the origin header', () => {
  const DEPLOYED = 'deployed-secret-0123456789abcdef';
  const pageWith = (secret: string): Request =>
    new Request(`${PUBLIC_URL}/image/abc`, { headers: secret === '' ? {} : { 'X-Origin-Verify': secret } });
  // past the origin check an unknown image answers 404; before it, 403
  const statusOf = async (service: TestService, secret: string): Promise<number> =>
    (await service.send(pageWith(secret))).statusCode;

  async function deployedWith(parameter: string): Promise<TestService> {
    const service = await createTestService({
      ORIGIN_VERIFY: 'required',
      ORIGIN_SECRET_SHA256: sha256Hex(DEPLOYED),
      PARAMETERS_CACHE_SECONDS: '0',
    });
    await putOriginSecret(service, parameter);
    return service;
  }

  it('takes the secret CloudFront was deployed with whatever the parameter says: an edit of it locks no one out', async () => {
    const service = await deployedWith('edited-by-hand');
    expect(await statusOf(service, DEPLOYED)).toBe(404);
    expect(await statusOf(service, 'edited-by-hand')).toBe(404);
    expect(await statusOf(service, `${DEPLOYED}x`)).toBe(403);
    expect(await statusOf(service, '')).toBe(403);
  });

  it("takes each of the parameter's lines (a rotation's new and old secret), and nothing else", async () => {
    const service = await deployedWith('new-secret-0123456789\nold-secret-0123456789');
    for (const secret of ['new-secret-0123456789', 'old-secret-0123456789', DEPLOYED])
      expect([secret, await statusOf(service, secret)]).toEqual([secret, 404]);
    for (const secret of ['new-secret-0123456789 old-secret-0123456789', 'new-secret', 'x'])
      expect([secret, await statusOf(service, secret)]).toEqual([secret, 403]);
  });
});

describe('viewerAddressIp', () => {
  it.each([
    ['203.0.113.5', '203.0.113.5'],
    ['2001:db8::1', '2001:db8::1'],
    ['203.0.113.5:443', '203.0.113.5'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['garbage', undefined],
    [undefined, undefined],
  ])('reads %j as %j', (header, ip) => {
    expect(viewerAddressIp(header)).toBe(ip);
  });
});

describe('when the origin secret cannot be read', () => {
  it('answers 503 code 900 in the envelope instead of failing the invocation', async () => {
    const service = await createTestService({ ORIGIN_VERIFY: 'required' });
    const injector = injectFaults({ failFrom: 0 });
    const response = await service
      .send(new Request(`${PUBLIC_URL}/image/abc`, { headers: { 'X-Origin-Verify': SECRET } }))
      .finally(() => injector.restore());
    expect(response.statusCode).toBe(503);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: 900 } });
  });
});
