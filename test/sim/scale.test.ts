/**
 * Scale: a 5,000-node cluster with 10 DaemonSets of 2 containers (50,000 pods) starts and serves
 * paginated lists and metrics. Assertions are on counts, never on wall-clock time.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimDaemonSetSpec, type Simulator, startSimulator } from '../../local/sim/index.js';
import { kubeConfigFor, raw } from './helpers.js';

const NODES = 5_000;
const DAEMONSETS: SimDaemonSetSpec[] = Array.from({ length: 10 }, (_, i) => ({
  name: `ds-${i}`,
  namespace: i < 5 ? 'kube-system' : 'monitoring',
  tolerations: [{ operator: 'Exists' }],
  containers: [
    { name: 'main', requests: { cpu: '20m', memory: '32Mi' }, limits: { memory: '256Mi' } },
    { name: 'sidecar', requests: { cpu: '5m', memory: '16Mi' } },
  ],
  load: { perNode: 'heterogeneous', cpu: '10m', memory: '24Mi' },
}));

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ clusters: [{ name: 'big', nodes: NODES, daemonSets: DAEMONSETS }] });
}, 120_000);
afterAll(async () => {
  await sim?.stop();
});

describe('a 5,000-node cluster with 50,000 pods', () => {
  it('lists every node through pages of 500', async () => {
    const core = kubeConfigFor(sim, 'big').makeApiClient(CoreV1Api);
    sim.cluster('big').resetStats();
    const names = new Set<string>();
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await core.listNode({ limit: 500, _continue: cont });
      for (const n of page.items) names.add(n.metadata?.name as string);
      cont = page.metadata?._continue;
      pages++;
    } while (cont);
    expect(names.size).toBe(NODES);
    expect(pages).toBe(10);
    expect(sim.cluster('big').stats().byMethodAndKind['GET nodes']).toBe(10);
  });

  it('lists every pod through pages of 500, each page counting down remainingItemCount', async () => {
    const c = sim.cluster('big');
    let cont = '';
    let total = 0;
    let pages = 0;
    let lastRemaining: number | undefined;
    let countedDown = 0;
    do {
      const r = await raw(
        c,
        'GET',
        `/api/v1/pods?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
      );
      total += r.json.items.length;
      pages++;
      if (lastRemaining !== undefined && r.json.metadata.remainingItemCount !== undefined) {
        expect(r.json.metadata.remainingItemCount).toBe(lastRemaining - 500);
        countedDown++;
      }
      lastRemaining = r.json.metadata.remainingItemCount;
      cont = r.json.metadata.continue ?? '';
    } while (cont);
    expect(total).toBe(50_000);
    // Every page but the first and the last (which has none) counted down.
    expect(countedDown).toBe(pages - 2);
    expect(pages).toBe(100);
  });

  it('finds a node’s pods through the spec.nodeName index', async () => {
    const node = sim.cluster('big').store.list('nodes')[1234].metadata.name;
    const r = await raw(sim.cluster('big'), 'GET', `/api/v1/pods?fieldSelector=spec.nodeName%3D${node}`);
    expect(r.json.items).toHaveLength(10);
  });

  it('serves PodMetrics and NodeMetrics for the whole cluster in one list each', async () => {
    const c = sim.cluster('big');
    const pods = await raw(c, 'GET', '/apis/metrics.k8s.io/v1beta1/pods');
    expect(pods.json.items).toHaveLength(50_000);
    expect(pods.json.metadata.continue).toBeUndefined();
    const ns = await raw(
      c,
      'GET',
      '/apis/metrics.k8s.io/v1beta1/namespaces/monitoring/pods?labelSelector=app.kubernetes.io%2Fname%3Dds-7',
    );
    expect(ns.json.items).toHaveLength(NODES);
    const nodes = await raw(c, 'GET', '/apis/metrics.k8s.io/v1beta1/nodes?limit=10');
    expect(nodes.json.items).toHaveLength(NODES);
  });
});
