import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { sha256Hex } from '../../functions/core/hashes';
import { NO_METRICS } from '../../functions/core/metrics';
import type { CachePurger, Logger } from '../../functions/core/ports';
import type { PurgeRequest } from '../../functions/core/ports';
import { removeImage } from '../../functions/core/lifecycle/remove-image';
import { Sweeper, type SweepOptions } from '../../functions/core/lifecycle/sweeper';
import { makePng } from '../support/images';
import { clockAheadBy } from '../support/in-memory';
import {
  createTestService,
  InMemoryMetrics,
  jsonBody,
  multipartUpload,
  storesOf,
  type TestService,
} from '../support/test-service';

jest.setTimeout(60_000);

const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A CDN that records what it is asked to purge, and refuses (throttled) while `refusing` is set. */
class RecordingPurger implements CachePurger {
  readonly requests: PurgeRequest[] = [];
  refusing = false;

  async purge(request: PurgeRequest): Promise<number> {
    if (this.refusing)
      throw Object.assign(new Error('Too many invalidations in progress'), { name: 'TooManyInvalidationsInProgress' });
    this.requests.push(request);
    return request.keys.length + request.folders.length;
  }

  keys(): string[] {
    return this.requests.flatMap((request) => request.keys);
  }

  /** Whether every key was purged, itself or with a folder above it. */
  reached(keys: readonly string[]): boolean {
    const folders = this.requests.flatMap((request) => request.folders);
    return keys.every((key) => this.keys().includes(key) || folders.some((folder) => key.startsWith(folder)));
  }
}

/** A sweeper of the service's stores; `aheadMs` runs its clock ahead (the stores' signatures keep the real time). */
function sweeperOf(service: TestService, purger: CachePurger, metrics = NO_METRICS, aheadMs = 0, keepDeletedMs = 0): Sweeper {
  const { images, objects, duplicates } = storesOf(service);
  return new Sweeper({
    ...{ images, objects, duplicates, purger, clock: clockAheadBy(aheadMs), logger: quiet, metrics },
    keepDeletedMs,
  });
}

const options = (overrides: Partial<SweepOptions> = {}): SweepOptions => ({
  budgetMs: 60_000,
  concurrency: 4,
  partitions: 3,
  pageSize: 2,
  ...overrides,
});

/** Uploads `count` images that expire in 5 minutes; answers their stored keys. */
async function expiringImages(service: TestService, count: number, first = 0): Promise<string[]> {
  const keys: string[] = [];
  for (let index = first; index < first + count; index += 1) {
    const image = jsonBody(
      await service.send(
        multipartUpload({
          key: service.apiKey,
          expiration: '300',
          source: { bytes: await makePng(30 + index, 9), filename: `x${index}.png` },
        }),
      ),
    ).image;
    const path = (url: unknown): string => new URL(String(url)).pathname.slice(1);
    keys.push(path(image['url']), path((image['thumb'] as { url: string }).url), path((image['medium'] as { url: string }).url));
  }
  return keys;
}

/** Makes the clock read 5 minutes later, after the expiry of `expiringImages` (their name claims are not due yet). */
function afterExpiry(): void {
  const realNow = Date.now();
  jest.spyOn(Date, 'now').mockReturnValue(realNow + 301_000);
}

afterEach(() => jest.restoreAllMocks());

