import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PutParameterCommand } from '@aws-sdk/client-ssm';
import { createHandler } from '../../functions/roots/handler';
import {
  decodePictureBlocks,
  encodePictureBlocks,
  hashesOfStored,
  S3PictureBlocks,
} from '../../functions/adapters/s3-picture-blocks';
import { HASH_BYTES, HashIndex } from '../../functions/core/moderation/hash-index';
import { NO_PICTURE_BLOCKS } from '../../functions/core/moderation/picture-blocks';
import { HASHED_FRAMES, MOST_INNER_PICTURES, queriesOf } from '../../functions/fingerprint/views';
import type { PictureBlockList } from '../../functions/core/moderation/picture-blocks';
import { eventOfRequest, localContext } from '../../local/api-gateway-event';
import { localClients, provision } from '../../local/provision';
import { standInEnvironment } from '../../local/stand-ins';
import { benchJpeg } from './fixtures';
import { benchHandlerEnv, startStoresProcess } from './handler';
import { median, medianOfRatios } from './median';

export interface BlockListRow {
  hashes: number;
  /** The stored form's size. */
  storedMB: number;
  /** From the stored form's bytes to an index ready (decode and build), p50 of fresh processes. */
  loadMs: number;
  /** What the index holds. */
  indexMiB: number;
  /**
   * One upload's check at its most (`pictureQueries`): an opaque still picture's (the eight turns of its hash, its 15
   * crops and 8 pictures inside it: 31 queries), and one with transparency and a border (four hashes' turns: 55).
   */
  oneHashP50: number;
  oneHashP99: number;
  fourHashesP50: number;
  fourHashesP99: number;
  /** An opaque animation of six distinct frames, each queried as an opaque still picture: 186 queries. */
  animationP50: number;
  animationP99: number;
}

/** The crops an upload's check queries, as they are: centred, and from each side (`VIEWS`). */
export const CROP_QUERIES = queriesOf('centredCrops') + queriesOf('sideCrops');

/**
 * The most queries of a picture (a still one, or each frame an animation is hashed by) with `hashes` hashes of its
 * own: each turned and mirrored the eight ways, its crops, and the most pictures found inside it (`VIEWS`).
 */
export const pictureQueries = (hashes: number): number => 8 * hashes + CROP_QUERIES + MOST_INNER_PICTURES;

/**
 * A list of `count` random hashes (as unrelated as a shared list's are to an upload), in its stored form. Made in one
 * buffer and put in order by a sort of numbers, with no object a hash: a million small buffers would leave the load
 * measured below a collection of garbage that the function, which reads the list as one object, never has.
 */
export function randomList(count: number): Uint8Array {
  const random = randomBytes(count * HASH_BYTES);
  // each hash's first 4 bytes and its row in one number (below 2^52), sorted
  const ROWS = 2 ** 20;
  const keys = new Float64Array(count);
  for (let row = 0; row < count; row += 1) keys[row] = random.readUInt32BE(row * HASH_BYTES) * ROWS + row;
  keys.sort();
  const hashes = Buffer.alloc(count * HASH_BYTES);
  keys.forEach((key, at) => random.copy(hashes, at * HASH_BYTES, (key % ROWS) * HASH_BYTES, ((key % ROWS) + 1) * HASH_BYTES));
  // the few runs of hashes alike in their first 4 bytes, put in order by the rest
  const prefix = (at: number): number => hashes.readUInt32BE(at * HASH_BYTES);
  for (let at = 0, end = 1; at < count; at = end, end = at + 1) {
    while (end < count && prefix(end) === prefix(at)) end += 1;
    if (end - at === 1) continue;
    const run = Array.from({ length: end - at }, (_, k) =>
      Buffer.from(hashes.subarray((at + k) * HASH_BYTES, (at + k + 1) * HASH_BYTES)),
    );
    run.sort((a, b) => Buffer.compare(a, b)).forEach((hash, k) => hash.copy(hashes, (at + k) * HASH_BYTES));
  }
  const list: PictureBlockList = {
    ...NO_PICTURE_BLOCKS,
    hashes,
    batchOf: new Uint32Array(count).fill(1),
    batches: [{ id: 1, reason: 'imported: bench', addedAtMs: 0 }],
    lastBatchId: 1,
  };
  return encodePictureBlocks(list);
}

const percentile = (values: readonly number[], share: number): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * share))] ?? 0;

/**
 * In a fresh process (`BENCH_BLOCK_LIST=COUNT`): a list of COUNT hashes loaded from its stored form, what the process
 * keeps of it, and the checks of uploads that match nothing (the usual case: a match ends the check early).
 */
