/**
 * The feature store's DynamoDB adapter (the port and its outcomes: ./store.ts). Features in the
 * fleetscope table (keys from shared/platform/table.ts):
 *
 *   pk = CLUSTER#<c>  sk = feature#<ns>/<name>#record         the Feature record (state, desired, tasks,
 *                                                            history, version); gsi1 FEATURES / <c>#<ns>/<name>
 *   pk = CLUSTER#<c>  sk = feature#<ns>/<name>#use#<component> one component's last use (value, time)
 *   pk = CLUSTER#<c>  sk = feature#<ns>/<name>#mirror          the record version last written into the cluster
 *   pk = FEATURES     sk = decl#<ns>/<name>                    a third-party feature's declaration
 *   pk = FEATURES     sk = rollout#<id>                        a fleet rollout (./rollout-store.ts)
 *
 * Uses are items of their own, so that a worker's report never races the reconciler's conditional write
 * of the record; one query (sk begins with feature#<ns>/<name>#) reads a feature's record and uses.
 */
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  clusterPk,
  gsi1Of,
  IF_ABSENT,
  type Item,
  ifVersion,
  isConditionFailure,
  keyOf,
  SK,
  Table,
  withoutKeys,
} from '../platform/dynamo.js';
import type { StoredDeclaration } from './declaration.js';
import { type FeatureRecord, type FeatureRef, refKey, type Use } from './model.js';
import type { ClaimWrite, FeatureStore, FeatureView, Mirror } from './store.js';

export const FEATURES_PK = 'FEATURES';
export const FEATURES_GSI = 'FEATURES';
export const FEATURE_PREFIX = 'feature#';
const DECL_PREFIX = 'decl#';
const featurePrefix = (r: FeatureRef) => `${FEATURE_PREFIX}${refKey(r)}#`;
const recordSk = (r: FeatureRef) => `${featurePrefix(r)}record`;
const useSk = (r: FeatureRef, component: string) => `${featurePrefix(r)}use#${component}`;
const mirrorSk = (r: FeatureRef) => `${featurePrefix(r)}mirror`;

/** The attribute names of the first task's claim and writes, in update expressions. */
const NAMES = {
  '#t': 'tasks',
  '#c': 'claim',
  '#u': 'until',
  '#k': 'token',
  '#w': 'writes',
  '#v': 'version',
  '#ua': 'updatedAt',
};

export class DynamoFeatureStore implements FeatureStore {
  readonly table: Table;
  /** DynamoDB writes made through this store (the crash tests count them). */
  readonly stats = { reads: 0, writes: 0, conflicts: 0 };

