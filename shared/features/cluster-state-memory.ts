/**
 * The cluster state in process (the port: ./cluster-state.ts), for unit tests: each cluster's items by
 * key, in key order, as the DynamoDB adapter reads its partition. `before` is called ahead of every
 * write (a task's claim fence).
 */
import type { ClusterState } from './cluster-state.js';

export class MemoryClusterState implements ClusterState {
  constructor(
    /** By cluster, then by key: when the item is kept until (on request), or undefined. */
    readonly items = new Map<string, Map<string, { keptUntil?: number }>>(),
    private readonly before: () => Promise<void> = async () => {},
  ) {}

  /** The same items, every write first passing `before`. */
  fenced(before: () => Promise<void>): MemoryClusterState {
    return new MemoryClusterState(this.items, before);
  }

  /** Stores an item (what a capability would have kept). */
  put(cluster: string, key: string): void {
    const c = this.items.get(cluster) ?? new Map();
    this.items.set(cluster, c.set(key, {}));
  }

  private under(cluster: string, prefix: string): [string, { keptUntil?: number }][] {
    return [...(this.items.get(cluster) ?? [])]
      .filter(([k]) => k.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : 1));
  }

  async left(cluster: string, prefix: string): Promise<number> {
    return this.under(cluster, prefix).filter(([, i]) => i.keptUntil === undefined).length;
  }

  async clear(cluster: string, prefix: string, keepUntil: number | undefined, wrote: () => void) {
    for (const [key, item] of this.under(cluster, prefix)) {
      if (keepUntil !== undefined && item.keptUntil !== undefined) continue;
      await this.before();
      if (keepUntil === undefined) this.items.get(cluster)?.delete(key);
      else item.keptUntil = keepUntil;
      wrote();
    }
  }
}
