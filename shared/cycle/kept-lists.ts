/**
 * The large lists of a cluster kept between cycles, so that the next cycle reads what changed (a watch
 * from the kept resourceVersion) instead of the cluster. The state lives in the process: a warm Lambda
 * keeps it from one invocation to the next; a cold one (or one that last served other clusters) has
 * nothing and lists. Nothing depends on it being there: a missing or stale entry costs a full list,
 * never a wrong answer. Bounded by the number of objects kept over all clusters; the least recently
 * used lists go first.
 */

import type { ListObject } from '../k8s/raw-reader.js';

/** How a kept list is read: its path and selectors, and each object's key and view (./resume.ts reads it). */
export interface KeptListSpec<O, V> {
  operation: string;
  path: string;
  /** Server-side selectors; the kept views are those they select. */
  query: Record<string, string | undefined>;
  pageSize: number;
  /** The object's key (`namespace/name` or `name`); undefined for an object without a name. */
  keyOf: (o: O) => string | undefined;
  /** The object's view; `shared` is the list's, for objects its views share. */
  view: (o: O, shared: Map<string, unknown>) => V | undefined;
  /**
   * A full list asks for Kubernetes protobuf, read by this into the objects `view` takes (typed loosely:
   * a kept list's object type stays as it is declared without one).
   */
  protobuf?: (bytes: Uint8Array) => ListObject<unknown>;
}

/**
 * One kept list: its views by key (`namespace/name` or `name`), the revision they are current at, and
 * how it is read (so that a follow can take it up without the cycle that listed it).
 */
export interface KeptList<V, O = never> {
  rv: string;
  spec: KeptListSpec<O, V>;
  items: Map<string, V>;
  /** Objects shared by the views of this list (pods' controller references), reused by its updates. */
  shared: Map<string, unknown>;
  /**
   * When a cycle last read it (the cycle's clock): a list no cycle reads any more (its capability turned
   * off, its VPA gone, the cycles gone to another instance) is dropped by the follow, not followed for ever.
   */
  cycledAt?: number;
}

/** What every kept key of a cluster starts with (its scope: the name, then the server and its CA). */
export const clusterPrefix = (cluster: string): string => `${cluster} `;

/** About 1 GiB of Lambda memory holds the views of ~300,000 pods beside a cycle's working set. */
export const DEFAULT_MAX_KEPT_OBJECTS = 300_000;

export class KeptLists {
  /** Insertion order is recency: a list put back goes to the end. */
  private readonly lists = new Map<string, KeptList<unknown, unknown>>();

  constructor(private readonly maxObjects = DEFAULT_MAX_KEPT_OBJECTS) {}

  /** Takes a list out while it is read, so a read that fails leaves nothing half-updated behind. */
  take<V, O = never>(key: string): KeptList<V, O> | undefined {
    const list = this.lists.get(key);
    this.lists.delete(key);
    return list as KeptList<V, O> | undefined;
  }

  /** Keeps a list read to its end; the least recently used others go while the total is over the bound. */
  put<V, O>(key: string, list: KeptList<V, O>): void {
    this.lists.delete(key);
    if (list.items.size > this.maxObjects) return;
    this.lists.set(key, list as unknown as KeptList<unknown, unknown>);
    let total = 0;
    for (const l of this.lists.values()) total += l.items.size;
    for (const [k, l] of this.lists) {
      if (total <= this.maxObjects) break;
      total -= l.items.size;
      this.lists.delete(k);
    }
  }

  /** The keys of the lists kept whose key starts with `prefix` (a cluster's scope), oldest first. */
  keys(prefix: string): string[] {
    return [...this.lists.keys()].filter((k) => k.startsWith(prefix));
  }

  /** Forgets every list whose key starts with `prefix` (a cluster whose cycle no longer runs here). */
  forget(prefix: string): void {
    for (const k of this.keys(prefix)) this.lists.delete(k);
  }

  /** Lists and objects kept (for tests and logs). */
  size(): { lists: number; objects: number } {
    let objects = 0;
    for (const l of this.lists.values()) objects += l.items.size;
    return { lists: this.lists.size, objects };
  }

  clear(): void {
    this.lists.clear();
  }
}
