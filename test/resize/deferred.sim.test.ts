/**
 * Deferred resizes through the shared mechanism against the simulator's apiserver and kubelet: a resize
 * that fits the node's allocatable but not what is free now is Deferred; the mechanism reports that
 * once, sends nothing more while the kubelet holds it, and sees it completed once capacity frees. Each
 * cycle does what a capability's cycle does: observe the recorded resize, then request if allowed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import {
  clusterResizeApi,
  type DesiredResources,
  type PodLike,
  type ResizeRecord,
  type ResizeReport,
  Resizer,
} from '../../shared/resize/index.js';

const MINUTE = 60_000;
const VERSIONS = ['1.35.0', '1.32.13'] as const;
const clusterOf = (version: string) => `v${version.split('.').slice(0, 2).join('')}`;

let sim: Simulator;
const clients = new Map<string, ClusterClient>();

beforeAll(async () => {
  sim = await startSimulator({
    clusters: VERSIONS.map((kubernetesVersion) => ({
      name: clusterOf(kubernetesVersion),
      nodes: 0,
      kubernetesVersion,
    })),
  });
  for (const version of VERSIONS) {
    const name = clusterOf(version);
    const store = sim.cluster(name).store;
    // One node with 2 CPUs; "filler" takes 1 of them, "app" 500m.
    store.put('nodes', {
      metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } },
      spec: {},
      status: {
        capacity: { cpu: '2', memory: '4Gi', pods: '110' },
        allocatable: { cpu: '2', memory: '4Gi', pods: '110' },
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
      },
    });
    const client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: name, context: name });
    clients.set(name, client);
    for (const [pod, cpu] of [
      ['filler', '1'],
      ['app', '500m'],
    ] as const)
      await client.core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: pod },
          spec: {
            nodeName: 'n1',
            containers: [
              {
                name: 'main',
                image: 'registry.k8s.io/pause:3.10',
                resources: { requests: { cpu, memory: '64Mi' } },
              },
            ],
          },
        },
      });
  }
});
afterAll(async () => {
  await Promise.all([...clients.values()].map((c) => c.close()));
  await sim?.stop();
});

describe.each(VERSIONS)('a Deferred resize on %s', (version) => {
  const cluster = clusterOf(version);
  // 1.5 CPUs fit the node's 2, but only 500m are free next to filler's 1 CPU.
  const desired: DesiredResources = { main: { requests: { cpu: 1500 } } };

  it('is waited for without a new request every cycle, and completes once capacity frees', async () => {
    const client = clients.get(cluster)!;
    const api = clusterResizeApi(client);
    const resizer = new Resizer(api, { now: () => sim.clock.now() });
    const patches = () => sim.cluster(cluster).stats().byMethodAndKind['PATCH resize'] ?? 0;
    let record: ResizeRecord | undefined;

    /** One cycle of a capability: follow up on the recorded resize, then request when allowed. */
    const cycle = async (): Promise<ResizeReport[]> => {
      sim.clock.advance(15 * MINUTE);
      const reports: ResizeReport[] = [];
      const pod = (await api.readPod('default', 'app')) as PodLike;
      const seen = resizer.observe(pod, record);
      record = seen.record;
      if (seen.report) reports.push(seen.report);
      if (resizer.mayRequest(pod, desired, record).ok) {
        const r = await resizer.resize({ pod, desired }, record);
        record = r.record;
        if (r.report) reports.push(r.report);
      }
      return reports;
    };

    expect(await cycle()).toMatchObject([{ kind: 'resized', outcome: 'Requested', pod: 'app' }]);
    expect(patches()).toBe(1);
    expect(record).toMatchObject({ state: 'requested' });

    // The kubelet deferred it: reported once, then waited for.
    expect(await cycle()).toMatchObject([{ kind: 'refused', refusal: 'Deferred', pod: 'app' }]);
    expect(record).toMatchObject({ state: 'deferred' });
    for (let i = 0; i < 8; i++) expect(await cycle()).toEqual([]);
    expect(patches()).toBe(1);
    expect(record).toMatchObject({ state: 'deferred' });
    const waiting = (await api.readPod('default', 'app')) as PodLike;
    expect(waiting.spec?.containers?.[0]?.resources?.requests?.cpu).toBe('1500m');
    expect(waiting.status?.containerStatuses?.[0]?.resources?.requests?.cpu).toBe('500m');

    // Capacity frees: the kubelet applies the deferred resize by itself; no new request is needed.
    await client.core.deleteNamespacedPod({ name: 'filler', namespace: 'default' });
    expect(await cycle()).toMatchObject([{ kind: 'resized', outcome: 'Completed', pod: 'app' }]);
    expect(record).toBeUndefined();
    expect(patches()).toBe(1);
    const done = (await api.readPod('default', 'app')) as PodLike;
    expect(done.status?.containerStatuses?.[0]?.resources?.requests?.cpu).toBe('1500m');
    // Done is done: later cycles neither report nor request.
    expect(await cycle()).toEqual([]);
    expect(patches()).toBe(1);
  });
});
