/**
 * The cluster state's DynamoDB adapter (the port: ./cluster-state.ts): the items of the cluster's
 * partition whose sort key begins with the prefix; a kept item is marked keptUntil and given a TTL.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { clusterPk, keyOf, SK, Table, TTL } from '../platform/dynamo.js';
import type { ClusterState } from './cluster-state.js';

export class DynamoClusterState implements ClusterState {
  private readonly table: Table;

  constructor(db: DynamoDBDocumentClient, tableName: string) {
    this.table = new Table(db, tableName);
  }

  async left(cluster: string, prefix: string): Promise<number> {
    const items = await this.table.query(clusterPk(cluster), { beginsWith: prefix });
    return items.filter((i) => i.keptUntil === undefined).length;
  }

  async clear(cluster: string, prefix: string, keepUntil: number | undefined, wrote: () => void) {
    const pk = clusterPk(cluster);
    for (const item of await this.table.query(pk, { beginsWith: prefix })) {
      if (keepUntil === undefined) await this.table.delete(keyOf(pk, String(item[SK])));
      else if (item.keptUntil === undefined)
        await this.table.put({ ...item, keptUntil: keepUntil, [TTL]: Math.ceil(keepUntil / 1000) });
      else continue;
      wrote();
    }
  }
}