async function measureInProcess(count: number): Promise<void> {
  const stored = randomList(count);
  const started = performance.now();
  const index = await HashIndex.build(hashesOfStored(stored));
  const loadMs = performance.now() - started;
  const checks = (hashes: number, frames = 1): number[] =>
    Array.from({ length: 2_000 }, () => {
      const queries = frames * pictureQueries(hashes);
      const turned = Array.from({ length: queries }, () => randomBytes(HASH_BYTES).toString('hex'));
      const start = performance.now();
      if (index.anyWithin(turned, 31)) throw new Error('a random hash matched');
      return performance.now() - start;
    }).slice(100);
  const one = checks(1);
  const four = checks(4);
  const animation = checks(1, HASHED_FRAMES);
  const row: BlockListRow = {
    hashes: count,
    storedMB: stored.length / 1e6,
    loadMs,
    indexMiB: index.bytes / 2 ** 20,
    oneHashP50: median(one),
    oneHashP99: percentile(one, 0.99),
    fourHashesP50: median(four),
    fourHashesP99: percentile(four, 0.99),
    animationP50: median(animation),
    animationP99: percentile(animation, 0.99),
  };
  process.stdout.write(`${JSON.stringify(row)}\n`);
}

/** The block list at each size, each in fresh processes (`runs` of them; the p50 of their loads). */
export function measureBlockLists(sizes: readonly number[], runs: number): BlockListRow[] {
  return sizes.map((count) => {
    const each = Array.from({ length: runs }, () => {
      const out = execFileSync(process.execPath, ['--import', 'tsx', __filename], {
        encoding: 'utf8',
        env: { ...process.env, BENCH_BLOCK_LIST: String(count) },
        maxBuffer: 1 << 20,
      });
      return JSON.parse(out.trim().split('\n').pop() ?? '{}') as BlockListRow;
    });
    const last = each[each.length - 1] as BlockListRow;
    return { ...last, loadMs: median(each.map((row) => row.loadMs)) };
  });
}

/**
 * The whole upload through two handlers on the same stand-ins, one whose stores hold a list of `count` blocked
 * pictures and one whose hold none, in turns; the first upload of each (the cold start, and the list's load) is left
 * out and reported apart.
 */
export async function measureUploadWithList(
  count: number,
  iterations: number,
): Promise<{ withP50: number; withoutP50: number; ratio: number; firstWithMs: number; firstWithoutMs: number }> {
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
  process.env['POWERTOOLS_LOG_LEVEL'] = 'SILENT';
  const stores = await startStoresProcess();
  try {
    const env = standInEnvironment(stores.direct);
    Object.assign(process.env, env);
    const limits = '{"minute":100000,"hour":100000,"day":100000,"week":100000,"month":100000}';
    const handlers = await Promise.all(
      ['plain', 'listed'].map(async (name) => {
        const names = { bucket: `bench-${name}`, table: `bench-${name}-table`, parameterPrefix: `/bench-${name}` };
        const { apiKey } = await provision({ endpoints: stores.direct, ...names });
        const { ssm } = localClients(stores.direct);
        await ssm.send(
          new PutParameterCommand({
            Name: `${names.parameterPrefix}/flood-limits`,
            Value: limits,
            Type: 'String',
            Overwrite: true,
          }),
        );
        ssm.destroy();
        if (name === 'listed') {
          const s3 = new S3Client({ forcePathStyle: true });
          const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));
          const store = new S3PictureBlocks(s3, names.bucket, db, names.table);
          if (!(await store.replace(decodePictureBlocks(randomList(count), '')))) throw new Error('the list was not stored');
          s3.destroy();
          db.destroy();
        }
        const handler = createHandler(benchHandlerEnv(names), { metrics: { add: () => undefined, flush: () => undefined } });
        return { handler, apiKey };
      }),
    );
    const jpeg = await benchJpeg();
    const upload = async (which: number, run: number): Promise<number> => {
      const { handler, apiKey } = handlers[which] ?? handlers[0]!;
      const form = new FormData();
      // a fresh image each time (bytes past the image's end): never a duplicate
      form.append('source', new Blob([Buffer.concat([jpeg, randomBytes(8)])]), `bench-${run}.jpg`);
      form.append('key', apiKey);
      const event = await eventOfRequest(
        new Request('https://img.example.test/api/1/upload', { method: 'POST', body: form }),
        `203.0.113.${run % 250}`,
      );
      const started = performance.now();
      const answer = await handler(event, localContext(event.requestContext.requestId));
      if (answer.statusCode !== 200) throw new Error(`upload failed: ${answer.body}`);
      return performance.now() - started;
    };
    const firstWithoutMs = await upload(0, 0);
    const firstWithMs = await upload(1, 0);
    const plain: number[] = [];
    const listed: number[] = [];
    for (let run = 1; run <= iterations + 1; run += 1) {
      // which goes first, in turns
      const order = run % 2 === 0 ? [0, 1] : [1, 0];
      for (const which of order) {
        const ms = await upload(which, run);
        if (run > 1) (which === 0 ? plain : listed).push(ms);
      }
    }
    return {
      withP50: median(listed),
      withoutP50: median(plain),
      ratio: medianOfRatios(listed, plain),
      firstWithMs,
      firstWithoutMs,
    };
  } finally {
    stores.stop();
  }
}

if (require.main === module && process.env['BENCH_BLOCK_LIST']) void measureInProcess(Number(process.env['BENCH_BLOCK_LIST']));
