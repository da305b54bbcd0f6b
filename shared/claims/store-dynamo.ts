/**
 * The claims' store in the fleetscope table (keys from shared/platform/table.ts): the only claims module
 * that speaks DynamoDB; a refused condition is the port's outcome (VersionConflictError, a guard's
 * holder, false). Every write is a single-item
 * conditional write: dynalite has no transactions, and none are needed (see membership.ts).
 *
 *   pk = CLUSTER#<name>      sk = claims#identity        id.k8s.io, ClusterSet, pending change, version
 *                                                          (gsi1pk = CLAIMS, gsi1sk = <name>)
 *   pk = CLUSTER#<name>      sk = claims#custom#<claim>  one custom claim (values up to 128 KiB each)
 *   pk = CLUSTER#<name>      sk = claims#sync            the last in-cluster sync (state, error, time)
 *   pk = CLUSTER#<name>      sk = claims#settings        per-cluster overrides of the settings
 *   pk = CLUSTERSET#<set>    sk = ID#<clusterId>         the uniqueness guard of (ClusterSet, ID)
 *                                                          (gsi1pk = CLUSTERSET_GUARDS, gsi1sk = <set>#<id>)
 *   pk = FLEET               sk = claims#settings        fleet-wide settings
 */
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  clusterPk,
  gsi1Of,
  IF_ABSENT,
  ifVersion,
  keyOf,
  PK,
  Table,
  withoutKeys,
} from '../platform/dynamo.js';
import { type ClaimsSettings, DEFAULT_SETTINGS } from './identity.js';
import {
  type ClaimStore,
  type Guard,
  type StoredIdentity,
  type SyncStatus,
  VersionConflictError,
} from './store.js';

export const IDENTITY_SK = 'claims#identity';
export const CUSTOM_SK_PREFIX = 'claims#custom#';
export const SYNC_SK = 'claims#sync';
export const SETTINGS_SK = 'claims#settings';
export const IDENTITIES_GSI = 'CLAIMS';
export const GUARDS_GSI = 'CLUSTERSET_GUARDS';
export const FLEET_PK = 'FLEET';
export const clusterSetPk = (set: string) => `CLUSTERSET#${set}`;
export const guardSk = (clusterId: string) => `ID#${clusterId}`;

export class DynamoClaimStore implements ClaimStore {
  private readonly items: Table;

  constructor(
    readonly db: DynamoDBDocumentClient,
    readonly table: string,
  ) {
    this.items = new Table(db, table);
  }

  // ---- identity -------------------------------------------------------------------------------

  async getIdentity(cluster: string): Promise<StoredIdentity | undefined> {
    const item = await this.items.get(keyOf(clusterPk(cluster), IDENTITY_SK), { consistent: true });
    return item ? withoutKeys<StoredIdentity>(item) : undefined;
  }

  /** Every stored identity (gsi1; eventually consistent: re-read with getIdentity before acting). */
  async listIdentities(): Promise<StoredIdentity[]> {
    return (await this.items.queryGsi1(IDENTITIES_GSI)).map((i) => withoutKeys<StoredIdentity>(i));
  }

  /**
   * Writes an identity. `expectedVersion` undefined: create, refused if one exists. Otherwise the stored
   * version must equal it (optimistic lock); the caller passes the next version in `identity`.
   */
  async putIdentity(identity: StoredIdentity, expectedVersion?: number): Promise<void> {
    const item = {
      ...keyOf(clusterPk(identity.cluster), IDENTITY_SK),
      ...gsi1Of(IDENTITIES_GSI, identity.cluster),
      ...identity,
    };
    if (!(await this.items.put(item, expectedVersion === undefined ? IF_ABSENT : ifVersion(expectedVersion))))
      throw new VersionConflictError(
        expectedVersion === undefined
          ? `cluster "${identity.cluster}" already has an identity`
          : `the identity of cluster "${identity.cluster}" changed concurrently (expected version ${expectedVersion})`,
      );
  }

