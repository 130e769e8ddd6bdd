/** The one DynamoDB table's keys, index and TTL attribute; the CDK stack and the local stand-in make it from these. */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  ttlAttribute: 'ttl',
  /** Sparse index of records the sweep must look at: expiring, stuck pending, unfinished deletes. */
  sweepIndex: { name: 'sweep', partitionKey: 'sweepShard', sortKey: 'sweepAtMs' },
} as const;

/** Sweep index partitions: spreads writes so no single index partition gets hot. */
export const SWEEP_SHARDS = 8;
