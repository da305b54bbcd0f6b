/**
 * The cycle's shared read taken up from the previous cycle (kept lists, a watch for the changes), over
 * the simulator: the first cycle lists, a second one on a steady cluster reads one empty list and no
 * object, a cycle after changes reads only them and ends with the views a cold read gives; another
 * cluster's scope takes nothing; an expired history falls back to a full list with nothing lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { KeptLists } from '../../shared/cycle/kept-lists.js';
import { ClusterSnapshot } from '../../shared/cycle/snapshot.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';

const CLUSTER = 'kept';
const PAGE = 50;
const container = (name: string) => ({ name, requests: { cpu: '50m', memory: '64Mi' } });

describe('the shared read, cycle after cycle', () => {
  let sim: Simulator;
  let client: ClusterClient;
  const kept = new KeptLists();
  const cluster = () => sim.cluster(CLUSTER);
  /** One cycle's shared read (nodes, every pod, one DaemonSet's pods), as the cluster cycle does it. */
  const cycle = async (lists: KeptLists | undefined, scope = CLUSTER) => {
    const reader = new RawReader(client);
    const snapshot = new ClusterSnapshot(reader, {
      pageSize: PAGE,
      allPods: true,
      ...(lists ? { kept: { lists, scope } } : {}),
    });
    const nodes = await snapshot.nodes();
    const pods = await snapshot.allPods();
    const reads = Object.fromEntries(snapshot.reads);
    return { nodes, pods, reads, stats: reader.stats };
  };
  /** What a cold read gives now. */
  const cold = () => cycle(undefined);

  beforeAll(async () => {
    sim = await startSimulator({
      clusters: [
        {
          name: CLUSTER,
          nodes: 40,
          seed: 7,
          daemonSets: [
            { name: 'agent', namespace: 'monitoring', containers: [container('agent')] },
            { name: 'shipper', namespace: 'logging', containers: [container('shipper')] },
          ],
        },
      ],
    });
    client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: CLUSTER, context: CLUSTER });
  });
  afterAll(async () => {
    await client?.close();
    await sim?.stop();
  });

  it('the first cycle lists; a second on a steady cluster reads no object', async () => {
    const first = await cycle(kept);
    expect(first.reads).toEqual({
      '/api/v1/nodes?': { how: 'listed', why: 'cold' },
      '/api/v1/pods?': { how: 'listed', why: 'cold' },
    });
    expect(first.pods).toHaveLength(cluster().store.list('pods').length);
    expect(first.pods.length).toBeGreaterThan(PAGE);
    expect(first.stats.byOperation).toEqual({ 'list nodes': 1, 'list pods': 2 });

    cluster().resetStats();
    const second = await cycle(kept);
    expect(second.reads).toEqual({
      '/api/v1/nodes?': { how: 'resumed', changes: 0, bookmarks: 0, end: 'current' },
      '/api/v1/pods?': { how: 'resumed', changes: 0, bookmarks: 0, end: 'current' },
    });
    // One request, an empty list that gives the revision: no node, no pod read again.
    expect(second.stats.byOperation).toEqual({ 'read revision': 1 });
    expect(cluster().stats().byMethodAndKind).toEqual({ 'GET pods': 1 });
    expect(second.stats.wireBytes).toBeLessThan(200);
    expect(second.stats.wireBytes * 1000).toBeLessThan(first.stats.wireBytes);
    expect(second.pods).toEqual(first.pods);
    expect(second.nodes).toEqual(first.nodes);
  });

  it('after changes, a cycle reads only them and ends where a cold read does', async () => {
    const before = await cycle(kept);
    const s = cluster().store;
    const victim = before.pods.find((p) => p.namespace === 'logging') ?? before.pods[0];
    s.delete('pods', victim?.name ?? '', victim?.namespace);
    await sim.cluster(CLUSTER).addNode({ name: 'node-late', cpu: '8', memory: '32Gi' });
    const web = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: { containers: [{ ...container('web'), image: 'nginx' }] },
    };
    s.put('pods', web);

    const after = await cycle(kept);
    expect(after.reads['/api/v1/pods?']).toMatchObject({ how: 'resumed' });
    expect(after.reads['/api/v1/nodes?']).toMatchObject({ how: 'resumed' });
    const reference = await cold();
    expect(after.nodes).toEqual(reference.nodes);
    expect(after.pods).toEqual(reference.pods);
    expect(after.pods.some((p) => p.name === 'web')).toBe(true);
    expect(after.pods.some((p) => p.uid === victim?.uid)).toBe(false);
    expect(after.nodes.some((n) => n.name === 'node-late')).toBe(true);
    // The changes only: a revision, one watch per list, far fewer bytes than the lists.
    expect(after.stats.byOperation).toEqual({
      'read revision': 1,
      'list nodes (changes)': 1,
      'list pods (changes)': 1,
    });
    expect(after.stats.wireBytes * 5).toBeLessThan(reference.stats.wireBytes);
  });

  it("another cluster's scope takes nothing kept for this one", async () => {
    const other = await cycle(kept, 'another');
    expect(other.reads['/api/v1/pods?']).toEqual({ how: 'listed', why: 'cold' });
  });

  it('a history beyond the watch cache lists in full, with every change', async () => {
    await cycle(kept);
    cluster().store.delete('pods', 'web', 'default');
    // 75 s and more than 100 pod events later, the kept revision is out of the watch cache's reach.
    sim.clock.advance(76_000);
    const filler = (i: number) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'filler', namespace: 'default', labels: { n: String(i) } },
      spec: { containers: [{ ...container('filler'), image: 'busybox' }] },
    });
    for (let i = 0; i < 130; i++) cluster().store.put('pods', filler(i));
    const after = await cycle(kept);
    expect(after.reads['/api/v1/pods?']).toEqual({ how: 'listed', why: 'expired' });
    const reference = await cold();
    expect(after.pods).toEqual(reference.pods);
    expect(after.pods.some((p) => p.name === 'web')).toBe(false);
  });
});

describe('KeptLists', () => {
  const spec = { operation: 'list', path: '/x', query: {}, pageSize: 1, keyOf: () => 'k', view: () => 0 };
  const list = (n: number) => ({
    rv: '1',
    spec,
    items: new Map(Array.from({ length: n }, (_, i) => [`k${i}`, i])),
    shared: new Map(),
  });

  it('keeps at most its bound of objects, the least recently used lists going first', () => {
    const kept = new KeptLists(10);
    kept.put('a', list(4));
    kept.put('b', list(4));
    kept.put('a', kept.take('a') ?? list(0));
    kept.put('c', list(4));
    expect(kept.size()).toEqual({ lists: 2, objects: 8 });
    expect(kept.take('b')).toBeUndefined();
    expect(kept.take('a')?.items.size).toBe(4);
  });

  it('does not keep a list larger than the bound, and a taken list is gone until put back', () => {
    const kept = new KeptLists(10);
    kept.put('big', list(11));
    expect(kept.size()).toEqual({ lists: 0, objects: 0 });
    kept.put('a', list(2));
    expect(kept.take('a')).toBeDefined();
    expect(kept.take('a')).toBeUndefined();
  });
});
