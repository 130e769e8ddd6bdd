import { PutParameterCommand } from '@aws-sdk/client-ssm';
import { createSweepHandler } from '../../functions/roots/sweep';
import { NO_METRICS } from '../../functions/core/metrics';
import { clockAheadBy } from '../support/in-memory';
import { makePng } from '../support/images';
import { callRefs, injectFaults, loseFirstAnswer, type CallRef, type FaultInjector } from '../support/faults';
import { withBatch } from '../../functions/core/moderation/picture-blocks';
import { createTestService, jsonBody, multipartUpload, PUBLIC_URL, storesOf, type TestService } from '../support/test-service';

jest.setTimeout(120_000);

let service: TestService;
let imageCount = 0;
/** Uploads that ended in a stored image: what the flood counter must hold. */
let stored = 0;
/**
 * Flood slots an outage kept: when the store fails for the giving back as well, the slot stays taken until its window
 * ends (the client may be refused once early); a single failed call never keeps one.
 */
let keptByOutage = 0;

beforeAll(async () => {
  service = await createTestService();
  await service.setFloodLimits({ day: 1000 });
});

afterEach(() => jest.restoreAllMocks());

async function freshImage(): Promise<Buffer> {
  imageCount += 1;
  return makePng(10 + (imageCount % 200), 10 + Math.floor(imageCount / 200));
}

async function upload(bytes: Buffer) {
  const response = await service.send(multipartUpload({ key: service.apiKey, source: { bytes, filename: 'fault.png' } }));
  if (response.statusCode === 200) stored += 1;
  return response;
}

/** What the stores hold, and whether it is consistent: every image's object belongs to a record that names it. */
async function storesState(): Promise<{
  objectsWithoutRecord: string[];
  activeWithoutObjects: number[];
  /** Uploads that died half way: a name claim still pending, without an image record. */
  dead: number;
  /** Name claims the sweep has not settled yet (stored uploads' and dead ones'). */
  unsettled: number;
  active: number;
  deleting: number;
  floodCount: number;
}> {
  const records = await service.items('IMG#');
  const claims = (await service.items('KEY#')).filter((claim) => claim['status'] === 'pending');
  // the images' files (the bucket also holds the blocked pictures' list under moderation/)
  const objects = new Set((await service.objectKeys()).filter((key) => key.startsWith('images/')));
  const named = new Set<string>();
  const activeWithoutObjects: number[] = [];
  for (const record of records) {
    const keys = ['original', 'thumb', 'medium'].map((file) => String((record[file] as { key: string }).key));
    keys.forEach((key) => named.add(key));
    if (record['status'] === 'active' && !keys.every((key) => objects.has(key))) activeWithoutObjects.push(Number(record['id']));
  }
  for (const claim of claims) Object.values(claim['keys'] as Record<string, string>).forEach((key) => named.add(key));
  const ids = new Set(records.map((record) => Number(record['id'])));
  const floods = await service.items('FLOOD#');
  return {
    objectsWithoutRecord: [...objects].filter((key) => !named.has(key)),
    activeWithoutObjects,
    dead: claims.filter((claim) => !ids.has(Number(claim['imageId']))).length,
    unsettled: claims.length,
    active: records.filter((record) => record['status'] === 'active').length,
    deleting: records.filter((record) => record['status'] === 'deleting').length,
    floodCount: floods.reduce((sum, item) => sum + Number((item['day'] as { c?: number } | undefined)?.c ?? 0), 0),
  };
}

/** Runs the sweep as if `minutes` had passed, so that the pending name claims of uploads are due. */
async function sweepLater(minutes: number): Promise<void> {
  const env = { BUCKET_NAME: service.bucket, TABLE_NAME: service.table, PARAMETER_PREFIX: service.parameterPrefix, PUBLIC_URL };
  await createSweepHandler(env, NO_METRICS, clockAheadBy(minutes * 60_000))();
}

async function expectConsistent(): Promise<void> {
  const state = await storesState();
  expect({ orphans: state.objectsWithoutRecord, broken: state.activeWithoutObjects, flood: state.floodCount }).toEqual({
    orphans: [],
    broken: [],
    flood: stored + keptByOutage,
  });
}

