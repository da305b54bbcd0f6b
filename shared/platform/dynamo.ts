/**
 * What every store of the fleetscope table does the same way (keys from ./table.ts): item keys and
 * index entries, conditional writes that report a failed condition as `false`, queries that follow every
 * page, and items read back without their key attributes.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { TABLE } from './table.js';

export const PK = TABLE.partitionKey.name;
export const SK = TABLE.sortKey.name;
const G1PK = TABLE.gsi1.partitionKey.name;
const G1SK = TABLE.gsi1.sortKey.name;
export const TTL = TABLE.ttlAttribute;

export type Item = Record<string, unknown>;

/** A write's condition, as the SDK takes it. */
export interface Condition {
  ConditionExpression: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** The partition of everything about one registered cluster (each capability's items by sort key). */
export const clusterPk = (cluster: string) => `CLUSTER#${cluster}`;

/** An item's primary key. */
export const keyOf = (pk: string, sk: string): Item => ({ [PK]: pk, [SK]: sk });

/** The attributes that list an item in gsi1 (a sparse index: one partition per kind of item). */
export const gsi1Of = (partition: string, sort: string): Item => ({ [G1PK]: partition, [G1SK]: sort });

/** Condition: no item with this key exists yet. */
export const IF_ABSENT: Condition = {
  ConditionExpression: 'attribute_not_exists(#pk)',
  ExpressionAttributeNames: { '#pk': PK },
};

/** Condition: an item with this key exists (a delete that reports whether there was anything). */
export const IF_PRESENT: Condition = {
  ConditionExpression: 'attribute_exists(#pk)',
  ExpressionAttributeNames: { '#pk': PK },
};

/** Condition: the stored item's `version` is `expected` (optimistic lock). */
export const ifVersion = (expected: number): Condition => ({
  ConditionExpression: '#v = :v',
  ExpressionAttributeNames: { '#v': 'version' },
  ExpressionAttributeValues: { ':v': expected },
});

/** A write refused because its condition did not hold (by class, or by name from another SDK copy). */
export const isConditionFailure = (err: unknown): boolean =>
  err instanceof ConditionalCheckFailedException ||
  (err as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';

/** An item as its store's type: without the key, index and TTL attributes. */
export function withoutKeys<T>(item: Item): T {
  const { [PK]: _pk, [SK]: _sk, [G1PK]: _g, [G1SK]: _gs, [TTL]: _t, ...rest } = item;
  return rest as T;
}

/** One table's items: reads, conditional writes that say whether they wrote, queries over every page. */
export class Table {
  constructor(
    readonly db: DynamoDBDocumentClient,
    readonly name: string,
  ) {}

  async get(key: Item, opts: { consistent?: boolean } = {}): Promise<Item | undefined> {
    const out = await this.db.send(
      new GetCommand({
        TableName: this.name,
        Key: key,
        ...(opts.consistent ? { ConsistentRead: true } : {}),
      }),
    );
    return out.Item;
  }

  /** Puts an item: true when written, false when `condition` did not hold (nothing written). */
  put(item: Item, condition?: Condition): Promise<boolean> {
    return this.conditional(() =>
      this.db.send(new PutCommand({ TableName: this.name, Item: item, ...condition })),
    );
  }

  /** Deletes an item: true when deleted (or absent), false when `condition` did not hold. */
  delete(key: Item, condition?: Condition): Promise<boolean> {
    return this.conditional(() =>
      this.db.send(new DeleteCommand({ TableName: this.name, Key: key, ...condition })),
    );
  }

  /**
   * The items of partition `pk`, all of them or those whose sort key begins with a prefix or lies
   * between two bounds, read consistently.
   */
  query(
    pk: string,
    range: { beginsWith: string } | { between: [string, string] } | undefined,
    /** Only these attributes (a listing of names need not read 128 KiB values). */
    attributes?: string[],
  ): Promise<Item[]> {
    const names: Record<string, string> = { '#pk': PK };
    const projection = attributes?.map((a, i) => {
      names[`#a${i}`] = a;
      return `#a${i}`;
    });
    const values: Item = { ':pk': pk };
    let condition = '#pk = :pk';
    if (range) {
      names['#sk'] = SK;
      if ('beginsWith' in range) {
        condition += ' AND begins_with(#sk, :p)';
        values[':p'] = range.beginsWith;
      } else {
        condition += ' AND #sk BETWEEN :lo AND :hi';
        [values[':lo'], values[':hi']] = range.between;
      }
    }
    return this.all({
      TableName: this.name,
      KeyConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ConsistentRead: true,
      ...(projection ? { ProjectionExpression: projection.join(', ') } : {}),
    });
  }

  /** Every item of one gsi1 partition (eventually consistent: re-read an item before acting on it). */
  async queryGsi1(partition: string): Promise<Item[]> {
    const items: Item[] = [];
    for await (const page of this.queryGsi1Pages(partition)) items.push(...page);
    return items;
  }

  /** One gsi1 partition page by page (at most 1 MB each), for callers that act on a page as it comes. */
  queryGsi1Pages(partition: string): AsyncGenerator<Item[]> {
    return this.pages({
      TableName: this.name,
      IndexName: TABLE.gsi1.indexName,
      KeyConditionExpression: '#g = :g',
      ExpressionAttributeNames: { '#g': G1PK },
      ExpressionAttributeValues: { ':g': partition },
    });
  }

  /**
   * Many items by key: 100 keys per BatchGetItem (its limit), requests in parallel, unprocessed keys
   * asked again with backoff. Absent items are simply missing from the answer.
   */
  async batchGet(keys: Item[]): Promise<Item[]> {
    const chunks: Item[][] = [];
    for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100));
    const answers = await Promise.all(chunks.map((chunk) => this.batchGetChunk(chunk)));
    return answers.flat();
  }

  private async batchGetChunk(keys: Item[]): Promise<Item[]> {
    const items: Item[] = [];
    let pending = keys;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
      if (attempt > 8)
        throw new Error(`DynamoDB left ${pending.length} keys unprocessed after ${attempt} attempts`);
      const out = await this.db.send(
        new BatchGetCommand({ RequestItems: { [this.name]: { Keys: pending } } }),
      );
      items.push(...(out.Responses?.[this.name] ?? []));
      pending = (out.UnprocessedKeys?.[this.name]?.Keys as Item[] | undefined) ?? [];
    }
    return items;
  }

  private async conditional(send: () => Promise<unknown>): Promise<boolean> {
    try {
      await send();
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /** Every item a query returns, following LastEvaluatedKey through all its pages. */
  private async all(input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): Promise<Item[]> {
    const items: Item[] = [];
    for await (const page of this.pages(input)) items.push(...page);
    return items;
  }

  private async *pages(input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): AsyncGenerator<Item[]> {
    let startKey: Item | undefined;
    do {
      const page = await this.db.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
      yield page.Items ?? [];
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }
}
