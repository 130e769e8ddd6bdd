/** The one DynamoDB table's keys, index and TTL attribute; the CDK stack and the local stand-in make it from these. */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  ttlAttribute: 'ttl',
  /** Sparse index of what the sweep must look at: expiring images, unfinished deletes, pending name claims. */
  sweepIndex: { name: 'sweep', partitionKey: 'sweepShard', sortKey: 'sweepAtMs' },
} as const;

/**
 * Sweep index partitions. Their sort key is a time, so each shard's writes land at its end, where DynamoDB cannot
 * split a hot partition: the shards must take the index's writes alone. Every upload writes it twice (its name
 * claim in, then out): 10,000 uploads a second are 20,000 index writes, 313 a second per shard, under the 1,000 a
 * partition takes (`docs/scale.md`). A run queries each shard: 64 small queries every 5 minutes. Lowering the number
 * would strand items in the shards left out; raising it is safe.
 */
export const SWEEP_SHARDS = 64;

/**
 * Every kind of item the table holds, by the start of its partition key: the one list of them, so no two kinds can
 * meet, and an operator reading the table knows each item by its key.
 */
export const ITEM_PREFIX = {
  /** An image's record: `IMG#42`. */
  image: 'IMG#',
  /** A stored name's claim: `KEY#2026/11/23/a.png`. */
  nameClaim: 'KEY#',
  /** A client's duplicate fingerprint: `DUP#{ip}#{md5}#{width or -}`. */
  duplicate: 'DUP#',
  /** A used two-step upload token: `TOKEN#{id}`. */
  uploadToken: 'TOKEN#',
  /** A blocked fingerprint: `BLOCK#{md5}`. */
  block: 'BLOCK#',
  /**
   * Blocked pictures' PDQ hashes, by their first hex digit (16 items, read whole): `PDQBLOCK#a`. Before the list was
   * an S3 object (`SINGLE_ITEM.pictureList`): read while no list is stored, removed by its first change.
   */
  pictureBlocks: 'PDQBLOCK#',
  /** One day's figures: `STATS#2026-11-23`. */
  dayStats: 'STATS#',
  /** A client's counts under each rule of the guard: `FLOOD#{client}`, `FETCHFAIL#{client}`, `UPLOADURL#{client}`... */
  uploads: 'FLOOD#',
  fetchFailures: 'FETCHFAIL#',
  urlFetches: 'URLFETCH#',
  urlMegabytes: 'URLMB#',
  urlFetchesAtOnce: 'URLATONCE#',
  uploadUrls: 'UPLOADURL#',
  reportsByClient: 'REPORTRATE#',
  /** A viewer's report of an image: `REPORT#{image id}#{client}`. */
  report: 'REPORT#',
} as const;

/**
 * Items of which the table holds one: the image id counter, every ban (the list is short and read whole), and which
 * S3 object is the blocked pictures' list (`adapters/s3-picture-blocks.ts`).
 */
export const SINGLE_ITEM = { idCounter: 'COUNTER#image-id', bans: 'BANS', pictureList: 'PDQLIST' } as const;

/** The sweep index's partition of a shard (`S#0` ... `S#63`); not a table key. */
export const sweepShardKey = (shard: number): string => `S#${shard}`;
