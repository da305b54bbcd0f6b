/**
 * The object store: one revision counter per cluster (like etcd), collections kept sorted by key
 * (`name` or `namespace/name`, the order a real apiserver lists in), a bounded change log that serves
 * watches and reads at an older revision (`resourceVersionMatch=Exact`, continue tokens), and a
 * secondary index of pods by node.
 *
 * Stored objects are never mutated: every write stores a new object. Readers may therefore share
 * sub-objects (the simulated DaemonSet pods share their containers) and pages can be served lazily.
 */
import { ApiError } from './errors.js';
import type { Json } from './json.js';
import { WatchCacheWindow } from './watch-cache.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  rv: number;
  type: EventType;
  collection: string;
  key: string;
  object: Json;
  prev?: Json;
}

/**
 * metadata with a new resourceVersion. The key keeps its place when present; otherwise it goes right
 * after uid, where apimachinery's ObjectMeta puts it.
 */
export function withResourceVersion(meta: Json, rv: string): Json {
  if (meta && 'resourceVersion' in meta) return { ...meta, resourceVersion: rv };
  const out: Json = {};
  let placed = false;
  for (const [k, v] of Object.entries(meta ?? {})) {
    out[k] = v;
    if (k === 'uid') {
      out.resourceVersion = rv;
      placed = true;
    }
  }
  if (!placed) out.resourceVersion = rv;
  return out;
}

