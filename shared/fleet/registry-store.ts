import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { TABLE } from '../platform/table.js';
import type { ClusterStatus, RegisteredCluster } from './cluster.js';

const META = 'META';
const STATUS = 'STATUS';
const CLUSTERS = 'CLUSTERS';
export const clusterPk = (name: string) => `CLUSTER#${name}`;
/** One guard per kube-system UID: a physical cluster is registered under one name only. */
const uidPk = (uid: string) => `CLUSTERUID#${uid}`;

export class ClusterExistsError extends Error {
  override name = 'ClusterExistsError';
}
export class ClusterNotFoundError extends Error {
  override name = 'ClusterNotFoundError';
}

/** The cluster registry in DynamoDB. Every write is a single-item conditional write. */
export class RegistryStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Adds a cluster; refuses (and writes nothing) when the name is taken. */
  async add(cluster: RegisteredCluster): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            [TABLE.partitionKey.name]: clusterPk(cluster.name),
            [TABLE.sortKey.name]: META,
            [TABLE.gsi1.partitionKey.name]: CLUSTERS,
            [TABLE.gsi1.sortKey.name]: cluster.name,
            ...cluster,
          },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': TABLE.partitionKey.name },
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException)
        throw new ClusterExistsError(`cluster "${cluster.name}" is already registered`);
      throw err;
    }
  }

  /** The name a kube-system UID is registered under, per its guard (which may be stale: check it). */
  async uidHolder(uid: string): Promise<string | undefined> {
    const out = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: { [TABLE.partitionKey.name]: uidPk(uid), [TABLE.sortKey.name]: META },
        ConsistentRead: true,
      }),
    );
    return out.Item?.cluster as string | undefined;
  }

  /**
   * Takes the UID's guard for `name`. `staleHolder` is the holder seen before, whose registration is
   * gone (a crash between the guard and the registration, or a deregistration that stopped halfway):
   * the guard is taken over only if it still names that holder. False when someone else holds it.
   */
  async claimUid(uid: string, name: string, staleHolder?: string): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { [TABLE.partitionKey.name]: uidPk(uid), [TABLE.sortKey.name]: META, cluster: name },
          ConditionExpression: staleHolder
            ? '#c = :stale OR #c = :me'
            : 'attribute_not_exists(#pk) OR #c = :me',
          ExpressionAttributeNames: staleHolder
            ? { '#c': 'cluster' }
            : { '#pk': TABLE.partitionKey.name, '#c': 'cluster' },
          ExpressionAttributeValues: staleHolder ? { ':stale': staleHolder, ':me': name } : { ':me': name },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** Releases the UID's guard if `name` still holds it. */
  async releaseUid(uid: string, name: string): Promise<void> {
    try {
      await this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { [TABLE.partitionKey.name]: uidPk(uid), [TABLE.sortKey.name]: META },
          ConditionExpression: '#c = :me',
          ExpressionAttributeNames: { '#c': 'cluster' },
          ExpressionAttributeValues: { ':me': name },
        }),
      );
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  /** Points a registration at another kubeconfig (same cluster, e.g. the simulator restarted elsewhere). */
  async updateKubeconfig(name: string, kubeconfig: RegisteredCluster['kubeconfig']): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { [TABLE.partitionKey.name]: clusterPk(name), [TABLE.sortKey.name]: META },
        UpdateExpression: 'SET #k = :k',
        ConditionExpression: 'attribute_exists(#pk)',
        ExpressionAttributeNames: { '#k': 'kubeconfig', '#pk': TABLE.partitionKey.name },
        ExpressionAttributeValues: { ':k': kubeconfig },
      }),
    );
  }

  async get(name: string): Promise<RegisteredCluster | undefined> {
    const out = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: { [TABLE.partitionKey.name]: clusterPk(name), [TABLE.sortKey.name]: META },
        ConsistentRead: true,
      }),
    );
    return out.Item ? toCluster(out.Item) : undefined;
  }

  /** Every registered cluster, in name order, following the query's pages. */
  async list(): Promise<RegisteredCluster[]> {
    const clusters: RegisteredCluster[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: TABLE.gsi1.indexName,
          KeyConditionExpression: '#g = :g',
          ExpressionAttributeNames: { '#g': TABLE.gsi1.partitionKey.name },
          ExpressionAttributeValues: { ':g': CLUSTERS },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) clusters.push(toCluster(item));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return clusters;
  }

  /** Removes a cluster's registration (and its UID guard); refuses when it is not registered. */
  async remove(name: string): Promise<void> {
    const existing = await this.get(name);
    try {
      await this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { [TABLE.partitionKey.name]: clusterPk(name), [TABLE.sortKey.name]: META },
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#pk': TABLE.partitionKey.name },
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException)
        throw new ClusterNotFoundError(`cluster "${name}" is not registered`);
      throw err;
    }
    await this.db.send(
      new DeleteCommand({
        TableName: this.table,
        Key: { [TABLE.partitionKey.name]: clusterPk(name), [TABLE.sortKey.name]: STATUS },
      }),
    );
    if (existing?.kubeSystemUid) await this.releaseUid(existing.kubeSystemUid, name);
  }

  /**
   * Records an inventory only if it is newer than the stored one (a late, redelivered result never
   * overwrites a fresher one).
   */
  async putStatus(status: ClusterStatus): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            [TABLE.partitionKey.name]: clusterPk(status.cluster),
            [TABLE.sortKey.name]: STATUS,
            ...status,
          },
          ConditionExpression: 'attribute_not_exists(#pk) OR #at < :at',
          ExpressionAttributeNames: { '#pk': TABLE.partitionKey.name, '#at': 'observedAt' },
          ExpressionAttributeValues: { ':at': status.observedAt },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  async getStatus(name: string): Promise<ClusterStatus | undefined> {
    const out = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: { [TABLE.partitionKey.name]: clusterPk(name), [TABLE.sortKey.name]: STATUS },
      }),
    );
    if (!out.Item) return undefined;
    const { pk: _pk, sk: _sk, ...status } = out.Item;
    return status as ClusterStatus;
  }
}

function toCluster(item: Record<string, unknown>): RegisteredCluster {
  return {
    name: item.name as string,
    kubeconfig: item.kubeconfig as RegisteredCluster['kubeconfig'],
    labels: (item.labels as Record<string, string>) ?? {},
    registeredAt: item.registeredAt as string,
    ...(item.kubeSystemUid ? { kubeSystemUid: item.kubeSystemUid as string } : {}),
  };
}
