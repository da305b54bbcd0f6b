/**
 * A DaemonSet pod gets its priority from admission when it is created, as the real Priority admission
 * plugin gives it: while the template's PriorityClass is gone, the DaemonSet controller's creates are
 * refused ("no PriorityClass with name ... was found") and no pod is made; once the class exists again
 * they pass, at its value. The simulator made such pods at priority 0 (preemptible, PreemptLowerPriority):
 * a state no real cluster reaches, which wedged the default soak's balloons turn-off.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { raw } from './helpers.js';
import { createPriorityClass, listPods } from './pod-helpers.js';

let sim: Simulator;
let c: SimCluster;
const NS = 'kube-system';
const daemons = () => listPods(c, NS, 'app=held');

beforeAll(async () => {
  sim = await startSimulator({ clusters: [{ name: 'prio', nodes: 0 }] });
  c = sim.cluster('prio');
  c.addNode({ name: 'n1', cpu: '2', memory: '4Gi' });
});
afterAll(async () => {
  await sim?.stop();
});

it('makes no pod while its PriorityClass is gone, and pods at its value once it exists', async () => {
  const r = await raw(c, 'POST', `/apis/apps/v1/namespaces/${NS}/daemonsets`, {
    body: {
      metadata: { name: 'held' },
      spec: {
        selector: { matchLabels: { app: 'held' } },
        template: {
          metadata: { labels: { app: 'held' } },
          spec: {
            priorityClassName: 'held',
            containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10' }],
          },
        },
      },
    },
  });
  expect(r.status, r.text).toBe(201);
  expect(await daemons()).toEqual([]);
  await createPriorityClass(c, 'held', 1_000_000_000, 'Never');
  const pods = await daemons();
  expect(pods.map((p) => [p.spec.priority, p.spec.preemptionPolicy])).toEqual([[1_000_000_000, 'Never']]);
});

it('a pod recreated after its class was replaced carries the new class, not the cached one', async () => {
  await raw(c, 'DELETE', '/apis/scheduling.k8s.io/v1/priorityclasses/held');
  await createPriorityClass(c, 'held', 1000, 'PreemptLowerPriority');
  const [old] = await daemons();
  await raw(c, 'DELETE', `/api/v1/namespaces/${NS}/pods/${old.metadata.name}?gracePeriodSeconds=0`);
  const pods = await daemons();
  expect(pods.map((p) => [p.spec.priority, p.spec.preemptionPolicy])).toEqual([
    [1000, 'PreemptLowerPriority'],
  ]);
});

it('at start-up too: a declared DaemonSet whose class is not there gets its pods once the class is created', async () => {
  const s = await startSimulator({
    clusters: [
      {
        name: 'boot',
        nodes: 2,
        daemonSets: [{ name: 'late', priorityClassName: 'late', containers: [{ name: 'pause' }] }],
      },
    ],
  });
  try {
    const b = s.cluster('boot');
    const lates = async () =>
      (await listPods(b, 'kube-system')).filter((p) => p.metadata.name.startsWith('late-'));
    expect(await lates()).toEqual([]);
    await createPriorityClass(b, 'late', 1000, 'PreemptLowerPriority');
    expect((await lates()).map((p) => p.spec.priority)).toEqual([1000, 1000]);
  } finally {
    await s.stop();
  }
});