  constructor(
    readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {
    this.table = new Table(db, tableName);
  }

  async get(cluster: string, ref: FeatureRef): Promise<FeatureRecord | undefined> {
    this.stats.reads++;
    const item = await this.table.get(keyOf(clusterPk(cluster), recordSk(ref)), { consistent: true });
    return item ? withoutKeys<FeatureRecord>(item) : undefined;
  }

  /** A feature's record, uses and mirror marker, in one query. */
  async view(cluster: string, ref: FeatureRef): Promise<FeatureView> {
    this.stats.reads++;
    const items = await this.table.query(clusterPk(cluster), { beginsWith: featurePrefix(ref) });
    return viewOf(items);
  }

  /** Every feature of a cluster, by "<ns>/<name>". */
  async clusterViews(cluster: string): Promise<Map<string, FeatureView>> {
    this.stats.reads++;
    const items = await this.table.query(clusterPk(cluster), { beginsWith: FEATURE_PREFIX });
    const byFeature = new Map<string, Item[]>();
    for (const item of items) {
      const key = String(item[SK]).slice(FEATURE_PREFIX.length).split('#')[0]!;
      byFeature.set(key, [...(byFeature.get(key) ?? []), item]);
    }
    return new Map([...byFeature].map(([k, v]) => [k, viewOf(v)]));
  }

  /** Every Feature record of the fleet (gsi1: eventually consistent; re-read before acting). */
  async listAll(): Promise<FeatureRecord[]> {
    return (await this.table.queryGsi1(FEATURES_GSI)).map((i) => withoutKeys<FeatureRecord>(i));
  }

  /** Stores a new record; false when one exists (another reconciler announced it first). */
  async create(record: FeatureRecord): Promise<boolean> {
    return this.write(this.itemOf(record), IF_ABSENT);
  }

  /** Stores `next` if the stored version is still `expected`; false when someone else wrote first. */
  async save(next: FeatureRecord, expected: number): Promise<boolean> {
    return this.write(this.itemOf(next), ifVersion(expected));
  }

  private itemOf(r: FeatureRecord): Item {
    return {
      ...keyOf(clusterPk(r.cluster), recordSk(r)),
      ...gsi1Of(FEATURES_GSI, `${r.cluster}#${refKey(r)}`),
      ...r,
    };
  }

  private async write(item: Item, condition: Parameters<Table['put']>[1]): Promise<boolean> {
    const ok = await this.table.put(item, condition);
    if (ok) this.stats.writes++;
    else this.stats.conflicts++;
    return ok;
  }

  /**
   * Renews the claim `token` holds on the first task until `until`, if it still holds it at `now` (not
   * lapsed, not taken over): the fence every cluster write of the task passes, and its heartbeat. A
   * changed record gets a new version, so a record read before it is not written back over it.
   */
  async renewClaim(
    cluster: string,
    ref: FeatureRef,
    token: string,
    now: number,
    until: number,
  ): Promise<ClaimWrite> {
    return this.updateFirstTask(
      cluster,
      ref,
      'SET #t[0].#c.#u = :until',
      '#t[0].#c.#k = :token AND #t[0].#c.#u > :now',
      { ':token': token, ':now': now, ':until': until },
    );
  }

  /**
   * Adds `n` writes to the first task while the claim `token` is on it (lapsed or not: the writes were
   * made), as each is made, so that an attempt killed midway leaves its writes counted.
   */
  async countWrites(
    cluster: string,
    ref: FeatureRef,
    token: string,
    n: number,
    now: number,
  ): Promise<ClaimWrite> {
    return this.updateFirstTask(cluster, ref, 'SET #t[0].#w = #t[0].#w + :n', '#t[0].#c.#k = :token', {
      ':token': token,
      ':n': n,
      ':now': now,
    });
  }

  private async updateFirstTask(
    cluster: string,
    ref: FeatureRef,
    set: string,
    condition: string,
    values: Record<string, unknown>,
  ): Promise<ClaimWrite> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf(clusterPk(cluster), recordSk(ref)),
          UpdateExpression: `${set}, #v = #v + :one, #ua = :now`,
          ConditionExpression: condition,
          // Only the names the expressions use (DynamoDB refuses unused ones).
          ExpressionAttributeNames: Object.fromEntries(
            Object.entries(NAMES).filter(
              ([k]) => `${set} ${condition}`.includes(k) || k === '#v' || k === '#ua',
            ),
          ),
          ExpressionAttributeValues: { ...values, ':one': 1 },
        }),
      );
      this.stats.writes++;
      return 'held';
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      this.stats.conflicts++;
      return 'fenced';
    }
  }

  /** Records a use unless a newer one of the same component is stored (a later epoch, or time). */
  async reportUse(cluster: string, ref: FeatureRef, use: Use): Promise<boolean> {
    const epoch = use.epoch === undefined ? '' : ' OR attribute_not_exists(#e) OR #e < :e';
    return this.write(
      { ...keyOf(clusterPk(cluster), useSk(ref, use.component)), ...use },
      {
        ConditionExpression: `attribute_not_exists(#at) OR #at < :at${epoch}`,
        ExpressionAttributeNames: { '#at': 'at', ...(epoch ? { '#e': 'epoch' } : {}) },
        ExpressionAttributeValues: { ':at': use.at, ...(epoch ? { ':e': use.epoch } : {}) },
      },
    );
  }

  /**
   * Issues the next uses epoch after `previous`, while the claim `token` holds the first task (a wait for
   * uses), and stores it with the clearing's time as that task's progress in the same write: an attempt
   * that dies after it leaves the wait to resume, not to clear (and write) again. The new epoch, or
   * 'fenced' when the claim is no longer this one.
   */
  async issueEpoch(
    cluster: string,
    ref: FeatureRef,
    token: string,
    previous: number | undefined,
    now: number,
  ): Promise<number | 'fenced'> {
    const epoch = (previous ?? 0) + 1;
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf(clusterPk(cluster), recordSk(ref)),
          UpdateExpression: 'SET #e = :e, #t[0].#p = :progress, #v = #v + :one, #ua = :now',
          ConditionExpression: `#t[0].#c.#k = :token AND ${previous === undefined ? 'attribute_not_exists(#e)' : '#e = :prev'}`,
          ExpressionAttributeNames: {
            '#e': 'usesEpoch',
            '#t': 'tasks',
            '#p': 'progress',
            '#c': 'claim',
            '#k': 'token',
            '#v': 'version',
            '#ua': 'updatedAt',
          },
          ExpressionAttributeValues: {
            ':e': epoch,
            ':progress': { clearedAt: now, epoch },
            ':one': 1,
            ':now': now,
            ':token': token,
            ...(previous === undefined ? {} : { ':prev': previous }),
          },
        }),
      );
      this.stats.writes++;
      return epoch;
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      return 'fenced';
    }
  }

  /**
   * Forgets the uses that do not echo `epoch`; a report echoing it (made after the epoch was issued)
   * survives, whenever it came. Returns how many went.
   */
  async clearUses(cluster: string, ref: FeatureRef, uses: readonly Use[], epoch: number): Promise<number> {
    let cleared = 0;
    for (const u of uses) {
      if (u.epoch === epoch) continue;
      const gone = await this.table.delete(keyOf(clusterPk(cluster), useSk(ref, u.component)), {
        ConditionExpression: 'attribute_not_exists(#e) OR #e <> :e',
        ExpressionAttributeNames: { '#e': 'epoch' },
        ExpressionAttributeValues: { ':e': epoch },
      });
      if (gone) cleared++;
    }
    this.stats.writes += cleared;
    return cleared;
  }

  async putMirror(cluster: string, ref: FeatureRef, mirror: Mirror): Promise<void> {
    await this.table.put({ ...keyOf(clusterPk(cluster), mirrorSk(ref)), ...mirror });
  }

  /** Registers (or replaces) a third-party feature's declaration. */
  async putDeclaration(d: StoredDeclaration): Promise<void> {
    await this.table.put({ ...keyOf(FEATURES_PK, `${DECL_PREFIX}${refKey(d)}`), ...d });
  }

  /**
   * Registers a file's declarations all or none, each on the one read before (`previous`, absent when it
   * was not registered): false when another registration or an unregister came in between, and what
   * this one had written is put back as it was. (dynalite, the local table, has no transactions;
   * sizes are checked before, so only a condition can refuse a write.)
   */
  async putDeclarations(
    ds: readonly StoredDeclaration[],
    previous: ReadonlyMap<string, StoredDeclaration>,
  ): Promise<boolean> {
    const key = (d: FeatureRef) => keyOf(FEATURES_PK, `${DECL_PREFIX}${refKey(d)}`);
    const onRead = (at: number | undefined) =>
      at === undefined
        ? { ConditionExpression: 'attribute_not_exists(registeredAt)' }
        : { ConditionExpression: 'registeredAt = :at', ExpressionAttributeValues: { ':at': at } };
    const done: StoredDeclaration[] = [];
    for (const d of ds) {
      if (await this.table.put({ ...key(d), ...d }, onRead(previous.get(refKey(d))?.registeredAt))) {
        done.push(d);
        continue;
      }
      for (const w of done.reverse()) {
        const before = previous.get(refKey(w));
        if (before) await this.table.put({ ...key(w), ...before }, onRead(w.registeredAt));
        else await this.table.delete(key(w), onRead(w.registeredAt));
      }
      return false;
    }
    this.stats.writes += ds.length;
    return true;
  }

  /** Removes a declaration as it was read (its registeredAt); false when it changed or is gone. */
  async deleteDeclaration(ref: FeatureRef, registeredAt: number): Promise<boolean> {
    return this.table.delete(keyOf(FEATURES_PK, `${DECL_PREFIX}${refKey(ref)}`), {
      ConditionExpression: 'registeredAt = :at',
      ExpressionAttributeValues: { ':at': registeredAt },
    });
  }

  /**
   * Forgets one feature of a cluster (its record, uses and mirror marker), the record only while it is
   * still the version read and Off: false, and nothing forgotten, when it changed meanwhile.
   */
  async forgetFeature(cluster: string, record: FeatureRecord): Promise<boolean> {
    const gone = await this.table.delete(keyOf(clusterPk(cluster), recordSk(record)), {
      ConditionExpression: '#v = :v AND #s = :off',
      ExpressionAttributeNames: { '#v': 'version', '#s': 'state' },
      ExpressionAttributeValues: { ':v': record.version, ':off': 'Off' },
    });
    if (!gone) return false;
    const rest = await this.table.query(clusterPk(cluster), { beginsWith: featurePrefix(record) });
    for (const item of rest) await this.table.delete(keyOf(clusterPk(cluster), String(item[SK])));
    return true;
  }

  async listDeclarations(): Promise<StoredDeclaration[]> {
    return (await this.table.query(FEATURES_PK, { beginsWith: DECL_PREFIX })).map((i) =>
      withoutKeys<StoredDeclaration>(i),
    );
  }

  /** Forgets every feature item of a cluster (deregistered). */
  async forgetCluster(cluster: string): Promise<number> {
    const items = await this.table.query(clusterPk(cluster), { beginsWith: FEATURE_PREFIX });
    for (const item of items) await this.table.delete(keyOf(clusterPk(cluster), String(item[SK])));
    return items.length;
  }
}

function viewOf(items: Item[]): FeatureView {
  const view: FeatureView = { uses: [] };
  for (const item of items) {
    const sk = String(item[SK]);
    // Uses first: a component may be named "record".
    if (sk.includes('#use#')) view.uses.push(withoutKeys<Use>(item));
    else if (sk.endsWith('#record')) view.record = withoutKeys<FeatureRecord>(item);
    else if (sk.endsWith('#mirror')) view.mirror = withoutKeys<Mirror>(item);
  }
  view.uses.sort((a, b) => a.component.localeCompare(b.component));
  return view;
}
