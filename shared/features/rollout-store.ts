/**
 * Where fleet rollouts are kept, and the port they are kept through ({@link RolloutStore}): one record
 * per rollout (the whole state), written only over the version read, and one pointer per feature naming
 * the rollout that may act on it. In domain terms only: a write that lost to another writer says so
 * (false, or undefined for a save), never how a store found out. Adapters: ./rollout-store-dynamo.ts
 * (the fleetscope table), ./rollout-store-memory.ts (in process, for unit tests).
 */
import type { Rollout } from './rollout.js';

/** A rollout keeps this many log lines (the newest). */
export const ROLLOUT_LOG_LIMIT = 30;

export interface RolloutStore {
  get(id: string): Promise<Rollout | undefined>;
  list(): Promise<Rollout[]>;
  /**
   * Makes `r` the rollout of its feature, unless another one that is running holds it: returns that one's
   * id. Two that read the same pointer cannot both take it, and a resume racing a start is one of the
   * two. A rollout acts only while it holds its feature.
   */
  take(r: Rollout): Promise<string | undefined>;
  /** Whether `r` is the rollout of its feature. */
  holds(r: Rollout): Promise<boolean>;
  /** Removes a rollout that never got to hold its feature (its start was refused); false: it changed (lost the race). */
  discard(r: Rollout): Promise<boolean>;
  /** Stores a new rollout; false when one of that id exists. */
  create(r: Rollout): Promise<boolean>;
  /** Stores `read` with `change` (version + 1, a log line) if the stored version is still `read`'s; undefined: lost the race. */
  save(read: Rollout, change: Partial<Rollout>, message: string, now: number): Promise<Rollout | undefined>;
}

/** The rollout `save` stores: `read` with `change`, the next version and a log line. */
export function savedRollout(read: Rollout, change: Partial<Rollout>, message: string, now: number): Rollout {
  return {
    ...read,
    ...change,
    version: read.version + 1,
    updatedAt: now,
    log: [...read.log, { at: now, message }].slice(-ROLLOUT_LOG_LIMIT),
  };
}

/** The key of a rollout's feature (one pointer each). */
export const rolloutFeatureKey = (r: Pick<Rollout, 'namespace' | 'feature'>) => `${r.namespace}/${r.feature}`;
