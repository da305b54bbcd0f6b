/**
 * The per-cycle snapshot over the simulator: nodes listed once however many consumers ask, every pod
 * listed once when one consumer needs them all (the others are served from that list, filtered in
 * memory, with the same pods as their own selector-narrowed lists would give), a failed read asked again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { ClusterSnapshot, type PodQuery } from '../../shared/cycle/snapshot.js';
import type { PodView } from '../../shared/cycle/views.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { ClusterAccessError } from '../../shared/k8s/errors.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';

const CLUSTER = 'snap';
const PAGE = 4;

const container = (name: string) => ({ name, requests: { cpu: '50m', memory: '64Mi' } });

describe('ClusterSnapshot', () => {
  let sim: Simulator;
  let client: ClusterClient;
  const stats = () => sim.cluster(CLUSTER).stats().byMethodAndKind;
  const stored = (resource: string) => sim.cluster(CLUSTER).store.list(resource);
  const names = (pods: PodView[]) => pods.map((p) => `${p.namespace}/${p.name}`).sort();
  const snapshot = (allPods?: boolean) =>
    new ClusterSnapshot(new RawReader(client), { pageSize: PAGE, ...(allPods ? { allPods } : {}) });

  beforeAll(async () => {
    sim = await startSimulator({
      clusters: [
        {
          name: CLUSTER,
          nodes: 7,
          seed: 5,
          daemonSets: [
            { name: 'agent', namespace: 'monitoring', containers: [container('agent')] },
            { name: 'shipper', namespace: 'logging', containers: [container('shipper')] },
          ],
        },
      ],
    });
    for (const [namespace, name] of [
      ['default', 'web-1'],
      ['default', 'web-2'],
      ['monitoring', 'probe'],
    ] as const)
      sim.cluster(CLUSTER).store.put('pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, labels: { app: 'web' } },
        spec: { containers: [{ ...container('web'), image: 'nginx' }] },
      });
    client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: CLUSTER, context: CLUSTER });
  });
  afterAll(async () => {
    await client?.close();
    await sim?.stop();
  });

  it('lists the nodes once, however many consumers ask', async () => {
    sim.cluster(CLUSTER).resetStats();
    const s = snapshot();
    const [a, b] = await Promise.all([s.nodes(), s.nodes()]);
    expect(b).toBe(a);
    expect(await s.nodes()).toBe(a);
    expect(a.map((n) => n.name).sort()).toEqual(
      stored('nodes')
        .map((n) => n.metadata.name as string)
        .sort(),
    );
    expect(a.every((n) => n.capacityCpu > 0 && n.allocatableCpu > 0 && n.resourceVersion !== '')).toBe(true);
    expect(stats()['GET nodes']).toBe(Math.ceil(stored('nodes').length / PAGE));
  });

  it('serves every consumer from one list of all pods, with what their own lists would give', async () => {
    const ds = sim.cluster(CLUSTER).store.get('daemonsets', 'agent', 'monitoring') as {
      spec: { selector: { matchLabels: Record<string, string> } };
    };
    const labelSelector = Object.entries(ds.spec.selector.matchLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const queries: PodQuery[] = [
      { namespace: 'monitoring', labelSelector, keep: (p) => p.owner?.name === 'agent' },
      { namespace: 'monitoring', keep: () => true },
      { fieldSelector: 'metadata.namespace=default', keep: (p) => p.namespace === 'default' },
    ];
    sim.cluster(CLUSTER).resetStats();
    const plain = snapshot();
    const own: PodView[][] = [];
    for (const q of queries) own.push(await plain.pods(q));
    // One list per consumer (each paged), each narrowed by the server to what the consumer keeps.
    expect(stats()['GET pods']).toBe(
      own.reduce((a, pods) => a + Math.max(1, Math.ceil(pods.length / PAGE)), 0),
    );

    sim.cluster(CLUSTER).resetStats();
    const shared = snapshot(true);
    const served: PodView[][] = [];
    for (const q of queries) served.push(await shared.pods(q));
    const all = await shared.allPods();
    expect(stats()['GET pods']).toBe(Math.ceil(stored('pods').length / PAGE));
    expect(all.length).toBe(stored('pods').length);
    served.forEach((pods, i) => {
      expect(names(pods)).toEqual(names(own[i] as PodView[]));
    });
    expect(served[0]?.length).toBeGreaterThan(0);
    expect(names(served[1] as PodView[])).toContain('monitoring/probe');
    // A scheduled pod of a DaemonSet comes with its controller and node.
    expect(served[0]?.every((p) => p.owner?.kind === 'DaemonSet' && p.node !== '')).toBe(true);
  });

  it('forgets a failed read, so the next consumer asks again', async () => {
    const fault = sim.faults.inject({
      cluster: CLUSTER,
      match: { method: 'GET', kind: 'nodes' },
      fault: { type: 'status', code: 403 },
      times: 1,
    });
    const s = snapshot();
    await expect(s.nodes()).rejects.toBeInstanceOf(ClusterAccessError);
    sim.faults.clear(fault);
    expect((await s.nodes()).length).toBe(stored('nodes').length);
  });
});
