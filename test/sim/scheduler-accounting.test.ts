/**
 * How the scheduler counts a pod whose resize is pending (KEP-1287, facts 1.6): a Deferred upsize
 * reserves its larger request at once, so new pods stop landing although the kubelet never grew the
 * pod; reverting it frees the room at once; an Infeasible upsize reserves nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { condition, createPod, getPod, podView, resizePod, workloadPod } from './pod-helpers.js';

let sim: Simulator;
let c: SimCluster;

beforeAll(async () => {
  sim = await startSimulator({ clusters: [{ name: 'acct', nodes: 0 }] });
  c = sim.cluster('acct');
  c.addNode({ name: 'n1', cpu: '2', memory: '4Gi' });
  // 1500m of 2000m requested: 500m left for newcomers.
  await createPod(c, workloadPod('a', { cpu: '500m', memory: '64Mi' }));
  await createPod(c, workloadPod('b', { cpu: '1', memory: '64Mi' }));
});
afterAll(async () => {
  await sim?.stop();
});

describe('scheduler accounting while a resize is pending', () => {
  it('counts a Deferred upsize at its desired size: new pods stop landing', async () => {
    await resizePod(c, 'a', { cpu: '1200m', memory: '64Mi' });
    const a = await getPod(c, 'a');
    expect(condition(a, 'PodResizePending')).toBe(
      "True Deferred: Node didn't have enough resource: cpu, requested: 1200, used: 1000, capacity: 2000",
    );
    expect(podView(a).cpu).toEqual({ spec: '1200m', allocated: '500m', actual: '500m' });
    // 100m would fit beside what the kubelet has allocated (1500m), not beside what is reserved (2200m).
    const late = await createPod(c, workloadPod('late', { cpu: '100m' }));
    expect(podView(late)).toMatchObject({ phase: 'Pending', node: undefined });
    expect(condition(late, 'PodScheduled')).toBe(
      'False Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    );
  });

  it('frees the room at once when the Deferred upsize is reverted', async () => {
    await resizePod(c, 'a', { cpu: '500m', memory: '64Mi' });
    const a = await getPod(c, 'a');
    expect(condition(a, 'PodResizePending')).toBeUndefined();
    expect(condition(a, 'PodResizeInProgress')).toBeUndefined();
    expect(podView(await getPod(c, 'late'))).toMatchObject({ phase: 'Running', node: 'n1' });
  });

  it('does not count an Infeasible upsize', async () => {
    await resizePod(c, 'a', { cpu: '3', memory: '64Mi' });
    expect(condition(await getPod(c, 'a'), 'PodResizePending')).toBe(
      "True Infeasible: Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000",
    );
    // 1600m requested by a, b and late: 300m fits only if a's 3 CPUs are not counted.
    const next = await createPod(c, workloadPod('next', { cpu: '300m' }));
    expect(podView(next)).toMatchObject({ phase: 'Running', node: 'n1' });
  });
});
