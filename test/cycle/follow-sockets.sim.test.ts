/**
 * The sockets a cycle and a follow leave open, counted at the simulator's server. A warm instance serves
 * many clusters, each with its own connections: an idle kept-alive socket per list reader and per watch
 * would add up across clusters between two minutes. So a watch's socket closes when the watch ends
 * (even when the server ended it: a quiet list waits out its timeout), and a follow or a cycle closes
 * the idle sockets its reads kept alive once it is done; within one invocation they are reused (the
 * pages of a list, the revision read and the lists after it).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { followCluster } from '../../shared/cycle/follow.js';
import { KeptLists } from '../../shared/cycle/kept-lists.js';
import { ClusterSnapshot } from '../../shared/cycle/snapshot.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';

const CLUSTERS = ['s-1', 's-2', 's-3'];
const PAGE = 10;
const PODS = 45;

describe('sockets after a cycle and a follow', () => {
  let sim: Simulator | undefined;
  const clients: ClusterClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await sim?.stop();
  });

  it('leaves none open, across clusters, and reuses them within one invocation', async () => {
    sim = await startSimulator({
      clusters: CLUSTERS.map((name, i) => ({ name, nodes: 3, controllers: false, seed: 11 + i })),
    });
    const s = sim;
    const kept = new KeptLists();
    for (const name of CLUSTERS) {
      const cluster = s.cluster(name);
      // The nodes never change, so the follow's watch of them gets no bookmark and waits out its
      // timeout (3 s of the cluster's time: 50 ms of wall time here): the server ends that watch.
      (s as unknown as { state(n: string): { watchWallScale: number } }).state(name).watchWallScale = 1 / 60;
      for (let i = 0; i < PODS; i++)
        cluster.store.put('pods', {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `web-${i}`, namespace: 'default', labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'busybox' }] },
        });
      const client = ClusterClient.fromKubeconfig(s.kubeconfig(), { cluster: name, context: name });
      clients.push(client);

      // A cycle: every pod (5 pages) and the nodes, listed cold.
      const snapshot = new ClusterSnapshot(new RawReader(client), {
        pageSize: PAGE,
        allPods: true,
        kept: { lists: kept, scope: name, now: () => s.clock.now() },
      });
      await snapshot.nodes();
      await snapshot.allPods();
      // What runClusterCycle does once the cycle is done.
      await snapshot.reader.closeIdle();
      const cycled = cluster.connections();
      // Pages of one list share a connection.
      expect(cycled.accepted).toBeLessThanOrEqual(2);
      await vi.waitFor(() => expect(cluster.connections().open).toBe(0));

      // A pod changes: the pods' watch ends at it; the nodes' watch is ended by the server.
      cluster.store.put('pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web-0', namespace: 'default', labels: { app: 'web', touched: 'yes' } },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      });
      const f = await followCluster(new RawReader(client), kept, name);
      expect(f.kept).toBe(2);
      expect(f.lists['/api/v1/pods?']).toMatchObject({ how: 'resumed', end: 'reached' });
      expect(f.lists['/api/v1/nodes?']).toMatchObject({ how: 'resumed', end: 'closed' });
      // The revision read, then one watch per list, each on its own connection.
      expect(cluster.connections().accepted - cycled.accepted).toBeLessThanOrEqual(3);
      await vi.waitFor(() => expect(cluster.connections().open).toBe(0));
    }
    // Nothing is left open for any of the clusters served.
    expect(CLUSTERS.map((n) => s.cluster(n).connections().open)).toEqual([0, 0, 0]);
  });
});