/** Runs `work` with the fault injected, and takes the fault out whatever happens. */
async function underFault<T>(injector: FaultInjector, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } finally {
    injector.restore();
  }
}

/** The calls every one of the recorded lists holds, each as its `CallRef`: what every such request does. */
function refsInEvery(recorded: readonly string[][]): CallRef[] {
  const key = (ref: CallRef): string => `${ref.call} #${ref.nth}`;
  const [first = [], ...others] = recorded.map(callRefs);
  const inOthers = others.map((refs) => new Set(refs.map(key)));
  return first.filter((ref) => inOthers.every((keys) => keys.has(key(ref))));
}

const PUT = 'S3Client:PutObjectCommand';
const SERVICE_UNAVAILABLE = {
  status_code: 503,
  error: { message: 'Service unavailable, try again', code: 900 },
  status_txt: 'Service Unavailable',
};

describe('store failures during an upload', () => {
  let uploadCalls: CallRef[] = [];

  beforeAll(async () => {
    // three uploads' calls: the ones all three make are what each test below aims at
    const recorded: string[][] = [];
    for (let round = 0; round < 3; round += 1) {
      const recorder = injectFaults();
      try {
        expect((await upload(await freshImage())).statusCode).toBe(200);
      } finally {
        recorder.restore();
      }
      recorded.push(recorder.calls);
    }
    uploadCalls = refsInEvery(recorded);
  });

  it('makes the calls the tests below fail one by one', () => {
    // the key and settings (read at each build here), flood counter, duplicate claim, name claim (pending), the
    // blocked lists, 3 objects, the record
    const calls = uploadCalls.map((ref) => ref.call);
    expect(calls).toEqual(
      expect.arrayContaining([
        `${PUT} object`,
        `${PUT} thumb`,
        `${PUT} medium`,
        'DynamoDBDocumentClient:UpdateCommand FLOOD#',
        'DynamoDBDocumentClient:PutCommand DUP#',
        'DynamoDBDocumentClient:PutCommand KEY#',
        'DynamoDBDocumentClient:PutCommand IMG#',
      ]),
    );
    expect(calls.filter((call) => call.startsWith(PUT))).toHaveLength(3);
  });

  it('answers 503 code 900 (or succeeds when the failed step is not needed) and leaves the stores consistent, whichever call fails', async () => {
    for (const target of uploadCalls) {
      const injector = injectFaults({ fail: [target] });
      const response = await underFault(injector, async () => upload(await freshImage()));
      // the call failed was the one aimed at, whenever it came
      expect({ target, injected: injector.injected }).toEqual({ target, injected: [`${target.call} #${target.nth}`] });
      if (response.statusCode !== 200) {
        expect({ target, status: response.statusCode, body: JSON.parse(response.body) as unknown }).toEqual({
          target,
          status: 503,
          body: SERVICE_UNAVAILABLE,
        });
      }
      await expectConsistent();
      expect((await storesState()).dead).toBe(0);
    }
  });

  it('answers the image when a put was stored but answered as failed, whichever of the three it is', async () => {
    for (const file of ['object', 'thumb', 'medium']) {
      const bytes = await freshImage();
      const injector = injectFaults({ answerLostOf: { call: `${PUT} ${file}`, nth: 0 } });
      const response = await underFault(injector, () => upload(bytes));
      expect({ file, status: response.statusCode, lost: injector.injected }).toEqual({
        file,
        status: 200,
        lost: [`${PUT} ${file} #0`],
      });
      const url = String(jsonBody(response).image['url']);
      expect((await service.objectKeys()).filter((key) => url.endsWith(`/${key}`))).toHaveLength(1);
      await expectConsistent();
      expect((await storesState()).dead).toBe(0);
    }
  });

  it('takes back a record written but answered as failed, with everything else', async () => {
    const bytes = await freshImage();
    const record = { call: 'DynamoDBDocumentClient:PutCommand IMG#', nth: 0 };
    const injector = injectFaults({ answerLostOf: record });
    const response = await underFault(injector, () => upload(bytes));
    expect([response.statusCode, injector.injected]).toEqual([503, ['DynamoDBDocumentClient:PutCommand IMG# #0']]);
    await expectConsistent();
    expect((await storesState()).dead).toBe(0);
  });

  it('leaves a pending name claim that names its objects when the clean-up fails too, and the sweep removes them', async () => {
    // an outage from a rendition's put on (the original is stored), and from the record's write on
    const outages = [
      { call: `${PUT} thumb`, nth: 0 },
      { call: 'DynamoDBDocumentClient:PutCommand IMG#', nth: 0 },
    ];
    for (const failFrom of outages) {
      const floodBefore = (await storesState()).floodCount;
      const injector = injectFaults({ failFrom });
      const response = await upload(await freshImage()).finally(() => injector.restore());
      expect({ failFrom, status: response.statusCode }).toEqual({ failFrom, status: 503 });
      const state = await storesState();
      expect(state.floodCount - floodBefore).toBeLessThanOrEqual(1);
      keptByOutage += state.floodCount - floodBefore;
      expect(state.objectsWithoutRecord).toEqual([]);
      expect(state.dead).toBe(1);
      await sweepLater(16);
      await expectConsistent();
      expect(await storesState()).toMatchObject({ dead: 0, unsettled: 0 });
    }
  });

  it('leaves a record whose rendition failed, when taking it back fails too, and the sweep removes it whole', async () => {
    // the record is written alongside the renditions' puts: a rendition's put fails, the record is written, and
    // everything after it (the record's removal, the clean-up) fails as in an outage
    const record = { call: 'DynamoDBDocumentClient:PutCommand IMG#', nth: 0 };
    const floodBefore = (await storesState()).floodCount;
    const injector = injectFaults({ fail: [{ call: `${PUT} thumb`, nth: 0 }], failAfter: record });
    const response = await upload(await freshImage()).finally(() => injector.restore());
    expect(response.statusCode).toBe(503);
    expect(injector.injected[0]).toBe(`${PUT} thumb #0`);
    const state = await storesState();
    keptByOutage += state.floodCount - floodBefore;
    expect(state.objectsWithoutRecord).toEqual([]);
    expect(state.activeWithoutObjects).toHaveLength(1); // its name claim, still pending, names it for the sweep
    expect(state.unsettled).toBe(1);
    await sweepLater(16);
    await expectConsistent();
    expect(await storesState()).toMatchObject({ dead: 0, unsettled: 0 });
  });
});

