/**
 * The follow: between two cycles of a cluster (every minute, the cycle every 5), each list the process
 * keeps for it is taken up where it was (a watch from its revision, to its first bookmark) so that its
 * revision never falls out of the apiserver's watch cache. The cache keeps a resource's events in a ring
 * of at least 100 that grows only while its oldest event is younger than 75 s (eventFreshDuration: the
 * 1-minute bookmark period plus a margin): a watcher that comes back within a minute always finds its
 * history there; one that comes back after 5 minutes finds it gone after any burst of more than about
 * 100 events (410 Expired), and its next cycle lists every pod. The follow reads no object in full and
 * writes nothing: a list it cannot take up (410, a failure) is dropped, and the next cycle lists it.
 */
import type { RawReader } from '../k8s/raw-reader.js';
import { CYCLE_PERIOD_MINUTES } from './capability.js';
import type { KeptLists } from './kept-lists.js';
import { currentRevision, type FollowRead, followKeptList } from './resume.js';

export interface FollowResult {
  /** How each kept list of the cluster was followed, by its path and selectors. */
  lists: Record<string, FollowRead>;
  /** What the process keeps for the cluster afterwards. */
  kept: number;
}

/**
 * How long a follow keeps a list no cycle has read: two cycles missed (and a minute's margin). Beyond,
 * its capability is off, its target gone, or the cluster's cycles run on another instance: following it
 * would only load the apiserver and this instance's memory.
 */
export const UNREAD_AFTER_MS = (2 * CYCLE_PERIOD_MINUTES + 1) * 60_000;

/** Lists a cycle last read longer ago than `afterMs` before `now` (the schedule's clock) are dropped. */
export interface Unread {
  now: number;
  afterMs: number;
}

/**
 * Follows every list `kept` holds under `scope` (keptScope: the cluster, its server and CA), in
 * parallel, after one read of the cluster's revision. Nothing kept: nothing read. With `unread`, a
 * list no cycle has read within its bound is dropped without a request. Once done, the reader's idle
 * sockets are closed: the next follow is a minute away, and the instance may follow many clusters.
 */
export async function followCluster(
  reader: RawReader,
  kept: KeptLists,
  scope: string,
  unread?: Unread,
): Promise<FollowResult> {
  return reader.closingIdle(() => follow(reader, kept, scope, unread));
}

async function follow(
  reader: RawReader,
  kept: KeptLists,
  scope: string,
  unread?: Unread,
): Promise<FollowResult> {
  const prefix = `${scope} `;
  const dropped: [string, FollowRead][] = [];
  const taken = kept.keys(prefix).flatMap((k) => {
    const list = kept.take(k);
    if (list && unread && unread.now - (list.cycledAt ?? Number.NEGATIVE_INFINITY) > unread.afterMs) {
      dropped.push([k.slice(prefix.length), { how: 'dropped', why: 'no cycle read it' }]);
      return [];
    }
    return list ? [{ key: k, list }] : [];
  });
  if (taken.length === 0) return { lists: Object.fromEntries(dropped), kept: 0 };
  const now = await currentRevision(reader);
  const settled = await Promise.allSettled(
    taken.map(async ({ key, list }) => {
      const r = await followKeptList(reader, list, now);
      if (r.list) kept.put(key, r.list);
      return [key.slice(prefix.length), r.read] as const;
    }),
  );
  // A list whose follow failed otherwise (a defect) is dropped like the rest; the defect is not hidden.
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  const lists = Object.fromEntries([
    ...dropped,
    ...settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])),
  ]) as Record<string, FollowRead>;
  return { lists, kept: kept.keys(prefix).length };
}
