/**
 * The simulated kube-scheduler over real HTTP: pods without nodeName bound to the least allocated node
 * that passes the filters (unschedulable, taints, nodeSelector, required node affinity, requests),
 * pods that fit nowhere left Pending with PodScheduled=False and the real FitError message, pending
 * pods retried when room frees, and DaemonSet pods created at run time going through the scheduler.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { raw } from './helpers.js';
import {
  condition,
  createPod,
  createPriorityClass,
  deletePod,
  getPod,
  listPods,
  podExists,
  podView,
  workloadPod,
} from './pod-helpers.js';

let sim: Simulator;
let c: SimCluster;
const TAINT = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' as const };
const TOLERATE = [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }];

beforeAll(async () => {
  sim = await startSimulator({
    clusters: [
      { name: 'place', nodes: 0 },
      { name: 'v133', nodes: 0, kubernetesVersion: '1.33.5' },
      { name: 'off', nodes: 0, controllers: false },
      { name: 'queue', nodes: 0 },
    ],
  });
  c = sim.cluster('place');
  c.addNode({ name: 'a', cpu: '2', memory: '4Gi', labels: { zone: 'a', disk: 'ssd' } });
  c.addNode({ name: 'b', cpu: '2', memory: '4Gi', labels: { zone: 'b' } });
  c.addNode({ name: 'c', cpu: '4', memory: '8Gi', labels: { zone: 'c' }, taints: [TAINT] });
});
afterAll(async () => {
  await sim?.stop();
});

const placed = async (name: string, o: Parameters<typeof workloadPod>[1]) => {
  const p = await createPod(c, workloadPod(name, { cpu: '100m', ...o }));
  expect(p.status.phase, JSON.stringify(p.status)).toBe('Running');
  return p.spec.nodeName;
};

describe('binding', () => {
  it('binds a pod without nodeName to the least allocated node that fits; the kubelet runs it', async () => {
    const p1 = await createPod(c, workloadPod('p1', { cpu: '500m', memory: '256Mi' }));
    expect(podView(p1)).toMatchObject({ phase: 'Running', node: 'a' });
    expect(condition(p1, 'PodScheduled')).toBe('True');
    // a now holds 500m, so b (equally sized, empty) is less allocated; c is tainted.
    const p2 = await createPod(c, workloadPod('p2', { cpu: '500m', memory: '256Mi' }));
    expect(podView(p2)).toMatchObject({ phase: 'Running', node: 'b' });
  });

  it('applies nodeSelector, required node affinity, matchFields and taints', async () => {
    const term = (matchExpressions: object[]) => ({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions }] },
      },
    });
    expect(await placed('sel', { nodeSelector: { zone: 'b' } })).toBe('b');
    expect(
      await placed('in', {
        affinity: term([{ key: 'zone', operator: 'In', values: ['c'] }]),
        tolerations: TOLERATE,
      }),
    ).toBe('c');
    expect(
      await placed('notin', {
        affinity: term([{ key: 'zone', operator: 'NotIn', values: ['a', 'b'] }]),
        tolerations: TOLERATE,
      }),
    ).toBe('c');
    expect(await placed('exists', { affinity: term([{ key: 'disk', operator: 'Exists' }]) })).toBe('a');
    expect(await placed('absent', { affinity: term([{ key: 'disk', operator: 'DoesNotExist' }]) })).toBe('b');
    const byName = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] }],
        },
      },
    };
    expect(await placed('field', { affinity: byName })).toBe('a');
  });

  it('keeps off an unschedulable node unless the pod tolerates it, and GCs pods of a removed node', async () => {
    c.addNode({ name: 'd', cpu: '8', memory: '16Gi', labels: { zone: 'd' }, unschedulable: true });
    const p = await createPod(c, workloadPod('cordoned', { cpu: '100m', nodeSelector: { zone: 'd' } }));
    expect(podView(p)).toMatchObject({ phase: 'Pending', node: undefined });
    expect(condition(p, 'PodScheduled')).toBe(
      "False Unschedulable: 0/4 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
    );
    const tolerant = [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }];
    expect(await placed('tolerant', { nodeSelector: { zone: 'd' }, tolerations: tolerant })).toBe('d');
    await deletePod(c, 'cordoned');
    expect(c.removeNode('d')).toBe(true);
    expect(await podExists(c, 'tolerant')).toBe(false);
  });
});

describe('pods that fit nowhere', () => {
  it('stay Pending with PodScheduled=False, reason Unschedulable and the FitError message', async () => {
    const huge = await createPod(c, workloadPod('huge', { cpu: '3' }));
    expect(podView(huge)).toMatchObject({ phase: 'Pending', node: undefined });
    // 1.34+ (kubernetes#131345): nodes smaller than the pod even empty are no preemption candidates.
    expect(condition(huge, 'PodScheduled')).toBe(
      'False Unschedulable: 0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
    );
    const fat = await createPod(c, workloadPod('fat', { memory: '5Gi', tolerations: TOLERATE }));
    expect(podView(fat).node).toBe('c');
    const fatter = await createPod(
      c,
      workloadPod('fatter', { cpu: '100m', memory: '9Gi', tolerations: TOLERATE }),
    );
    expect(condition(fatter, 'PodScheduled')).toMatch(
      /^False Unschedulable: 0\/3 nodes are available: 3 Insufficient memory\./,
    );
    await deletePod(c, 'huge');
    await deletePod(c, 'fatter');
  });

  it('are bound as soon as a deletion frees room', async () => {
    // a and b each hold 700m of 2 CPUs: 1500m fits on neither, and c is tainted.
    const waiter = await createPod(c, workloadPod('waiter', { cpu: '1500m' }));
    expect(podView(waiter).phase).toBe('Pending');
    await deletePod(c, 'p2');
    expect(podView(await getPod(c, 'waiter'))).toMatchObject({ phase: 'Running', node: 'b' });
    expect(condition(await getPod(c, 'waiter'), 'PodScheduled')).toBe('True');
  });

  it('name the taint before 1.34, and say no nodes are available on an empty cluster', async () => {
    const old = sim.cluster('v133');
    const lonely = await createPod(old, workloadPod('lonely', { cpu: '100m' }));
    expect(condition(lonely, 'PodScheduled')).toBe(
      'False Unschedulable: no nodes available to schedule pods',
    );
    old.addNode({ name: 'g', cpu: '2', memory: '4Gi', taints: [TAINT] });
    expect(condition(await getPod(old, 'lonely'), 'PodScheduled')).toBe(
      'False Unschedulable: 0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
    );
  });

  it('are left alone without controllers (no scheduler), as before', async () => {
    const off = sim.cluster('off');
    off.addNode({ name: 'n', cpu: '2', memory: '4Gi' });
    // No controller-manager either: the ServiceAccount admission needs a hand-made default account.
    off.store.put('serviceaccounts', { metadata: { name: 'default', namespace: 'default' } });
    const r = await raw(off, 'POST', '/api/v1/namespaces/default/pods', { body: workloadPod('still') });
    expect(r.status).toBe(201);
    expect(podView(r.json)).toMatchObject({ phase: 'Pending', node: undefined, conditions: {} });
  });
});

describe('DaemonSet pods created at run time', () => {
  it('go through the scheduler: pinned by matchFields, Pending where they do not fit', async () => {
    const r = await raw(c, 'POST', '/apis/apps/v1/namespaces/kube-system/daemonsets', {
      body: {
        metadata: { name: 'agent' },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: {
            metadata: { labels: { app: 'agent' } },
            spec: {
              tolerations: [{ operator: 'Exists' }],
              containers: [{ name: 'agent', image: 'x', resources: { requests: { cpu: '1900m' } } }],
            },
          },
        },
      },
    });
    expect(r.status, r.text).toBe(201);
    const pods = await listPods(c, 'kube-system', 'app=agent');
    expect(pods).toHaveLength(3);
    const running = pods.filter((p) => p.status.phase === 'Running');
    expect(running.map((p) => p.spec.nodeName)).toEqual(['c']);
    const pending = pods.filter((p) => p.status.phase === 'Pending');
    expect(pending).toHaveLength(2);
    for (const p of pending)
      expect(condition(p, 'PodScheduled')).toBe(
        "False Unschedulable: 0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
      );
    // Unbound pods answer the scheduler's own query, spec.nodeName=.
    const unbound = await raw(c, 'GET', '/api/v1/namespaces/kube-system/pods?fieldSelector=spec.nodeName%3D');
    expect(unbound.json.items.map((p: { metadata: { name: string } }) => p.metadata.name).sort()).toEqual(
      pending.map((p) => p.metadata.name).sort(),
    );
    const ds = await raw(c, 'GET', '/apis/apps/v1/namespaces/kube-system/daemonsets/agent');
    expect(ds.json.status).toMatchObject({
      desiredNumberScheduled: 3,
      currentNumberScheduled: 3,
      numberReady: 1,
    });
  });

  it('are not duplicated, and land once their node has room', async () => {
    const onA = (await listPods(c, 'kube-system', 'app=agent')).find(
      (p) =>
        p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]
          .matchFields[0].values[0] === 'a',
    );
    c.setNodeCapacity('a', { cpu: '4' });
    const now = await getPod(c, onA.metadata.name, 'kube-system');
    expect(podView(now)).toMatchObject({ phase: 'Running', node: 'a' });
    expect(await listPods(c, 'kube-system', 'app=agent')).toHaveLength(3);
  });
});

describe('the scheduling queue', () => {
  it('hands freed room to the higher priority pod first, though it came later, and never preempts for it', async () => {
    const q = sim.cluster('queue');
    q.addNode({ name: 'n', cpu: '1', memory: '4Gi' });
    await createPriorityClass(q, 'mid-never', 1000, 'Never');
    await createPod(q, workloadPod('filler', { cpu: '800m' }));
    const older = await createPod(q, workloadPod('older', { cpu: '600m' }));
    const newer = await createPod(q, workloadPod('newer', { cpu: '600m', priorityClassName: 'mid-never' }));
    expect([podView(older).phase, podView(newer).phase]).toEqual(['Pending', 'Pending']);
    expect(condition(newer, 'PodScheduled')).toMatch(
      /preemption: not eligible due to preemptionPolicy=Never\.$/,
    );
    expect(podView(await getPod(q, 'filler')).phase).toBe('Running');
    await deletePod(q, 'filler');
    expect(podView(await getPod(q, 'newer'))).toMatchObject({ phase: 'Running', node: 'n' });
    expect(podView(await getPod(q, 'older')).phase).toBe('Pending');
  });
});
