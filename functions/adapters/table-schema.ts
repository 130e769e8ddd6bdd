/** The one DynamoDB table's key and TTL attribute; the CDK stack and the local stand-in make it from these. */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  ttlAttribute: 'ttl',
} as const;

/** Defaults of the flood-limits parameter (contract, section 12); 0 turns a window off. */
export const DEFAULT_FLOOD_LIMITS = { minute: 50, hour: 500, day: 1000, week: 5000, month: 10000 } as const;