describe('the sweep', () => {
  it('pages through every due record, and purges the files of all of them at once, as their day folder when they take more paths than a run sends', async () => {
    const service = await createTestService({ DUPLICATES: 'allow' });
    const keys = await expiringImages(service, 7);
    afterExpiry();
    const purger = new RecordingPurger();
    const metrics = new InMemoryMetrics();
    const result = await sweeperOf(service, purger, metrics).sweep(options());
    // 21 files of one day: one path, their folder
    expect(result).toEqual({ removed: 7, failed: 0, purgedPaths: 1 });
    expect(purger.requests).toEqual([{ keys: [], folders: [keys[0]?.slice(0, keys[0].lastIndexOf('/') + 1)] }]);
    expect(purger.reached(keys)).toBe(true);
    expect(await service.objectKeys()).toEqual([]);
    expect(await service.items('IMG#')).toEqual([]);
    expect(metrics.sum('SweepRemoved')).toBe(7);
    expect(metrics.sum('PurgedPaths')).toBe(1);
    expect(metrics.values.find((entry) => entry.name === 'SweepBacklogAge')?.value).toBe(0);
  });

  it('stops taking pages when its time budget ends, reports the backlog, and the next run finishes', async () => {
    const service = await createTestService({ DUPLICATES: 'allow' });
    await expiringImages(service, 5);
    afterExpiry();
    const metrics = new InMemoryMetrics();
    const first = await sweeperOf(service, new RecordingPurger(), metrics).sweep(options({ budgetMs: 0, partitions: 1 }));
    // one page (of the first shard of the index holding any), not all
    expect(first.removed).toBeGreaterThan(0);
    expect(first.removed).toBeLessThanOrEqual(2);
    const backlog = metrics.values.find((entry) => entry.name === 'SweepBacklogAge');
    expect(backlog?.unit).toBe('Seconds');
    expect(backlog?.value).toBeGreaterThan(0);
    // several shards at once: each under way finishes its page, and none is begun after the budget
    const second = await sweeperOf(service, new RecordingPurger()).sweep(options({ budgetMs: 0, partitions: 2 }));
    expect(second.removed).toBeLessThanOrEqual(4);
    const third = await sweeperOf(service, new RecordingPurger()).sweep(options());
    expect(first.removed + second.removed + third.removed).toBe(5);
    expect(await service.items('IMG#')).toEqual([]);
  });

  it('keeps the records of a refused purge, their files gone, and a later run purges them and removes the records', async () => {
    const service = await createTestService({ DUPLICATES: 'allow' });
    const keys = await expiringImages(service, 3);
    afterExpiry();
    const purger = new RecordingPurger();
    purger.refusing = true;
    const metrics = new InMemoryMetrics();
    expect(await sweeperOf(service, purger, metrics).sweep(options())).toEqual({ removed: 0, failed: 0, purgedPaths: 0 });
    expect(metrics.sum('PurgeFailures')).toBe(1);
    expect(await service.objectKeys()).toEqual([]);
    expect(await service.items('IMG#')).toHaveLength(3);
    // the viewer already answers 404
    purger.refusing = false;
    expect(await sweeperOf(service, purger).sweep(options())).toEqual({ removed: 3, failed: 0, purgedPaths: 1 });
    expect(purger.reached(keys)).toBe(true);
    expect(await service.items('IMG#')).toEqual([]);
  });

  it('removes a dead upload (name claim pending, no record) without purging anything: no CDN ever had its files', async () => {
    const service = await createTestService();
    const image = jsonBody(
      await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await makePng(42, 9), filename: 'p.png' } })),
    ).image;
    const id = (await service.idCodec()).decode(String(image['id_encoded'])) ?? 0;
    // as an upload that died after its name claim and its puts: the claim pending past its grace, no record
    const stored = await service.item(`IMG#${id}`);
    await DynamoDBDocumentClient.from(service.clients.dynamodb).send(
      new DeleteCommand({ TableName: service.table, Key: { pk: `IMG#${id}` } }),
    );
    const purger = new RecordingPurger();
    expect(await sweeperOf(service, purger).sweep(options())).toEqual({ removed: 0, failed: 0, purgedPaths: 0 });
    expect(await service.objectKeys()).toHaveLength(3); // within its grace: it may still be storing
    expect(await sweeperOf(service, purger, NO_METRICS, 16 * 60_000).sweep(options())).toEqual({
      removed: 1,
      failed: 0,
      purgedPaths: 0,
    });
    expect(purger.requests).toEqual([]);
    expect(await service.objectKeys()).toEqual([]);
    // the name stays taken, out of the sweep's sight
    const name = (stored?.['original'] as { key: string }).key;
    // (with the mark of the settling, which a retry of it would meet)
    const { settledBy, ...claim } = (await service.item(`KEY#${name}`)) ?? {};
    expect([claim, typeof settledBy]).toEqual([{ pk: `KEY#${name}`, imageId: id }, 'string']);
  });

  it('removes an upload that died between its record and its files (written at once): record, files and duplicate entry', async () => {
    const service = await createTestService();
    const image = jsonBody(
      await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await makePng(44, 9), filename: 'r.png' } })),
    ).image;
    // as an upload that died after its record and its original's put, before a rendition's put ended
    const thumbKey = new URL(String((image['thumb'] as { url: string }).url)).pathname.slice(1);
    await service.clients.s3.send(new DeleteObjectCommand({ Bucket: service.bucket, Key: thumbKey }));
    expect(await service.items('DUP#')).toHaveLength(1);
    const purger = new RecordingPurger();
    expect(await sweeperOf(service, purger).sweep(options())).toEqual({ removed: 0, failed: 0, purgedPaths: 0 });
    expect(await service.items('IMG#')).toHaveLength(1); // within its grace: it may still be storing
    expect(await sweeperOf(service, purger, NO_METRICS, 16 * 60_000).sweep(options())).toEqual({
      removed: 1,
      failed: 0,
      purgedPaths: 0,
    });
    expect(purger.requests).toEqual([]); // never answered: no CDN had its files
    expect(await service.objectKeys()).toEqual([]);
    expect(await service.items('IMG#')).toEqual([]);
    expect(await service.items('DUP#')).toEqual([]);
    expect((await service.items('KEY#')).map((claim) => claim['status'])).toEqual([undefined]); // the name stays taken
  });

  it('settles the name claims of stored uploads after their grace, leaving their files and records', async () => {
    const service = await createTestService();
    await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await makePng(43, 9), filename: 'q.png' } }));
    const pendingClaims = async () => (await service.items('KEY#')).filter((claim) => claim['status'] === 'pending');
    expect(await pendingClaims()).toHaveLength(1);
    const later = sweeperOf(service, new RecordingPurger(), NO_METRICS, 16 * 60_000);
    expect(await later.sweep(options())).toEqual({ removed: 0, failed: 0, purgedPaths: 0 });
    expect(await pendingClaims()).toEqual([]);
    expect(await service.items('KEY#')).toHaveLength(1);
    expect(await service.objectKeys()).toHaveLength(3);
    expect(await service.items('IMG#')).toHaveLength(1);
  });

  it('removes two runs that overlap exactly once between them, without failures', async () => {
    const service = await createTestService({ DUPLICATES: 'allow' });
    await expiringImages(service, 8);
    afterExpiry();
    const purger = new RecordingPurger();
    const [one, two] = await Promise.all([
      sweeperOf(service, purger).sweep(options()),
      sweeperOf(service, purger).sweep(options()),
    ]);
    expect((one?.removed ?? 0) + (two?.removed ?? 0)).toBe(8);
    expect((one?.failed ?? 0) + (two?.failed ?? 0)).toBe(0);
    expect(await service.objectKeys()).toEqual([]);
    expect(await service.items('IMG#')).toEqual([]);
  });

  it('purges a delete whose own purge was refused: the record stays deleting until the sweep purges it', async () => {
    const service = await createTestService();
    const image = jsonBody(
      await service.send(multipartUpload({ key: service.apiKey, source: { bytes: await makePng(41, 9), filename: 'd.png' } })),
    ).image;
    const id = (await service.idCodec()).decode(String(image['id_encoded'])) ?? 0;
    const token = String(image['delete_url']).split('/').pop() ?? '';
    const stores = storesOf(service);
    // what a delete link does, with a CDN that refuses the purge
    expect(await stores.images.markDeleting(id, sha256Hex(token), Date.now())).toBe(true);
    const refusing = new RecordingPurger();
    refusing.refusing = true;
    const record = await stores.images.find(id);
    if (record?.status !== 'deleting') throw new Error('the record is not being deleted');
    await removeImage({ ...stores, purger: refusing, logger: quiet }, record);
    expect(await service.objectKeys()).toEqual([]);
    expect((await service.item(`IMG#${id}`))?.['status']).toBe('deleting');
    expect((await service.send(new Request(String(image['url_viewer'])))).statusCode).toBe(404);

    const purger = new RecordingPurger();
    expect(await sweeperOf(service, purger).sweep(options())).toEqual({ removed: 1, failed: 0, purgedPaths: 3 });
    expect(purger.keys()).toEqual([record.original.key, record.thumb.key, record.medium.key]);
    expect(await service.item(`IMG#${id}`)).toBeUndefined();
  });

  it('keeps the records of expired images to restore, and removes a taken-down one whose purge it finishes', async () => {
    const service = await createTestService({ DUPLICATES: 'allow' });
    await expiringImages(service, 2);
    const stores = storesOf(service);
    const ids = (await service.items('IMG#')).map((item) => Number(item['id']));
    // a takedown whose purge was refused leaves its record deleting, marked taken down, for the sweep
    expect(await stores.images.markTakenDown(ids[0] ?? 0, Date.now())).toBe(true);
    afterExpiry();
    const keepMs = 7 * 86_400_000;
    const result = await sweeperOf(service, new RecordingPurger(), NO_METRICS, 0, keepMs).sweep(options());
    expect(result).toEqual({ removed: 2, failed: 0, purgedPaths: 6 });
    expect(await service.objectKeys()).toEqual([]);
    expect(await service.items('IMG#')).toEqual([
      expect.objectContaining({ id: ids[1], status: 'removed', restorableUntilMs: Date.now() + keepMs }),
    ]);
  });
});
