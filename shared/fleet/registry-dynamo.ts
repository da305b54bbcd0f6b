import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clusterPk, gsi1Of, IF_ABSENT, keyOf, PK, Table, withoutKeys } from '../platform/dynamo.js';
import type { ClusterStatus, RegisteredCluster } from './cluster.js';
import { ClusterExistsError, ClusterNotFoundError, type Registry } from './registry.js';

const META = 'META';
const STATUS = 'STATUS';
const CLUSTERS = 'CLUSTERS';
/** One guard per kube-system UID: a physical cluster is registered under one name only. */
const uidPk = (uid: string) => `CLUSTERUID#${uid}`;

/**
 * The cluster registry in DynamoDB: the only fleet module that speaks it. Every write is a single-item
 * conditional write; a refused condition is the port's outcome (registry.ts).
 */
export class DynamoRegistry implements Registry {
  private readonly items: Table;

  constructor(db: DynamoDBDocumentClient, table: string) {
    this.items = new Table(db, table);
  }

  /** Adds a cluster; refuses (and writes nothing) when the name is taken. */
  async add(cluster: RegisteredCluster): Promise<void> {
    const item = { ...keyOf(clusterPk(cluster.name), META), ...gsi1Of(CLUSTERS, cluster.name), ...cluster };
    if (!(await this.items.put(item, IF_ABSENT)))
      throw new ClusterExistsError(`cluster "${cluster.name}" is already registered`);
  }

  /** The name a kube-system UID is registered under, per its guard (which may be stale: check it). */
  async uidHolder(uid: string): Promise<string | undefined> {
    return (await this.items.get(keyOf(uidPk(uid), META), { consistent: true }))?.cluster as
      | string
      | undefined;
  }

  /**
   * Takes the UID's guard for `name`. `staleHolder` is the holder seen before, whose registration is
   * gone (a crash between the guard and the registration, or a deregistration that stopped halfway):
   * the guard is taken over only if it still names that holder. False when someone else holds it.
   */
  claimUid(uid: string, name: string, staleHolder?: string): Promise<boolean> {
    return this.items.put(
      { ...keyOf(uidPk(uid), META), cluster: name },
      staleHolder
        ? {
            ConditionExpression: '#c = :stale OR #c = :me',
            ExpressionAttributeNames: { '#c': 'cluster' },
            ExpressionAttributeValues: { ':stale': staleHolder, ':me': name },
          }
        : {
            ConditionExpression: 'attribute_not_exists(#pk) OR #c = :me',
            ExpressionAttributeNames: { '#pk': PK, '#c': 'cluster' },
            ExpressionAttributeValues: { ':me': name },
          },
    );
  }

  /** Releases the UID's guard if `name` still holds it. */
  async releaseUid(uid: string, name: string): Promise<void> {
    await this.items.delete(keyOf(uidPk(uid), META), {
      ConditionExpression: '#c = :me',
      ExpressionAttributeNames: { '#c': 'cluster' },
      ExpressionAttributeValues: { ':me': name },
    });
  }

  /** Points a registration at another kubeconfig (same cluster, e.g. the simulator restarted elsewhere). */
  async updateKubeconfig(name: string, kubeconfig: RegisteredCluster['kubeconfig']): Promise<void> {
    await this.items.db.send(
      new UpdateCommand({
        TableName: this.items.name,
        Key: keyOf(clusterPk(name), META),
        UpdateExpression: 'SET #k = :k',
        ConditionExpression: 'attribute_exists(#pk)',
        ExpressionAttributeNames: { '#k': 'kubeconfig', '#pk': PK },
        ExpressionAttributeValues: { ':k': kubeconfig },
      }),
    );
  }

  async get(name: string): Promise<RegisteredCluster | undefined> {
    const item = await this.items.get(keyOf(clusterPk(name), META), { consistent: true });
    return item ? toCluster(item) : undefined;
  }

  /** Every registered cluster, in name order, following the query's pages. */
  async list(): Promise<RegisteredCluster[]> {
    return (await this.items.queryGsi1(CLUSTERS)).map(toCluster);
  }

  /** The registered clusters one query page (up to 1 MB, ~3,000 clusters) at a time, in name order. */
  async *pages(): AsyncGenerator<RegisteredCluster[]> {
    for await (const page of this.items.queryGsi1Pages(CLUSTERS)) yield page.map(toCluster);
  }

  /**
   * Hands a cluster to another control plane: a conditional write that succeeds only while the owner is
   * still `from` (undefined: unowned), so two control planes racing for a cluster cannot both win.
   */
  async transferOwner(name: string, from: string | undefined, to: string): Promise<boolean> {
    try {
      await this.items.db.send(
        new UpdateCommand({
          TableName: this.items.name,
          Key: keyOf(clusterPk(name), META),
          UpdateExpression: 'SET #o = :to',
          ConditionExpression:
            from === undefined
              ? 'attribute_exists(#pk) AND attribute_not_exists(#o)'
              : 'attribute_exists(#pk) AND #o = :from',
          ExpressionAttributeNames: { '#o': 'owner', '#pk': PK },
          ExpressionAttributeValues: { ':to': to, ...(from === undefined ? {} : { ':from': from }) },
        }),
      );
      return true;
    } catch (err) {
      if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return false;
      throw err;
    }
  }

