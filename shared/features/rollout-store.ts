/**
 * Rollouts in the fleetscope table: pk = FEATURES, sk = rollout#<id>, one item each (the whole state,
 * a few KB even for a large fleet), written conditionally on its version: a rollout is advanced by
 * whichever reconciler owns it, and survives any restart because nothing about it is kept elsewhere.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { IF_ABSENT, ifVersion, keyOf, Table, withoutKeys } from '../platform/dynamo.js';
import type { Rollout } from './rollout.js';
import { FEATURES_PK } from './store.js';

const PREFIX = 'rollout#';
const LOG_LIMIT = 30;

export class RolloutStore {
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

  create(r: Rollout): Promise<boolean> {
    return this.table.put({ ...keyOf(FEATURES_PK, PREFIX + r.id), ...r }, IF_ABSENT);
  }

  /** Stores `next` (version + 1, a log line) if the stored version is still `read`'s. */
  save(read: Rollout, change: Partial<Rollout>, message: string, now: number): Promise<Rollout | undefined> {
    const next: Rollout = {
      ...read,
      ...change,
      version: read.version + 1,
      updatedAt: now,
      log: [...read.log, { at: now, message }].slice(-LOG_LIMIT),
    };
    return this.table
      .put({ ...keyOf(FEATURES_PK, PREFIX + read.id), ...next }, ifVersion(read.version))
      .then((ok) => (ok ? next : undefined));
  }
}
