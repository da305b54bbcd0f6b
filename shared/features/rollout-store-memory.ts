/**
 * The rollout store in process: what the unit tests run on, no DynamoDB-protocol server. Its conditions
 * are the DynamoDB adapter's (./rollout-store-dynamo.ts): a rollout is created only where none of its id
 * is, saved and discarded only over the version read, and a feature's pointer taken only over the one
 * read; records come back in id order, copied in and out as a serialized store would.
 */
import { isActive, type Rollout } from './rollout.js';
import { type RolloutStore, rolloutFeatureKey, savedRollout } from './rollout-store.js';

const stored = <T>(v: T): T => JSON.parse(JSON.stringify(v));

export class MemoryRolloutStore implements RolloutStore {
  private readonly rollouts = new Map<string, Rollout>();
  /** One pointer per feature: the rollout that may act on it, and the pointer's version. */
  private readonly locks = new Map<string, { id: string; version: number }>();

  async get(id: string): Promise<Rollout | undefined> {
    const r = this.rollouts.get(id);
    return r ? stored(r) : undefined;
  }

  async list(): Promise<Rollout[]> {
    return [...this.rollouts.keys()].sort().map((id) => stored(this.rollouts.get(id)!));
  }

  async take(r: Rollout): Promise<string | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const lock = this.locks.get(rolloutFeatureKey(r));
      const read = lock ? { ...lock } : undefined;
      if (read && read.id !== r.id && isActive((await this.get(read.id)) ?? { status: 'completed' }))
        return read.id;
      // The pointer as read, or none: another taking in between refuses this one (a conditional put).
      const now = this.locks.get(rolloutFeatureKey(r));
      if (now?.version === read?.version) {
        this.locks.set(rolloutFeatureKey(r), { id: r.id, version: (read?.version ?? 0) + 1 });
        return undefined;
      }
    }
    throw new Error(`the rollout of ${r.namespace}/${r.feature} kept changing hands; try again`);
  }

  async holds(r: Rollout): Promise<boolean> {
    return this.locks.get(rolloutFeatureKey(r))?.id === r.id;
  }

  async discard(r: Rollout): Promise<boolean> {
    if (this.rollouts.get(r.id)?.version !== r.version) return false;
    this.rollouts.delete(r.id);
    return true;
  }

  async create(r: Rollout): Promise<boolean> {
    if (this.rollouts.has(r.id)) return false;
    this.rollouts.set(r.id, stored(r));
    return true;
  }

  async save(read: Rollout, change: Partial<Rollout>, message: string, now: number) {
    if (this.rollouts.get(read.id)?.version !== read.version) return undefined;
    const next = savedRollout(read, change, message, now);
    this.rollouts.set(read.id, stored(next));
    return next;
  }

  /** Forgets a feature's pointer (a rollout stored before pointers existed; tests only). */
  unlock(r: Pick<Rollout, 'namespace' | 'feature'>): void {
    this.locks.delete(rolloutFeatureKey(r));
  }
}
