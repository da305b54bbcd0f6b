/**
 * Scheduler preemption around a balloon-like DaemonSet (KEP-5620 done with today's API: priority 1e9,
 * preemptionPolicy Never, facts 2.2): no pod of priority <= 1e9 can displace the balloon, nor can the
 * balloon displace anything, on upsize or while pending; a system-node-critical pod can preempt it, and
 * its DaemonSet's replacement waits, Pending, until room returns.
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
  podView,
  resizePod,
  workloadPod,
} from './pod-helpers.js';

let sim: Simulator;
let c: SimCluster;
const NS = 'kube-system';

const balloons = () => listPods(c, NS, 'app=balloon');

beforeAll(async () => {
  sim = await startSimulator({ clusters: [{ name: 'pre', nodes: 0 }] });
  c = sim.cluster('pre');
  c.addNode({ name: 'n1', cpu: '2', memory: '4Gi' });
  await createPriorityClass(c, 'balloon', 1_000_000_000, 'Never');
  await createPriorityClass(c, 'user-top', 1_000_000_000);
  await createPriorityClass(c, 'low', 1000);
  const r = await raw(c, 'POST', `/apis/apps/v1/namespaces/${NS}/daemonsets`, {
    body: {
      metadata: { name: 'balloon' },
      spec: {
        selector: { matchLabels: { app: 'balloon' } },
        template: {
          metadata: { labels: { app: 'balloon' } },
          spec: {
            priorityClassName: 'balloon',
            containers: [
              {
                name: 'pause',
                image: 'registry.k8s.io/pause:3.10',
                resources: { requests: { cpu: '1500m', memory: '64Mi' } },
              },
            ],
          },
        },
      },
    },
  });
  expect(r.status, r.text).toBe(201);
  await createPod(c, workloadPod('w', { cpu: '300m', memory: '64Mi' }));
});
afterAll(async () => {
  await sim?.stop();
});

describe('a balloon at priority 1e9 with preemptionPolicy Never', () => {
  it('is scheduled like any DaemonSet pod and carries its class', async () => {
    const [b] = await balloons();
    expect(podView(b)).toMatchObject({ phase: 'Running', node: 'n1' });
    expect(b.spec).toMatchObject({ priority: 1_000_000_000, preemptionPolicy: 'Never' });
    expect(podView(await getPod(c, 'w'))).toMatchObject({ phase: 'Running', node: 'n1' });
  });

  it('does not evict workloads when an upsize does not fit: the kubelet defers it', async () => {
    const [b] = await balloons();
    await resizePod(c, b.metadata.name, { cpu: '1800m', memory: '64Mi' }, undefined, NS, 'pause');
    expect(condition(await getPod(c, b.metadata.name, NS), 'PodResizePending')).toBe(
      "True Deferred: Node didn't have enough resource: cpu, requested: 1800, used: 300, capacity: 2000",
    );
    expect(podView(await getPod(c, 'w')).phase).toBe('Running');
    await resizePod(c, b.metadata.name, { cpu: '1500m', memory: '64Mi' }, undefined, NS, 'pause');
    expect(condition(await getPod(c, b.metadata.name, NS), 'PodResizePending')).toBeUndefined();
  });

  it('cannot be preempted by a pod of priority 1e9 or lower', async () => {
    const top = await createPod(c, workloadPod('top', { cpu: '1', priorityClassName: 'user-top' }));
    // Removing w (priority 0) would not make room: 1500m + 1000m > 2000m. Nothing is deleted.
    expect(condition(top, 'PodScheduled')).toBe(
      'False Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu.',
    );
    const low = await createPod(c, workloadPod('low', { cpu: '1', priorityClassName: 'low' }));
    expect(podView(low).phase).toBe('Pending');
    const [b] = await balloons();
    expect(podView(b).phase).toBe('Running');
    expect(podView(await getPod(c, 'w')).phase).toBe('Running');
    await deletePod(c, 'top');
    await deletePod(c, 'low');
  });

  it('never preempts: a pending pod of its class says so', async () => {
    const p = await createPod(c, workloadPod('never', { cpu: '1', priorityClassName: 'balloon' }));
    expect(condition(p, 'PodScheduled')).toBe(
      'False Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.',
    );
    expect(podView(await getPod(c, 'w')).phase).toBe('Running');
    await deletePod(c, 'never');
  });

  it('is preempted by a system-node-critical pod; its replacement waits for room', async () => {
    const [old] = await balloons();
    const rv = (await raw(c, 'GET', `/api/v1/namespaces/${NS}/pods`)).json.metadata.resourceVersion;
    const crit = await createPod(
      c,
      workloadPod('crit', { cpu: '1', priorityClassName: 'system-node-critical' }),
    );
    expect(crit.spec.priority).toBe(2_000_001_000);
    expect(podView(crit)).toMatchObject({ phase: 'Running', node: 'n1' });
    // Only the balloon goes: giving w (300m) back still leaves room for crit.
    expect(podView(await getPod(c, 'w')).phase).toBe('Running');
    const w = await raw(
      c,
      'GET',
      `/api/v1/namespaces/${NS}/pods?watch=true&timeoutSeconds=1&resourceVersion=${rv}`,
    );
    const events = w.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.object.metadata.name === old.metadata.name);
    expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'DELETED']);
    expect(
      events[0].object.status.conditions.find((x: { type: string }) => x.type === 'DisruptionTarget'),
    ).toMatchObject({
      status: 'True',
      reason: 'PreemptionByScheduler',
      message: 'default-scheduler: preempting to accommodate a higher priority pod',
    });
    const [fresh] = await balloons();
    expect(fresh.metadata.name).not.toBe(old.metadata.name);
    expect(podView(fresh)).toMatchObject({ phase: 'Pending', node: undefined });
    expect(condition(fresh, 'PodScheduled')).toBe(
      'False Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.',
    );
    await deletePod(c, 'crit');
    expect(podView(await getPod(c, fresh.metadata.name, NS))).toMatchObject({ phase: 'Running', node: 'n1' });
  });
});