/** The first index whose key is >= `key` in a sorted array. */
export function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class Collection {
  private readonly items = new Map<string, Json>();
  private sortedKeys: string[] = [];
  /** Revision of the last write to this collection. */
  lastChangeRv = 0;
  private readonly index = new Map<string, Set<string>>();

  constructor(
    readonly id: string,
    /** Optional secondary index (pods by spec.nodeName). */
    private readonly indexOf?: (obj: Json) => string | undefined,
  ) {}

  get size(): number {
    return this.items.size;
  }

  get(key: string): Json | undefined {
    return this.items.get(key);
  }

  keys(): readonly string[] {
    return this.sortedKeys;
  }

  /** Keys whose index value (for pods: the node name) is `value`. */
  indexed(value: string): ReadonlySet<string> {
    return this.index.get(value) ?? new Set();
  }

  /** Internal: writes go through Store so that revisions and events stay consistent. */
  _set(key: string, obj: Json): void {
    const prev = this.items.get(key);
    if (prev === undefined) {
      const i = lowerBound(this.sortedKeys, key);
      this.sortedKeys.splice(i, 0, key);
    } else {
      this.unindex(key, prev);
    }
    this.items.set(key, obj);
    this.addIndex(key, obj);
  }

  _delete(key: string): void {
    const prev = this.items.get(key);
    if (prev === undefined) return;
    this.unindex(key, prev);
    this.items.delete(key);
    const i = lowerBound(this.sortedKeys, key);
    if (this.sortedKeys[i] === key) this.sortedKeys.splice(i, 1);
  }

  /** Bulk insert for start-up: one sort instead of n splices. */
  _load(entries: [string, Json][]): void {
    for (const [k, o] of entries) {
      if (!this.items.has(k)) this.sortedKeys.push(k);
      else this.unindex(k, this.items.get(k));
      this.items.set(k, o);
      this.addIndex(k, o);
    }
    this.sortedKeys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  private addIndex(key: string, obj: Json): void {
    const v = this.indexOf?.(obj);
    if (v === undefined) return;
    let s = this.index.get(v);
    if (!s) {
      s = new Set();
      this.index.set(v, s);
    }
    s.add(key);
  }

  private unindex(key: string, obj: Json): void {
    const v = this.indexOf?.(obj);
    if (v !== undefined) this.index.get(v)?.delete(key);
  }
}

/** A read-only view of a collection at one revision. */
export interface View {
  keys: readonly string[];
  get(key: string): Json | undefined;
}

export type StoreListener = (ev: StoreEvent) => void;

const MAX_LOG = 200_000;
const TRIM_BATCH = 20_000;

export class Store {
  private rv: number;
  private readonly collections = new Map<string, Collection>();
  private log: StoreEvent[] = [];
  /** Reads and watches at a revision below this one are answered 410 Gone (history compacted). */
  compactedRv: number;
  private readonly listeners = new Set<StoreListener>();
  private snapshotCache = new Map<string, { rv: number; view: View }>();
  /** Per collection, how far back a watch reaches (the apiserver's watch cache, watch-cache.ts). */
  private readonly watchWindows = new Map<string, WatchCacheWindow>();
  /** The time events are recorded at in the watch windows (the cluster's simulated clock). */
  watchClock: () => number = () => 0;

  constructor(startRv = 1) {
    this.rv = startRv;
    this.compactedRv = startRv;
  }

  /** Every collection's objects, in key order (what a recording starts from). */
  *contents(): Generator<[string, Json[]]> {
    for (const [id, c] of this.collections) yield [id, c.keys().map((k) => c.get(k) as Json)];
  }

  currentRv(): number {
    return this.rv;
  }

  collection(id: string, indexOf?: (obj: Json) => string | undefined): Collection {
    let c = this.collections.get(id);
    if (!c) {
      c = new Collection(id, indexOf);
      this.collections.set(id, c);
    }
    return c;
  }

  hasCollection(id: string): boolean {
    return this.collections.has(id);
  }

  get(collection: string, key: string): Json | undefined {
    return this.collections.get(collection)?.get(key);
  }

  subscribe(l: StoreListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Stores `obj` (a fresh object the caller no longer mutates) and stamps its resourceVersion. */
  put(collection: string, key: string, obj: Json): Json {
    const c = this.collection(collection);
    const prev = c.get(key);
    const rv = ++this.rv;
    // A fresh metadata object, so that a caller who copied `prev.metadata` by reference cannot alter history.
    obj.metadata = withResourceVersion(obj.metadata, String(rv));
    c._set(key, obj);
    c.lastChangeRv = rv;
    this.emit({ rv, type: prev === undefined ? 'ADDED' : 'MODIFIED', collection, key, object: obj, prev });
    return obj;
  }

  delete(collection: string, key: string): Json | undefined {
    const c = this.collections.get(collection);
    const prev = c?.get(key);
    if (!c || prev === undefined) return undefined;
    const rv = ++this.rv;
    c._delete(key);
    c.lastChangeRv = rv;
    // The DELETED event carries the last state with the deletion revision, as etcd watch does.
    const object = { ...prev, metadata: { ...prev.metadata, resourceVersion: String(rv) } };
    this.emit({ rv, type: 'DELETED', collection, key, object, prev });
    return prev;
  }

  /** Start-up load: objects get consecutive revisions, but no events; history starts after them. */
  load(collection: string, entries: [string, Json][], indexOf?: (obj: Json) => string | undefined): void {
    const c = this.collection(collection, indexOf);
    for (const [, o] of entries) o.metadata = withResourceVersion(o.metadata, String(++this.rv));
    c._load(entries);
    c.lastChangeRv = this.rv;
    this.compactedRv = this.rv;
  }

  /** Marks all history so far as compacted (used after bootstrap). */
  compact(): void {
    this.log = [];
    this.compactedRv = this.rv;
    this.snapshotCache.clear();
  }

  private emit(ev: StoreEvent): void {
    this.log.push(ev);
    let window = this.watchWindows.get(ev.collection);
    if (!window) {
      window = new WatchCacheWindow(this.compactedRv);
      this.watchWindows.set(ev.collection, window);
    }
    window.record(ev.rv, this.watchClock());
    if (this.log.length > MAX_LOG) {
      this.log.splice(0, TRIM_BATCH);
      this.compactedRv = (this.log[0]?.rv ?? this.rv) - 1;
      this.snapshotCache.clear();
    }
    for (const l of this.listeners) l(ev);
  }

  /** Events of a collection after `rv`, oldest first. */
  eventsSince(collection: string, rv: number): StoreEvent[] {
    this.checkNotCompacted(rv);
    const out: StoreEvent[] = [];
    for (let i = this.log.length - 1; i >= 0; i--) {
      const ev = this.log[i] as StoreEvent;
      if (ev.rv <= rv) break;
      if (ev.collection === collection) out.push(ev);
    }
    return out.reverse();
  }

  /**
   * The newest revision a watch of the collection can no longer start from (a watch from below it is
   * answered 410): the watch cache's reach, or the compacted history's, whichever is shorter.
   */
  watchFloor(collection: string): number {
    return Math.max(this.compactedRv, this.watchWindows.get(collection)?.floor() ?? 0);
  }

  /** The revision of the collection's newest event (0 before any): what a watch bookmark carries. */
  lastEventRv(collection: string): number {
    return this.watchWindows.get(collection)?.newest() ?? 0;
  }

  checkNotCompacted(rv: number): void {
    if (rv < this.compactedRv) {
      throw new ApiError(410, 'Expired', `The resourceVersion for the provided list is too old.`, {});
    }
  }

  /** The collection as it was at revision `rv` (the current state when nothing changed since). */
  view(collection: string, rv?: number): View {
    const c = this.collection(collection);
    if (rv === undefined || rv >= c.lastChangeRv) return { keys: c.keys(), get: (k) => c.get(k) };
    this.checkNotCompacted(rv);
    const cached = this.snapshotCache.get(collection);
    if (cached && cached.rv === rv) return cached.view;
    // Undo, newest first, every change made after rv; the last write wins, leaving each key's value at rv.
    const overlay = new Map<string, Json | null>();
    for (let i = this.log.length - 1; i >= 0; i--) {
      const ev = this.log[i] as StoreEvent;
      if (ev.rv <= rv) break;
      if (ev.collection !== collection) continue;
      overlay.set(ev.key, ev.type === 'ADDED' ? null : ev.prev);
    }
    const keys = c.keys().filter((k) => !overlay.has(k) || overlay.get(k) !== null);
    for (const [k, v] of overlay) if (v !== null && c.get(k) === undefined) keys.push(k);
    keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const view: View = { keys, get: (k) => (overlay.has(k) ? (overlay.get(k) ?? undefined) : c.get(k)) };
    this.snapshotCache.set(collection, { rv, view });
    return view;
  }
}
