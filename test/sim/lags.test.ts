/**
 * Components that answer late (SimClusterSpec.lags), each timed on the simulated clock: a pod bound by
 * the scheduler is admitted by its kubelet later; a resize is answered later; a deleted daemon pod is
 * recreated later. With no lags each happens at once (every other simulator test).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { condition, createPod, deletePod, getPod, resizePod, workloadPod } from './pod-helpers.js';

let sim: Simulator;
let c: SimCluster;

beforeAll(async () => {
  sim = await startSimulator({
    clusters: [
      {
        name: 'late',
        nodes: 0,
        lags: { admitMs: 2_000, resizeMs: 5_000, daemonSetMs: 30_000 },
        daemonSets: [{ name: 'agent', containers: [{ name: 'a', requests: { cpu: '10m', memory: '8Mi' } }] }],
      },
    ],
  });
  c = sim.cluster('late');
  c.addNode({ name: 'n1', cpu: '2', memory: '4Gi' });
  sim.clock.advance(30_000); // the agent's pod on the new node, created late
});
afterAll(async () => {
  await sim?.stop();
});

describe('lagging components', () => {
  it('the scheduler binds at once; the kubelet admits the pod admitMs later', async () => {
    const bound = await createPod(c, workloadPod('p', { cpu: '500m', memory: '64Mi' }));
    expect(bound.spec.nodeName).toBe('n1');
    expect(bound.status.phase).toBe('Pending');
    expect(condition(bound, 'PodScheduled')).toMatch(/^True/);
    sim.clock.advance(1_999);
    expect((await getPod(c, 'p')).status.phase).toBe('Pending');
    sim.clock.advance(1);
    expect((await getPod(c, 'p')).status.phase).toBe('Running');
  });

  it('a resize is answered resizeMs later, against the node as it is then', async () => {
    await resizePod(c, 'p', { cpu: '3', memory: '64Mi' });
    expect(condition(await getPod(c, 'p'), 'PodResizePending')).toBeUndefined();
    sim.clock.advance(5_000);
    expect(condition(await getPod(c, 'p'), 'PodResizePending')).toMatch(/^True Infeasible/);
    await resizePod(c, 'p', { cpu: '700m', memory: '64Mi' });
    sim.clock.advance(5_000);
    const done = await getPod(c, 'p');
    expect(condition(done, 'PodResizePending')).toBeUndefined();
    expect(done.status.containerStatuses[0].allocatedResources.cpu).toBe('700m');
  });

  it('takes admissions and resizes in the order they came: the earlier binding wins the room', async () => {
    await createPod(c, workloadPod('q', { cpu: '1', memory: '64Mi' }));
    // q is bound to n1 (1290m free) and admitted at +2s; p's upsize into the same room is answered at +5s
    await resizePod(c, 'p', { cpu: '1500m', memory: '64Mi' });
    sim.clock.advance(5_000);
    const q = await getPod(c, 'q');
    expect([q.spec.nodeName, q.status.phase]).toEqual(['n1', 'Running']);
    expect(condition(await getPod(c, 'p'), 'PodResizePending')).toMatch(/^True Deferred/);
    await deletePod(c, 'q');
  });

  it('the DaemonSet controller recreates a deleted pod daemonSetMs later', async () => {
    const agent = c.store.list('pods', 'kube-system').find((p) => p.metadata.name.startsWith('agent-'));
    expect(agent?.status.phase).toBe('Running');
    await deletePod(c, agent.metadata.name, 'kube-system');
    const agents = () =>
      c.store.list('pods', 'kube-system').filter((p) => p.metadata.name.startsWith('agent-'));
    sim.clock.advance(29_999);
    expect(agents()).toHaveLength(0);
    sim.clock.advance(1);
    expect(agents()).toHaveLength(1);
  });
});