describe('store failures during a delete', () => {
  it('answers 503 and the sweep finishes the removal, whichever call fails', async () => {
    const recorder = injectFaults();
    const image = jsonBody(await upload(await freshImage())).image;
    recorder.restore();
    const counted = injectFaults();
    expect((await service.send(new Request(String(image['delete_url']), { method: 'POST' }))).statusCode).toBe(200);
    counted.restore();
    const deleteCalls = callRefs(counted.calls);
    expect(deleteCalls.filter((ref) => ref.call.startsWith('S3Client:DeleteObjectCommand'))).toHaveLength(3);

    for (const target of deleteCalls) {
      const deleted = jsonBody(await upload(await freshImage())).image;
      const injector = injectFaults({ fail: [target] });
      const response = await service
        .send(new Request(String(deleted['delete_url']), { method: 'POST' }))
        .finally(() => injector.restore());
      expect({ target, injected: injector.injected }).toEqual({ target, injected: [`${target.call} #${target.nth}`] });
      if (response.statusCode !== 200) expect([target, response.statusCode]).toEqual([target, 503]);
      await sweepLater(1);
      const viewer = await service.send(new Request(String(deleted['url_viewer'])));
      // either the delete never began (the image is whole and shown) or it is finished now
      if (viewer.statusCode === 200) {
        await expectConsistent();
        expect((await service.send(new Request(String(deleted['delete_url']), { method: 'POST' }))).statusCode).toBe(200);
        // a delete link leaves the record to the sweep, which purges the files at the CDN and forgets it
        await sweepLater(1);
      }
      await expectConsistent();
      expect((await storesState()).deleting).toBe(0);
    }
  });
});

