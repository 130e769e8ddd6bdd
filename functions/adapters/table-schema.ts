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
