import { PutParameterCommand } from '@aws-sdk/client-ssm';
import { makePng } from '../support/images';
import { createTestService, multipartUpload } from '../support/test-service';

describe('the API key in SSM', () => {
  it('puts a rotated key in force within the cache age: the old key stops working, the new one works', async () => {
    const service = await createTestService({ PARAMETERS_CACHE_SECONDS: '1', DUPLICATES: 'allow' });
    const bytes = await makePng(16, 16);
    const oldKey = service.apiKey;
    expect((await service.send(multipartUpload({ key: oldKey, source: { bytes, filename: 'a.png' } }))).statusCode).toBe(200);

    await service.setApiKey('rotated-key-0123456789');
    // within the cache age the old key may still be in force; after it, only the new one is
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const old = await service.send(multipartUpload({ key: oldKey, source: { bytes, filename: 'a.png' } }));
    expect(old.statusCode).toBe(401);
    expect(JSON.parse(old.body)).toMatchObject({ error: { message: 'Invalid API key.', code: 100 } });
    expect(
      (await service.send(multipartUpload({ key: 'rotated-key-0123456789', source: { bytes, filename: 'a.png' } }))).statusCode,
    ).toBe(200);
  });

  it('answers 503 code 0 while the key parameter holds only whitespace', async () => {
    const service = await createTestService();
    await service.setApiKey('   ');
    const response = await service.send(
      multipartUpload({ key: 'anything', source: { bytes: await makePng(8, 8), filename: 'a.png' } }),
    );
    expect(response.statusCode).toBe(503);
    expect(JSON.parse(response.body)).toMatchObject({ error: { message: 'API key is not configured', code: 0 } });
  });

  it('reads a String parameter as well as a SecureString', async () => {
    const service = await createTestService();
    await service.clients.ssm.send(
      new PutParameterCommand({
        Name: `${service.parameterPrefix}/api-key`,
        Value: 'plain-key',
        Type: 'String',
        Overwrite: true,
      }),
    );
    expect(
      (await service.send(multipartUpload({ key: 'plain-key', source: { bytes: await makePng(9, 8), filename: 'a.png' } })))
        .statusCode,
    ).toBe(200);
  });
});
