/**
 * One large list read for a cycle, from what the previous cycle kept when it can be: the cluster's
 * current revision first (`revision`, read once per cycle), then a watch from the kept revision that applies every
 * change since to the kept views, until the watch reaches that revision, goes quiet or is ended by the
 * server. When the server no longer holds the history (410 Expired: its watch cache keeps about the
 * last 75 s or 100 events of a resource), when the revision went backwards (another etcd behind the
 * same address), or when the watch fails, the list is read in full, as without anything kept.
 */
import { ClusterAccessError } from '../k8s/errors.js';
import { atOrAfter, type RawReader, type WatchEventType } from '../k8s/raw-reader.js';
import type { KeptList } from './kept-lists.js';

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
}

/** How a list was read: resumed (and how many changes), or listed in full (and why). */
export type ListRead =
  | { how: 'resumed'; changes: number; bookmarks: number; end: 'current' | 'reached' | 'quiet' | 'closed' }
  | { how: 'listed'; why: 'cold' | 'expired' | 'revision went back' | 'watch failed' };

/**
 * The cluster's current revision without reading an object: a list of pods in a namespace that does not
 * exist is empty, and its resourceVersion is the store's revision (a consistent read).
 */
export async function currentRevision(reader: RawReader): Promise<string | undefined> {
  const empty = await reader.get<{ metadata?: { resourceVersion?: string } }>(
    'read revision',
    `/api/v1/namespaces/${REVISION_PROBE_NAMESPACE}/pods`,
    { limit: 1 },
  );
  return empty.metadata?.resourceVersion || undefined;
}

/** A namespace name no cluster has (if one did, the probe would read its pods: wasteful, not wrong). */
const REVISION_PROBE_NAMESPACE = 'fleetscope-revision-probe-none';

/** The watch's bounds: the server's timeout, and how long a quiet stream is waited on. */
export const RESUME_WATCH = { timeoutSeconds: 5, quietMs: 300 } as const;

type Item = { metadata?: { name?: string; namespace?: string; resourceVersion?: string } };

export async function readKeptList<O extends Item, V>(
  reader: RawReader,
  spec: KeptListSpec<O, V>,
  kept: KeptList<V> | undefined,
  revision: () => Promise<string | undefined>,
): Promise<{ list: KeptList<V>; read: ListRead }> {
  if (kept) {
    try {
      const read = await resume(reader, spec, kept, await revision());
      if (read.how === 'resumed') return { list: kept, read };
      return { list: await listInFull(reader, spec), read };
    } catch (e) {
      if (!(e instanceof ClusterAccessError)) throw e;
      const expired = e instanceof ClusterAccessError && e.status === 410;
      const why = expired ? 'expired' : 'watch failed';
      return { list: await listInFull(reader, spec), read: { how: 'listed', why } };
    }
  }
  return { list: await listInFull(reader, spec), read: { how: 'listed', why: 'cold' } };
}

async function resume<O extends Item, V>(
  reader: RawReader,
  spec: KeptListSpec<O, V>,
  kept: KeptList<V>,
  now: string | undefined,
): Promise<ListRead> {
  if (now && atOrAfter(kept.rv, now) && now !== kept.rv) return { how: 'listed', why: 'revision went back' };
  if (now && atOrAfter(kept.rv, now)) return { how: 'resumed', changes: 0, bookmarks: 0, end: 'current' };
  const apply = (type: WatchEventType, o: O) => {
    const key = spec.keyOf(o);
    if (key === undefined) return;
    const v = type === 'DELETED' ? undefined : spec.view(o, kept.shared);
    if (v === undefined) kept.items.delete(key);
    else kept.items.set(key, v);
  };
  const w = await reader.watch<O>(`${spec.operation} (changes)`, spec.path, spec.query, apply, {
    from: kept.rv,
    ...(now ? { until: now } : {}),
    ...RESUME_WATCH,
  });
  kept.rv = w.rv;
  return { how: 'resumed', changes: w.events, bookmarks: w.bookmarks, end: w.end };
}

async function listInFull<O extends Item, V>(
  reader: RawReader,
  spec: KeptListSpec<O, V>,
): Promise<KeptList<V>> {
  const fresh = (): KeptList<V> => ({ rv: '', items: new Map(), shared: new Map() });
  let list = fresh();
  const { resourceVersion } = await reader.list<O>(
    spec.operation,
    spec.path,
    spec.query,
    (items) => {
      for (const o of items) {
        const key = spec.keyOf(o);
        const v = key === undefined ? undefined : spec.view(o, list.shared);
        if (key !== undefined && v !== undefined) list.items.set(key, v);
      }
    },
    {
      pageSize: spec.pageSize,
      onRestart: () => {
        list = fresh();
      },
    },
  );
  list.rv = resourceVersion ?? '';
  return list;
}