  async deleteIdentity(cluster: string, expectedVersion: number): Promise<void> {
    if (!(await this.items.delete(keyOf(clusterPk(cluster), IDENTITY_SK), ifVersion(expectedVersion))))
      throw new VersionConflictError(`the identity of cluster "${cluster}" changed concurrently`);
  }

  // ---- custom claims --------------------------------------------------------------------------

  /** The names of a cluster's custom claims, without reading their values. */
  async customNames(cluster: string): Promise<string[]> {
    const items = await this.items.query(clusterPk(cluster), { beginsWith: CUSTOM_SK_PREFIX }, ['name']);
    return items.map((item) => item.name as string);
  }

  async getCustom(cluster: string): Promise<Record<string, string>> {
    const items = await this.items.query(clusterPk(cluster), { beginsWith: CUSTOM_SK_PREFIX });
    return Object.fromEntries(items.map((item) => [item.name as string, item.value as string]));
  }

  /** Sets one custom claim; returns the value it replaced. */
  async putCustom(cluster: string, name: string, value: string, at: string): Promise<string | undefined> {
    const out = await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: { ...keyOf(clusterPk(cluster), CUSTOM_SK_PREFIX + name), cluster, name, value, updatedAt: at },
        ReturnValues: 'ALL_OLD',
      }),
    );
    return out.Attributes?.value as string | undefined;
  }

  /** Deletes one custom claim; returns the value it had (undefined: there was none). */
  async deleteCustom(cluster: string, name: string): Promise<string | undefined> {
    const out = await this.db.send(
      new DeleteCommand({
        TableName: this.table,
        Key: keyOf(clusterPk(cluster), CUSTOM_SK_PREFIX + name),
        ReturnValues: 'ALL_OLD',
      }),
    );
    return out.Attributes?.value as string | undefined;
  }

  // ---- uniqueness guards ----------------------------------------------------------------------

  async getGuard(clusterSet: string, clusterId: string): Promise<Guard | undefined> {
    const item = await this.items.get(keyOf(clusterSetPk(clusterSet), guardSk(clusterId)), {
      consistent: true,
    });
    return item ? withoutKeys<Guard>(item) : undefined;
  }

  /**
   * Takes the guard of (ClusterSet, ID) for `guard.cluster`: succeeds when nobody holds it or the same
   * cluster already does (a resumed attempt); otherwise returns the holder and writes nothing.
   */
  async acquireGuard(guard: Guard): Promise<{ ok: true } | { ok: false; holder?: Guard }> {
    const taken = await this.items.put(
      {
        ...keyOf(clusterSetPk(guard.clusterSet), guardSk(guard.clusterId)),
        ...gsi1Of(GUARDS_GSI, `${guard.clusterSet}#${guard.clusterId}`),
        ...guard,
      },
      {
        ConditionExpression: 'attribute_not_exists(#pk) OR #c = :c',
        ExpressionAttributeNames: { '#pk': PK, '#c': 'cluster' },
        ExpressionAttributeValues: { ':c': guard.cluster },
      },
    );
    if (taken) return { ok: true };
    return { ok: false, holder: await this.getGuard(guard.clusterSet, guard.clusterId) };
  }

  /**
   * Releases a guard only if it is still the one expected: held by `cluster` (and, when given, taken
   * with `token`). Returns false when it was not (someone else holds it, or it is gone).
   */
  releaseGuard(
    clusterSet: string,
    clusterId: string,
    expect: { cluster: string; token?: string },
  ): Promise<boolean> {
    return this.items.delete(keyOf(clusterSetPk(clusterSet), guardSk(clusterId)), {
      ConditionExpression: expect.token ? '#c = :c AND #t = :t' : '#c = :c',
      ExpressionAttributeNames: { '#c': 'cluster', ...(expect.token ? { '#t': 'token' } : {}) },
      ExpressionAttributeValues: { ':c': expect.cluster, ...(expect.token ? { ':t': expect.token } : {}) },
    });
  }

  async listGuards(): Promise<Guard[]> {
    return (await this.items.queryGsi1(GUARDS_GSI)).map((i) => withoutKeys<Guard>(i));
  }

  /** The guards of one ClusterSet (its members' IDs, and IDs being taken by a join in progress). */
  async guardsOf(clusterSet: string): Promise<Guard[]> {
    return (await this.items.query(clusterSetPk(clusterSet), undefined)).map((i) => withoutKeys<Guard>(i));
  }

  // ---- sync status and settings ---------------------------------------------------------------

  /** Many clusters' last syncs: BatchGetItem, 100 keys a request. */
  async syncStatuses(clusters: string[]): Promise<Map<string, SyncStatus>> {
    const items = await this.items.batchGet(clusters.map((c) => keyOf(clusterPk(c), SYNC_SK)));
    return new Map(items.map((i) => withoutKeys<SyncStatus>(i)).map((s) => [s.cluster, s]));
  }

  async getSyncStatus(cluster: string): Promise<SyncStatus | undefined> {
    const item = await this.items.get(keyOf(clusterPk(cluster), SYNC_SK));
    return item ? withoutKeys<SyncStatus>(item) : undefined;
  }

  /** Records a sync result unless a newer one is already stored. */
  async putSyncStatus(status: SyncStatus): Promise<void> {
    await this.items.put(
      { ...keyOf(clusterPk(status.cluster), SYNC_SK), ...status },
      {
        ConditionExpression: 'attribute_not_exists(#pk) OR #at <= :at',
        ExpressionAttributeNames: { '#pk': PK, '#at': 'at' },
        ExpressionAttributeValues: { ':at': status.at },
      },
    );
  }

  async deleteClusterItems(cluster: string): Promise<void> {
    const custom = await this.getCustom(cluster);
    for (const name of Object.keys(custom)) await this.deleteCustom(cluster, name);
    for (const sk of [SYNC_SK, SETTINGS_SK]) await this.items.delete(keyOf(clusterPk(cluster), sk));
  }

  /** Fleet-wide settings, or one cluster's overrides; what is stored, without defaults. */
  async getStoredSettings(cluster?: string): Promise<Partial<ClaimsSettings>> {
    const item = await this.items.get(keyOf(cluster ? clusterPk(cluster) : FLEET_PK, SETTINGS_SK));
    if (!item) return {};
    const s: Partial<ClaimsSettings> = {};
    if (typeof item.writeClusterIdName === 'boolean') s.writeClusterIdName = item.writeClusterIdName;
    if (typeof item.createCrd === 'boolean') s.createCrd = item.createCrd;
    if (item.ocm === 'auto' || item.ocm === 'off') s.ocm = item.ocm;
    return s;
  }

  /** Defaults, overridden by the fleet's settings, overridden by the cluster's. */
  async settingsFor(cluster?: string): Promise<ClaimsSettings> {
    const [fleet, own] = await Promise.all([
      this.getStoredSettings(),
      cluster ? this.getStoredSettings(cluster) : {},
    ]);
    return { ...DEFAULT_SETTINGS, ...fleet, ...own };
  }

  async putSettings(settings: Partial<ClaimsSettings>, cluster?: string): Promise<void> {
    const current = await this.getStoredSettings(cluster);
    await this.items.put({
      ...keyOf(cluster ? clusterPk(cluster) : FLEET_PK, SETTINGS_SK),
      ...current,
      ...settings,
      updatedAt: new Date().toISOString(),
    });
  }
}

/** The claims' store of a runtime or CLI context (its table client and table name). */
export const claimStoreOf = (rt: { db: DynamoDBDocumentClient; table: string }): DynamoClaimStore =>
  new DynamoClaimStore(rt.db, rt.table);