describe('a conditional write whose answer is lost, retried by the SDK', () => {
  // The retry meets the item its first attempt wrote: the upload's own duplicate claim, name claim or record, which
  // must count as written, not as held by another upload, a name taken or an id taken.
  it.each([
    ['the duplicate claim', 'DUP#', 'lost-dup.png'],
    ['the name claim', 'KEY#', 'lost-key.png'],
    ['the record', 'IMG#', 'lost-img.png'],
  ])('stores one image under its own name when the answer to %s is lost', async (_what, prefix, filename) => {
    const bytes = await freshImage();
    const injector = loseFirstAnswer('PutItem', prefix);
    const response = await underFault(injector, () =>
      service.send(multipartUpload({ key: service.apiKey, source: { bytes, filename } })),
    );
    expect(injector.lost).toBe(true);
    expect(response.statusCode).toBe(200);
    stored += 1;
    const image = jsonBody(response).image;
    expect(String(image['url'])).toMatch(new RegExp(`/${filename.replace('.', '\\.')}$`));
    const records = (await service.items('IMG#')).filter((item) =>
      String((item['original'] as { key: string }).key).endsWith(`/${filename}`),
    );
    // one record, bound to its duplicate claim; one name claim
    expect(records.map((record) => [record['status'], typeof record['dupWidth']])).toEqual([['active', 'number']]);
    expect((await service.items('KEY#')).filter((claim) => String(claim['pk']).includes(filename.slice(0, -4)))).toHaveLength(1);
    await expectConsistent();
  });

  it("counts an upload once in its flood windows when the answer to the counters' write is lost", async () => {
    const bytes = await freshImage();
    const taking = loseFirstAnswer('UpdateItem', 'FLOOD#');
    const response = await underFault(taking, () => upload(bytes));
    expect([taking.lost, response.statusCode]).toEqual([true, 200]);
    await expectConsistent(); // the counters hold the uploads stored, this one once
    // the same bytes again: a duplicate, which counts as any upload answered (`docs/rules.md`)
    expect((await upload(bytes)).statusCode).toBe(200);
    await expectConsistent();
    // bytes that are no image, refused once the slot was taken: the slot is given back; that answer lost too
    const givingBack = loseFirstAnswer('UpdateItem', 'FLOOD#', 2);
    const refused = await underFault(givingBack, () => upload(Buffer.from('no image, only text')));
    expect([givingBack.lost, refused.statusCode]).toEqual([true, 415]);
    await expectConsistent();
  });

  it("lands a change of the blocked pictures once, its object kept, when the answer to the list's switch is lost", async () => {
    const store = storesOf(service).pictureBlocks;
    const injector = loseFirstAnswer('PutItem', 'PDQLIST');
    const next = withBatch(await store.read(), ['c3'.repeat(32)], 'the switch lost', 1).list;
    expect(await underFault(injector, () => store.replace(next))).toBe(true);
    expect(injector.lost).toBe(true);
    // the object the item names is there: the retry did not take it for a change that came first
    expect((await store.read()).batches.map((batch) => batch.reason)).toContain('the switch lost');
  });

  it('answers a delete as done when the answer to its mark is lost', async () => {
    const image = jsonBody(await upload(await freshImage())).image;
    const injector = loseFirstAnswer('UpdateItem', 'IMG#');
    const response = await underFault(injector, () => service.send(new Request(String(image['delete_url']), { method: 'POST' })));
    expect(injector.lost).toBe(true);
    expect(response.statusCode).toBe(200);
    expect((await service.send(new Request(String(image['url_viewer'])))).statusCode).toBe(404);
    await expectConsistent();
    await sweepLater(1);
    expect((await storesState()).deleting).toBe(0);
  });

  it("finishes a two-step upload when the answer to its token's use is lost", async () => {
    const bytes = await freshImage();
    const post = (path: string, fields: Record<string, string>): Promise<{ statusCode: number; body: string }> =>
      service.send(
        new Request(`${PUBLIC_URL}${path}`, {
          method: 'POST',
          headers: { 'X-API-Key': service.apiKey },
          body: new URLSearchParams(fields),
        }),
      );
    const issued = await post('/api/1/upload-url', { size: String(bytes.length), filename: 'lost-token.png' });
    expect(issued.statusCode).toBe(200);
    const ticket = (
      JSON.parse(issued.body) as { upload: { url: string; method: string; headers: Record<string, string>; token: string } }
    ).upload;
    expect((await fetch(ticket.url, { method: ticket.method, headers: ticket.headers, body: bytes })).status).toBe(200);
    const injector = loseFirstAnswer('PutItem', 'TOKEN#');
    const response = await underFault(injector, () => post('/api/1/upload', { upload_token: ticket.token }));
    expect(injector.lost).toBe(true);
    expect([response.statusCode, response.body]).toEqual([200, expect.stringContaining('lost-token.png')]);
    stored += 1;
    await expectConsistent();
  });
});

