/**
 * The one DynamoDB table's keys and index, defined once: the CDK stack deploys it and the local runtime
 * creates it on dynalite from the same definition, so the two cannot drift.
 *
 * Single-table layout (all writes are single-item conditional updates: dynalite has no transactions):
 *   pk = CLUSTER#<name>           sk = META                 the registered cluster
 *   pk = CLUSTER#<name>           sk = STATUS               last inventory of the cluster
 *   pk = CLUSTER#<name>           sk = <capability>#...     each capability's per-cluster state
 * gsi1 lists items of one kind across the fleet (gsi1pk = CLUSTERS, gsi1sk = <name>) and is sparse.
 */
export const TABLE = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  gsi1: {
    indexName: 'gsi1',
    partitionKey: { name: 'gsi1pk', type: 'S' },
    sortKey: { name: 'gsi1sk', type: 'S' },
  },
  /** Epoch seconds; DynamoDB deletes the item some time after. Readers also ignore expired items (dynalite never deletes). */
  ttlAttribute: 'expiresAt',
} as const;

/** Powertools idempotency records (its default key and TTL attribute names). */
export const IDEMPOTENCY_TABLE = {
  partitionKey: { name: 'id', type: 'S' },
  ttlAttribute: 'expiration',
} as const;

/** CreateTable input for the SDK (local runtime, tests, LocalStack without CDK). */
export function createTableInput(tableName: string) {
  const attr = (a: { name: string; type: 'S' }) => ({ AttributeName: a.name, AttributeType: a.type });
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [
      attr(TABLE.partitionKey),
      attr(TABLE.sortKey),
      attr(TABLE.gsi1.partitionKey),
      attr(TABLE.gsi1.sortKey),
    ],
    KeySchema: [
      { AttributeName: TABLE.partitionKey.name, KeyType: 'HASH' as const },
      { AttributeName: TABLE.sortKey.name, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: TABLE.gsi1.indexName,
        KeySchema: [
          { AttributeName: TABLE.gsi1.partitionKey.name, KeyType: 'HASH' as const },
          { AttributeName: TABLE.gsi1.sortKey.name, KeyType: 'RANGE' as const },
        ],
        Projection: { ProjectionType: 'ALL' as const },
      },
    ],
  };
}

export function createIdempotencyTableInput(tableName: string) {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [
      { AttributeName: IDEMPOTENCY_TABLE.partitionKey.name, AttributeType: 'S' as const },
    ],
    KeySchema: [{ AttributeName: IDEMPOTENCY_TABLE.partitionKey.name, KeyType: 'HASH' as const }],
  };
}
