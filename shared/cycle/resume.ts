/**
 * One large list read for a cycle, from what the previous cycle kept when it can be: the cluster's
 * current revision first (`revision`, read once per cycle), then a watch from the kept revision that applies every
 * change since to the kept views, until the watch reaches that revision, goes quiet or is ended by the
 * server. When the server no longer holds the history (410 Expired: its watch cache keeps about the
 * last 75 s or 100 events of a resource), when the revision went backwards (another etcd behind the
 * same address), or when the watch fails, the list is read in full, as without anything kept.
 */
import { ClusterAccessError } from '../k8s/errors.js';
import {
  atOrAfter,
  type ListObject,
  type RawReader,
  type WatchEventType,
  type WatchOptions,
} from '../k8s/raw-reader.js';
import type { KeptList, KeptListSpec } from './kept-lists.js';

/** How a list was read: resumed (and how many changes), or listed in full (and why). */
export type ListRead =
  | {
      how: 'resumed';
      changes: number;
      bookmarks: number;
      end: 'current' | 'reached' | 'bookmark' | 'quiet' | 'closed';
    }
  | { how: 'listed'; why: 'cold' | 'expired' | 'revision went back' | 'watch failed' };

/** How a follow took a list up: resumed, or dropped from the kept lists (the next cycle lists it). */
export type FollowRead =
  | (Extract<ListRead, { how: 'resumed' }> & { rv: string })
  | { how: 'dropped'; why: 'expired' | 'revision went back' | 'watch failed' | 'no cycle read it' };

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

/**
 * A follow's watch: until its first bookmark, which the watch cache sends 2 s before the timeout (so
 * about 1 s in, at most 3 s) once a change of the resource has reached it after the watch began (its
 * revision past the last event the watch started from, filtered out or not: checked on 1.33 and 1.36).
 * A bookmark moves a list on to the cache's revision even when none of its objects changed, which is
 * what keeps a quiet list within the cache's reach; without one the watch ends at the timeout and the
 * list stays where it was.
 */
export const FOLLOW_WATCH = { timeoutSeconds: 3, untilBookmark: true } as const;

type Item = { metadata?: { name?: string; namespace?: string; resourceVersion?: string } };

export async function readKeptList<O extends Item, V>(
  reader: RawReader,
  spec: KeptListSpec<O, V>,
  kept: KeptList<V, O> | undefined,
  revision: () => Promise<string | undefined>,
): Promise<{ list: KeptList<V, O>; read: ListRead }> {
  if (kept) {
    try {
      const read = await resume(reader, kept, await revision(), RESUME_WATCH);
      if (read.how === 'resumed') return { list: kept, read };
      return { list: await listInFull(reader, spec), read };
    } catch (e) {
      if (!(e instanceof ClusterAccessError)) throw e;
      const expired = e.status === 410;
      const why = expired ? 'expired' : 'watch failed';
      return { list: await listInFull(reader, spec), read: { how: 'listed', why } };
    }
  }
  return { list: await listInFull(reader, spec), read: { how: 'listed', why: 'cold' } };
}

/**
 * A follow of one kept list (between cycles): the changes since its revision applied to its views, and
 * its revision moved on, never a full list. The list is dropped (undefined: the next cycle lists it)
 * when it cannot be followed: its history is out of the watch cache's reach (410), the revision went
 * back, or the watch failed. A read failing otherwise (a defect) rejects, the list being dropped too.
 */
export async function followKeptList<O extends Item, V>(
  reader: RawReader,
  kept: KeptList<V, O>,
  now: string | undefined,
): Promise<{ list?: KeptList<V, O>; read: FollowRead }> {
  try {
    const read = await resume(reader, kept, now, FOLLOW_WATCH);
    // resume lists nothing: its only other answer is a revision gone back.
    if (read.how === 'resumed') return { list: kept, read: { ...read, rv: kept.rv } };
    return { read: { how: 'dropped', why: 'revision went back' } };
  } catch (e) {
    if (!(e instanceof ClusterAccessError)) throw e;
    return { read: { how: 'dropped', why: e.status === 410 ? 'expired' : 'watch failed' } };
  }
}

type ResumeWatch = Omit<WatchOptions, 'from' | 'until'>;

async function resume<O extends Item, V>(
  reader: RawReader,
  kept: KeptList<V, O>,
  now: string | undefined,
  bounds: ResumeWatch,
): Promise<ListRead> {
  const spec = kept.spec;
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
    ...bounds,
  });
  kept.rv = w.rv;
  return { how: 'resumed', changes: w.events, bookmarks: w.bookmarks, end: w.end };
}

async function listInFull<O extends Item, V>(
  reader: RawReader,
  spec: KeptListSpec<O, V>,
): Promise<KeptList<V, O>> {
  const fresh = (): KeptList<V, O> => ({ rv: '', spec, items: new Map(), shared: new Map() });
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
      ...(spec.protobuf ? { protobuf: spec.protobuf as (bytes: Uint8Array) => ListObject<O> } : {}),
    },
  );
  list.rv = resourceVersion ?? '';
  return list;
}