describe('the sweep settling a stored upload, its answer lost', () => {
  it("counts the upload once in the day's figures", async () => {
    const own = await createTestService();
    const response = await own.send(
      multipartUpload({ key: own.apiKey, source: { bytes: await freshImage(), filename: 'settled.png' } }),
    );
    expect(response.statusCode).toBe(200);
    const env = { BUCKET_NAME: own.bucket, TABLE_NAME: own.table, PARAMETER_PREFIX: own.parameterPrefix, PUBLIC_URL };
    const settling = loseFirstAnswer('UpdateItem', 'KEY#');
    await underFault(settling, () => createSweepHandler(env, NO_METRICS, clockAheadBy(20 * 60_000))());
    expect(settling.lost).toBe(true);
    const days = await own.items('STATS#');
    expect(days.map((day) => day['uploads'])).toEqual([1]);
    expect((await own.items('KEY#')).filter((claim) => claim['status'] === 'pending')).toEqual([]);
  });
});

describe('a cold start whose settings cannot be read', () => {
  it('answers 503 code 900 in the envelope (not a bare gateway error), and the next request starts again', async () => {
    // the public URL from its parameter, as the stack gives it: read at cold start
    const cold = await createTestService({ PUBLIC_URL: '' });
    await cold.clients.ssm.send(
      new PutParameterCommand({ Name: `${cold.parameterPrefix}/public-url`, Value: PUBLIC_URL, Type: 'String' }),
    );
    const request = async () =>
      cold.send(multipartUpload({ key: cold.apiKey, source: { bytes: await makePng(12, 9), filename: 'cold.png' } }));
    const failed = await underFault(injectFaults({ failFrom: 0 }), request);
    expect(failed.statusCode).toBe(503);
    expect(JSON.parse(failed.body)).toEqual({
      status_code: 503,
      error: { message: 'Service unavailable, try again', code: 900 },
      status_txt: 'Service Unavailable',
    });
    expect((await request()).statusCode).toBe(200);
  });
});

describe('a cold start without a public URL', () => {
  it('answers 500 in the envelope when neither PUBLIC_URL nor its parameter is set, or it is not an http(s) URL', async () => {
    for (const publicUrl of [undefined, 'ftp://img.example.test', 'img.example.test', 'https://img.example.test/?a=1']) {
      const cold = await createTestService({ PUBLIC_URL: '' });
      if (publicUrl)
        await cold.clients.ssm.send(
          new PutParameterCommand({ Name: `${cold.parameterPrefix}/public-url`, Value: publicUrl, Type: 'String' }),
        );
      const response = await cold.send(
        multipartUpload({ key: cold.apiKey, source: { bytes: await makePng(12, 9), filename: 'cold.png' } }),
      );
      expect([publicUrl, response.statusCode, JSON.parse(response.body)]).toEqual([
        publicUrl,
        500,
        { status_code: 500, error: { message: 'Internal server error', code: 500 }, status_txt: 'Internal Server Error' },
      ]);
    }
  });
});
