/**
 * What every store of the fleetscope table does the same way (keys from ./table.ts): item keys,
 * conditional writes that report a failed condition as `false`, queries that follow every page, and
 * items read back without their key attributes.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { TABLE } from './table.js';

export const PK = TABLE.partitionKey.name;
export const SK = TABLE.sortKey.name;
export const G1PK = TABLE.gsi1.partitionKey.name;
export const G1SK = TABLE.gsi1.sortKey.name;
export const TTL = TABLE.ttlAttribute;

export type Item = Record<string, unknown>;

/** The partition of everything about one registered cluster (each capability's items by sort key). */
export const clusterPk = (cluster: string) => `CLUSTER#${cluster}`;

/** An item's primary key. */
export const keyOf = (pk: string, sk: string) => ({ [PK]: pk, [SK]: sk });

/** Condition: no item with this key exists yet. */
export const IF_ABSENT = {
  ConditionExpression: 'attribute_not_exists(#pk)',
  ExpressionAttributeNames: { '#pk': PK },
};

/** Condition: the stored item's `version` is `expected` (optimistic lock). */
export const ifVersion = (expected: number) => ({
  ConditionExpression: '#v = :v',
  ExpressionAttributeNames: { '#v': 'version' },
  ExpressionAttributeValues: { ':v': expected },
});

/** A write refused because its condition did not hold (by class, or by name from another SDK copy). */
export const isConditionFailure = (err: unknown): boolean =>
  err instanceof ConditionalCheckFailedException ||
  (err as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';

/** Sends a conditional write: true when written, false when its condition did not hold (nothing written). */
export async function conditionalWrite(send: () => Promise<unknown>): Promise<boolean> {
  try {
    await send();
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}

/** Every item a query returns, following LastEvaluatedKey through all its pages. */
export async function queryAll(
  db: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await db.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** Every item of one gsi1 partition (a sparse, eventually consistent listing across the fleet). */
export function queryGsi1(db: DynamoDBDocumentClient, table: string, partition: string): Promise<Item[]> {
  return queryAll(db, {
    TableName: table,
    IndexName: TABLE.gsi1.indexName,
    KeyConditionExpression: '#g = :g',
    ExpressionAttributeNames: { '#g': G1PK },
    ExpressionAttributeValues: { ':g': partition },
  });
}

/** An item as its store's type: without the key, index and TTL attributes. */
export function withoutKeys<T>(item: Item): T {
  const { [PK]: _pk, [SK]: _sk, [G1PK]: _g, [G1SK]: _gs, [TTL]: _t, ...rest } = item;
  return rest as T;
}