  /**
   * The kube-system UID a registration is judged by, moved from `from` to `to` (the operator said a
   * rebuilt cluster is still this one: claims accept-uid): the new UID's guard first, then the
   * registration (only while it still records `from`), then the old guard. False when another
   * registration holds the new UID or this one changed meanwhile.
   */
  async replaceUid(name: string, from: string, to: string): Promise<boolean> {
    if (from === to) return true;
    if (!(await this.claimUid(to, name))) return false;
    const moved = await this.updateMeta(name, { kubeSystemUid: to }, [], { kubeSystemUid: from });
    if (!moved) {
      await this.releaseUid(to, name);
      return false;
    }
    await this.releaseUid(from, name);
    return true;
  }

  /**
   * Marks the registration as being deregistered (idempotent): from then on no schedule or rollout acts
   * on it, and a deregistration killed halfway is finished by running it again. False if not registered.
   */
  markDeregistering(name: string, at: string): Promise<boolean> {
    return this.updateMeta(name, { deregistering: at }, []);
  }

  /**
   * Records what this control plane learnt from the cluster's owner Lease: another control plane holds
   * it (`holder`, seen at `at`), or, with `holder` undefined, that this one holds it again.
   */
  recordOwnedElsewhere(name: string, holder: string | undefined, at: string): Promise<boolean> {
    return holder
      ? this.updateMeta(name, { ownedElsewhere: { holder, seenAt: at } }, [])
      : this.updateMeta(name, {}, ['ownedElsewhere']);
  }

  /**
   * One conditional update of a registration: `set` and `remove` its attributes, only while it exists
   * and its attributes equal `expect`.
   */
  private async updateMeta(
    name: string,
    set: Record<string, unknown>,
    remove: string[],
    expect: Record<string, unknown> = {},
  ): Promise<boolean> {
    const names: Record<string, string> = { '#pk': PK };
    const values: Record<string, unknown> = {};
    const sets = Object.entries(set).map(([k, v], i) => {
      names[`#f${i}`] = k;
      values[`:f${i}`] = v;
      return `#f${i} = :f${i}`;
    });
    const removes = remove.map((k, i) => {
      names[`#r${i}`] = k;
      return `#r${i}`;
    });
    const conditions = ['attribute_exists(#pk)'];
    Object.entries(expect).forEach(([k, v], i) => {
      names[`#e${i}`] = k;
      values[`:e${i}`] = v;
      conditions.push(`#e${i} = :e${i}`);
    });
    const update = [
      sets.length ? `SET ${sets.join(', ')}` : '',
      removes.length ? `REMOVE ${removes.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    try {
      await this.items.db.send(
        new UpdateCommand({
          TableName: this.items.name,
          Key: keyOf(clusterPk(name), META),
          UpdateExpression: update,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        }),
      );
      return true;
    } catch (err) {
      if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return false;
      throw err;
    }
  }

  /** Removes a cluster's registration (and its UID guard); refuses when it is not registered. */
  async remove(name: string): Promise<void> {
    const existing = await this.get(name);
    const removed = await this.items.delete(keyOf(clusterPk(name), META), {
      ConditionExpression: 'attribute_exists(#pk)',
      ExpressionAttributeNames: { '#pk': PK },
    });
    if (!removed) throw new ClusterNotFoundError(`cluster "${name}" is not registered`);
    await this.items.delete(keyOf(clusterPk(name), STATUS));
    if (existing?.kubeSystemUid) await this.releaseUid(existing.kubeSystemUid, name);
  }

  /**
   * Records an inventory only if it is newer than the stored one (a late, redelivered result never
   * overwrites a fresher one).
   */
  putStatus(status: ClusterStatus): Promise<boolean> {
    return this.items.put(
      { ...keyOf(clusterPk(status.cluster), STATUS), ...status },
      {
        ConditionExpression: 'attribute_not_exists(#pk) OR #at < :at',
        ExpressionAttributeNames: { '#pk': PK, '#at': 'observedAt' },
        ExpressionAttributeValues: { ':at': status.observedAt },
      },
    );
  }

  async getStatus(name: string): Promise<ClusterStatus | undefined> {
    const item = await this.items.get(keyOf(clusterPk(name), STATUS));
    return item ? withoutKeys<ClusterStatus>(item) : undefined;
  }

  /** The last inventory of many clusters: BatchGetItem, 100 keys a request, not one read each. */
  async statuses(names: string[]): Promise<Map<string, ClusterStatus>> {
    const items = await this.items.batchGet(names.map((n) => keyOf(clusterPk(n), STATUS)));
    return new Map(items.map((i) => withoutKeys<ClusterStatus>(i)).map((s) => [s.cluster, s]));
  }
}

function toCluster(item: Record<string, unknown>): RegisteredCluster {
  return {
    name: item.name as string,
    kubeconfig: item.kubeconfig as RegisteredCluster['kubeconfig'],
    labels: (item.labels as Record<string, string>) ?? {},
    registeredAt: item.registeredAt as string,
    ...(item.kubeSystemUid ? { kubeSystemUid: item.kubeSystemUid as string } : {}),
    ...(item.owner ? { owner: item.owner as string } : {}),
    ...(item.deregistering ? { deregistering: item.deregistering as string } : {}),
    ...(item.ownedElsewhere
      ? { ownedElsewhere: item.ownedElsewhere as NonNullable<RegisteredCluster['ownedElsewhere']> }
      : {}),
  };
}
