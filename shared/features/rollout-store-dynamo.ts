/**
 * The rollout store's DynamoDB adapter (the port: ./rollout-store.ts). Rollouts in the fleetscope table: pk = FEATURES, sk = rollout#<id>, one item each (the whole state,
 * a few KB even for a large fleet), written conditionally on its version: a rollout is advanced by
 * whichever reconciler owns it, and survives any restart because nothing about it is kept elsewhere.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { IF_ABSENT, ifVersion, keyOf, Table, withoutKeys } from '../platform/dynamo.js';
import { isActive, type Rollout } from './rollout.js';
import { type RolloutStore, rolloutFeatureKey, savedRollout } from './rollout-store.js';
import { FEATURES_PK } from './store-dynamo.js';

const PREFIX = 'rollout#';
/** One per feature: the rollout that may act on it (a pointer, versioned so that taking it is one conditional write). */
const LOCK_PREFIX = 'rollout-lock#';
const lockKey = (r: Pick<Rollout, 'namespace' | 'feature'>) =>
  keyOf(FEATURES_PK, LOCK_PREFIX + rolloutFeatureKey(r));

export class DynamoRolloutStore implements RolloutStore {
  private readonly table: Table;

  constructor(db: DynamoDBDocumentClient, tableName: string) {
    this.table = new Table(db, tableName);
  }

  async get(id: string): Promise<Rollout | undefined> {
    const item = await this.table.get(keyOf(FEATURES_PK, PREFIX + id), { consistent: true });
    return item ? withoutKeys<Rollout>(item) : undefined;
  }

  async list(): Promise<Rollout[]> {
    return (await this.table.query(FEATURES_PK, { beginsWith: PREFIX })).map((i) => withoutKeys<Rollout>(i));
  }

  /**
   * Makes `r` the rollout of its feature, unless another one that is running holds it: returns that one's
   * id. Every taking bumps the pointer's version, so two that read the same pointer cannot both take it,
   * and a resume racing a start is one of the two. A rollout acts only while it holds its feature.
   */
  async take(r: Rollout): Promise<string | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const lock = await this.lock(r);
      if (lock && lock.id !== r.id && isActive((await this.get(lock.id)) ?? { status: 'completed' }))
        return lock.id;
      const next = { ...lockKey(r), id: r.id, version: (lock?.version ?? 0) + 1 };
      if (await this.table.put(next, lock ? ifVersion(lock.version) : IF_ABSENT)) return undefined;
    }
    throw new Error(`the rollout of ${r.namespace}/${r.feature} kept changing hands; try again`);
  }

  /** Whether `r` is the rollout of its feature. */
  async holds(r: Rollout): Promise<boolean> {
    return (await this.lock(r))?.id === r.id;
  }

  private async lock(r: Rollout): Promise<{ id: string; version: number } | undefined> {
    const item = await this.table.get(lockKey(r), { consistent: true });
    return item ? { id: String(item.id), version: Number(item.version) } : undefined;
  }

  /** Removes a rollout that never got to hold its feature (its start was refused); conditional on its version. */
  discard(r: Rollout): Promise<boolean> {
    return this.table.delete(keyOf(FEATURES_PK, PREFIX + r.id), ifVersion(r.version));
  }

  create(r: Rollout): Promise<boolean> {
    return this.table.put({ ...keyOf(FEATURES_PK, PREFIX + r.id), ...r }, IF_ABSENT);
  }

  /** Stores `next` (version + 1, a log line) if the stored version is still `read`'s. */
  save(read: Rollout, change: Partial<Rollout>, message: string, now: number): Promise<Rollout | undefined> {
    const next = savedRollout(read, change, message, now);
    return this.table
      .put({ ...keyOf(FEATURES_PK, PREFIX + read.id), ...next }, ifVersion(read.version))
      .then((ok) => (ok ? next : undefined));
  }
}
