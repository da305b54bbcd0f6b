/**
 * The follow between cycles, over the simulator's watch cache (local/sim/watch-cache.ts, the real
 * cacher's 75 s rule) on its manual clock: with a follow every minute, bursts of pod events more than
 * 75 s after the cycle's read are taken up at the next cycle with no 410 and nothing lost; without
 * follows the same history expires (410) and the cycle lists every pod, still with nothing lost; a
 * DaemonSet's list that none of the churn touches moves on with the watch cache's bookmarks and does
 * not expire. A follow reads no object in full and drops what it cannot take up.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { followCluster } from '../../shared/cycle/follow.js';
import { KeptLists } from '../../shared/cycle/kept-lists.js';
import { ClusterSnapshot } from '../../shared/cycle/snapshot.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';

const CLUSTER = 'follow';
const PAGE = 40;
const AGENTS = 12;
const DS = { namespace: 'monitoring', labelSelector: 'app=agent' };
const ALL = '/api/v1/pods?';
const NODES = '/api/v1/nodes?';
const AGENT_LIST = `/api/v1/namespaces/monitoring/pods?${new URLSearchParams({ labelSelector: DS.labelSelector })}`;

const pod = (namespace: string, name: string, labels: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels },
  spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '50m' } } }] },
});

describe('the follow between cycles', () => {
  let sim: Simulator | undefined;
  let client: ClusterClient | undefined;
  afterEach(async () => {
    await client?.close();
    await sim?.stop();
  });

  /** A cluster of a few nodes, a DaemonSet's pods (app=agent) and nothing running on its own. */
  async function world() {
    sim = await startSimulator({ clusters: [{ name: CLUSTER, nodes: 4, controllers: false, seed: 5 }] });
    client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: CLUSTER, context: CLUSTER });
    const s = sim;
    const store = () => s.cluster(CLUSTER).store;
    for (let i = 0; i < AGENTS; i++) store().put('pods', pod('monitoring', `agent-${i}`, { app: 'agent' }));
    let n = 0;
    /** `count` pod events none of which is the DaemonSet's: workload pods created, changed, deleted. */
    const churn = (count: number) => {
      for (let i = 0; i < count; i++, n++) {
        const name = `web-${n % 25}`;
        if (n % 7 === 6) store().delete('pods', name, 'default');
        else store().put('pods', pod('default', name, { app: 'web', touch: String(n) }));
      }
    };
    const c = client as ClusterClient;
    /** One cycle's reads: every pod and the nodes (balloons), or the DaemonSet's pods (node scope alone). */
    const cycle = async (kept: KeptLists | undefined, what: 'all' | 'agents') => {
      const snapshot = new ClusterSnapshot(new RawReader(c), {
        pageSize: PAGE,
        allPods: what === 'all',
        ...(kept ? { kept: { lists: kept, scope: CLUSTER, now: () => s.clock.now() } } : {}),
      });
      const nodes = what === 'all' ? await snapshot.nodes() : [];
      const pods =
        what === 'all' ? await snapshot.allPods() : await snapshot.pods({ ...DS, keep: () => true });
      return { nodes, pods, reads: Object.fromEntries(snapshot.reads) };
    };
    const follow = async (kept: KeptLists, unreadAfterMs?: number) => {
      const reader = new RawReader(c);
      const unread = unreadAfterMs === undefined ? undefined : { now: s.clock.now(), afterMs: unreadAfterMs };
      const r = await followCluster(reader, kept, CLUSTER, unread);
      return { ...r, stats: reader.stats };
    };
    return { sim: s, churn, cycle, follow, advance: (ms: number) => s.clock.advance(ms) };
  }

  /**
   * Four minutes between two cycles: each minute a burst of 60 pod events half a minute after the last
   * read (240 in all, the last three more than 75 s after the cycle's read), then `between` (a follow,
   * or nothing), then the cycle at minute 5.
   */
  async function fourMinutes(w: Awaited<ReturnType<typeof world>>, between: () => Promise<void>) {
    for (let m = 1; m <= 4; m++) {
      w.advance(30_000);
      w.churn(60);
      w.advance(30_000);
      await between();
    }
    w.advance(60_000);
  }

  it('with a follow every minute, 240 pod events over 5 minutes are taken up at the next cycle: no 410, nothing lost', async () => {
    const w = await world();
    const kept = new KeptLists();
    const first = await w.cycle(kept, 'all');
    expect(first.reads[ALL]).toEqual({ how: 'listed', why: 'cold' });
    const follows: Awaited<ReturnType<typeof w.follow>>[] = [];
    await fourMinutes(w, async () => {
      follows.push(await w.follow(kept));
    });
    for (const f of follows) {
      // 60 writes, a few of them deletes of pods already gone (no event).
      expect(f.lists[ALL]).toMatchObject({ how: 'resumed', changes: expect.any(Number) });
      expect((f.lists[ALL] as { changes: number }).changes).toBeGreaterThan(50);
      expect(f.lists[NODES]).toMatchObject({ how: 'resumed' });
      expect(f.kept).toBe(2);
      // A follow reads the revision and watches each list, nothing else.
      expect(f.stats.byOperation).toEqual({
        'read revision': 1,
        'list pods (changes)': 1,
        'list nodes (changes)': 1,
      });
    }
    const after = await w.cycle(kept, 'all');
    expect(after.reads[ALL]).toMatchObject({ how: 'resumed' });
    expect(after.reads[NODES]).toMatchObject({ how: 'resumed' });
    const fresh = await w.cycle(undefined, 'all');
    expect(after.pods).toEqual(fresh.pods);
    expect(after.nodes).toEqual(fresh.nodes);
    expect(after.pods.filter((p) => p.namespace === 'default').length).toBeGreaterThan(0);
  });

  it('without follows the same history is beyond the watch cache (410): the cycle lists in full, nothing lost', async () => {
    const w = await world();
    const kept = new KeptLists();
    await w.cycle(kept, 'all');
    await fourMinutes(w, async () => {});
    const after = await w.cycle(kept, 'all');
    expect(after.reads[ALL]).toEqual({ how: 'listed', why: 'expired' });
    const fresh = await w.cycle(undefined, 'all');
    expect(after.pods).toEqual(fresh.pods);
  });

  it("a DaemonSet's list that no change touches moves on with the cache's bookmarks and does not expire", async () => {
    const w = await world();
    const kept = new KeptLists();
    const unfollowed = new KeptLists();
    await w.cycle(kept, 'agents');
    await w.cycle(unfollowed, 'agents');
    const at = (f: Awaited<ReturnType<typeof w.follow>>) =>
      BigInt((f.lists[AGENT_LIST] as { rv: string }).rv);
    const current = await w.follow(kept);
    expect(current.lists[AGENT_LIST]).toMatchObject({ how: 'resumed', end: 'current' });
    // Nothing reaches the cache while the follow watches: no bookmark, the list stays where it was.
    w.churn(5);
    const still = await w.follow(kept);
    expect(still.lists[AGENT_LIST]).toMatchObject({ how: 'resumed', changes: 0, end: 'closed' });
    expect(at(still)).toBe(at(current));
    const rvs: bigint[] = [at(still)];
    await fourMinutes(w, async () => {
      // The cluster keeps changing while the follow watches: the cache's bookmark ~1 s in carries its
      // revision (a watch cache sends one only once a change has reached it after the watch began).
      const during = setTimeout(() => w.churn(1), 300);
      const f = await w.follow(kept);
      clearTimeout(during);
      // The bookmark (at or past the revision read first: `reached`) moved the list on, no change came.
      expect(f.lists[AGENT_LIST]).toMatchObject({ how: 'resumed', changes: 0, bookmarks: 1 });
      rvs.push(at(f));
    });
    for (let i = 1; i < rvs.length; i++) expect(rvs[i]).toBeGreaterThan(rvs[i - 1] as bigint);
    const after = await w.cycle(kept, 'agents');
    expect(after.reads[AGENT_LIST]).toMatchObject({ how: 'resumed' });
    expect(after.pods).toEqual((await w.cycle(undefined, 'agents')).pods);
    expect(after.pods).toHaveLength(AGENTS);
    // The same list not followed is beyond the cache's reach.
    expect((await w.cycle(unfollowed, 'agents')).reads[AGENT_LIST]).toEqual({
      how: 'listed',
      why: 'expired',
    });
  });

  it('a list no cycle has read for two periods (balloons turned off, a VPA gone) is dropped unread; the rest are followed', async () => {
    const w = await world();
    const kept = new KeptLists();
    const MIN = 60_000;
    await w.cycle(kept, 'all');
    for (const _ of [1, 2]) {
      await w.advance(5 * MIN);
      await w.cycle(kept, 'agents');
    }
    await w.advance(MIN);
    const f = await w.follow(kept, 10 * MIN);
    expect(f.lists[ALL]).toEqual({ how: 'dropped', why: 'no cycle read it' });
    expect(f.lists[NODES]).toEqual({ how: 'dropped', why: 'no cycle read it' });
    expect(f.lists[AGENT_LIST]).toMatchObject({ how: 'resumed' });
    expect(kept.keys(`${CLUSTER} `)).toEqual([`${CLUSTER} ${AGENT_LIST}`]);
    // The revision read alone (the DaemonSet's list is current, nothing changed): nothing of the dropped.
    expect(f.lists[AGENT_LIST]).toMatchObject({ end: 'current' });
    expect(f.stats.requests).toBe(1);
  });

  it("on a clock faster than the wall (the demo's --speedup), a watch's timeout and bookmark lapse on that clock", async () => {
    const w = await world();
    (w.sim as unknown as { state(n: string): { watchWallScale: number } }).state(CLUSTER).watchWallScale =
      1 / 60;
    const kept = new KeptLists();
    await w.cycle(kept, 'agents');
    w.churn(3);
    // 3 s of the watch's own time: 50 ms of wall time at 60x; a change during it brings the bookmark.
    const during = setTimeout(() => w.churn(1), 5);
    const f = await w.follow(kept);
    clearTimeout(during);
    expect(f.lists[AGENT_LIST]).toMatchObject({ how: 'resumed', changes: 0 });
    // Without the scale the same follow would take 3 s; a 60 s watch would outlast this test's timeout.
    const reader = new RawReader(client as ClusterClient);
    const long = await reader.watch('watch pods', '/api/v1/pods', {}, () => {}, {
      from: (f.lists[AGENT_LIST] as { rv: string }).rv,
      timeoutSeconds: 60,
    });
    expect(long.end).toBe('closed');
  }, 4_000);
});
