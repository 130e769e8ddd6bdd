import { GetParameterCommand } from '@aws-sdk/client-ssm';
import { createSweepHandler } from '../../functions/roots/sweep';
import { buildStores } from '../../functions/roots/stores';
import { loadConfig } from '../../functions/config';
import { NO_METRICS } from '../../functions/core/metrics';
import { makeUploadToken, readUploadToken, tokenSecret } from '../../functions/core/upload/upload-tokens';
import { makePng } from '../support/images';
import { clearOfMinuteEnd, clockAheadBy } from '../support/in-memory';
import { createTestService, PUBLIC_URL, type TestService } from '../support/test-service';

/**
 * What the two-step upload leaves in the staging place when its second step does not store it: bytes go at once where
 * the refusal knows the token, and with the sweep once no token can use them (the bucket's one-day lifecycle rule is
 * only a backstop). Against the stand-ins; the upload URL points at the S3 stand-in, as in `npm start`.
 */
const CLIENT = '203.0.113.61';
let service: TestService;

beforeAll(async () => {
  service = await createTestService({ DUPLICATES: 'allow' });
});

const env = () => ({
  BUCKET_NAME: service.bucket,
  TABLE_NAME: service.table,
  PARAMETER_PREFIX: service.parameterPrefix,
  PUBLIC_URL,
});

async function staged(): Promise<string[]> {
  return (await service.objectKeys()).filter((key) => key.startsWith('staging/'));
}

/** Step 1, and the client's PUT to the upload URL. */
async function stage(seed: number, client = CLIENT): Promise<{ token: string; put: () => Promise<number> }> {
  const bytes = await makePng(30 + seed, 20);
  const response = await service.send(
    new Request(`${PUBLIC_URL}/api/1/upload-url`, {
      method: 'POST',
      headers: { 'X-API-Key': service.apiKey, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ size: String(bytes.length), filename: `staged${seed}.png` }).toString(),
    }),
    client,
  );
  expect(response.statusCode).toBe(200);
  const ticket = (JSON.parse(response.body) as { upload: { url: string; headers: Record<string, string>; token: string } })
    .upload;
  const put = async () => (await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: bytes })).status;
  expect(await put()).toBe(200);
  return { token: ticket.token, put };
}

async function finish(token: string, client = CLIENT): Promise<number> {
  const response = await service.send(
    new Request(`${PUBLIC_URL}/api/1/upload`, {
      method: 'POST',
      headers: { 'X-API-Key': service.apiKey, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ upload_token: token }).toString(),
    }),
    client,
  );
  return response.statusCode;
}

/** A sweep run `minutes` from now. */
const sweepIn = (minutes: number) => createSweepHandler(env(), NO_METRICS, clockAheadBy(minutes * 60_000))();

describe('staged bytes a two-step upload leaves', () => {
  it('a PUT after the upload was stored: kept while its token lives, removed by the first sweep after', async () => {
    const { token, put } = await stage(1);
    expect(await finish(token)).toBe(200);
    expect(await staged()).toEqual([]);
    // the upload URL still takes a PUT until it expires
    expect(await put()).toBe(200);
    expect(await staged()).toHaveLength(1);
    await sweepIn(0);
    expect(await staged()).toHaveLength(1);
    await sweepIn(21);
    expect(await staged()).toEqual([]);
  });

  it('a token that is not one (forged or cut): refused, and the sweep removes the bytes nobody can claim', async () => {
    const { token } = await stage(2);
    expect(await finish(`${token.slice(0, -4)}AAAA`)).toBe(400);
    expect(await staged()).toHaveLength(1);
    await sweepIn(21);
    expect(await staged()).toEqual([]);
  });

  it('an expired token: refused (410), and its bytes go at once', async () => {
    const { token } = await stage(3);
    // the same token, signed by the deployment's secret, as it is once its 15 minutes are over (the clock stays: the
    // stand-ins refuse requests signed at another time)
    const salt = await service.clients.ssm.send(
      new GetParameterCommand({ Name: `${service.parameterPrefix}/id-salt`, WithDecryption: true }),
    );
    const secret = tokenSecret(salt.Parameter?.Value ?? '');
    const expired = makeUploadToken({ ...readUploadToken(token, secret, service.apiKey), expiresAtMs: Date.now() - 1 }, secret);
    expect(await finish(expired)).toBe(410);
    expect(await staged()).toEqual([]);
  });

  it('a client banned between the two steps: refused (403), and its bytes go at once', async () => {
    const { token } = await stage(4);
    const { moderation } = buildStores(loadConfig(env()), env());
    await moderation.add({ range: `${CLIENT}/32`, untilMs: null });
    try {
      expect(await finish(token)).toBe(403);
      expect(await staged()).toEqual([]);
    } finally {
      await moderation.remove(`${CLIENT}/32`);
    }
  });

  it('a client past its flood limit at the second step: refused (429), and its bytes go at once', async () => {
    // a client of its own: the minute's one upload is this test's
    const client = '203.0.113.62';
    const { token } = await stage(5, client);
    const first = await stage(6, client);
    await service.setFloodLimits({ minute: 1 });
    try {
      // both finishes in one minute window
      await clearOfMinuteEnd(10_000);
      expect(await finish(first.token, client)).toBe(200);
      expect(await finish(token, client)).toBe(429);
      expect(await staged()).toEqual([]);
    } finally {
      await service.setFloodLimits({ minute: 0, day: 1000 });
    }
  });
});
