/**
 * The order in which the kubelet retries Deferred resizes when room appears (1.34+ sortPendingResizes,
 * facts 1.6): higher priority first, then Guaranteed before Burstable, and only then the longest
 * pending. Each node below frees room for exactly one of two Deferred upsizes, the older one losing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import {
  condition,
  createPod,
  createPriorityClass,
  deletePod,
  getPod,
  resizePod,
  workloadPod,
} from './pod-helpers.js';

let sim: Simulator;
let c: SimCluster;

beforeAll(async () => {
  sim = await startSimulator({ clusters: [{ name: 'order', nodes: 0 }] });
  c = sim.cluster('order');
  c.addNode({ name: 'n1', cpu: '2', memory: '4Gi' });
  c.addNode({ name: 'n2', cpu: '2', memory: '4Gi' });
  await createPriorityClass(c, 'mid', 1000);
});
afterAll(async () => {
  await sim?.stop();
});

const pending = async (name: string) => condition(await getPod(c, name), 'PodResizePending');

/** 1900m of 2000m taken on the node: two 500m pods to grow by 300m each, and 400m + 500m of filler. */
async function fill(
  node: string,
  first: Parameters<typeof workloadPod>[1],
  second: Parameters<typeof workloadPod>[1],
) {
  await createPod(c, workloadPod(`${node}-first`, { node, cpu: '500m', memory: '64Mi', ...first }));
  await createPod(c, workloadPod(`${node}-second`, { node, cpu: '500m', memory: '64Mi', ...second }));
  await createPod(c, workloadPod(`${node}-f1`, { node, cpu: '400m', memory: '64Mi' }));
  await createPod(c, workloadPod(`${node}-f2`, { node, cpu: '500m', memory: '64Mi' }));
}

describe('retrying Deferred resizes', () => {
  it('gives freed room to the higher priority pod, though it was deferred later', async () => {
    await fill('n1', {}, { priorityClassName: 'mid' });
    await resizePod(c, 'n1-first', { cpu: '800m', memory: '64Mi' });
    await resizePod(c, 'n1-second', { cpu: '800m', memory: '64Mi' });
    expect(await pending('n1-first')).toMatch(/^True Deferred/);
    expect(await pending('n1-second')).toMatch(/^True Deferred/);
    await deletePod(c, 'n1-f1');
    expect(await pending('n1-second')).toBeUndefined();
    expect(await pending('n1-first')).toBe(
      "True Deferred: Node didn't have enough resource: cpu, requested: 800, used: 1300, capacity: 2000",
    );
  });

  it('at equal priority, gives it to the Guaranteed pod before the Burstable one', async () => {
    const guaranteed = { limits: { cpu: '500m', memory: '64Mi' } };
    await fill('n2', {}, guaranteed);
    expect((await getPod(c, 'n2-second')).status.qosClass).toBe('Guaranteed');
    await resizePod(c, 'n2-first', { cpu: '800m', memory: '64Mi' });
    await resizePod(c, 'n2-second', { cpu: '800m', memory: '64Mi' }, { cpu: '800m', memory: '64Mi' });
    expect(await pending('n2-first')).toMatch(/^True Deferred/);
    expect(await pending('n2-second')).toMatch(/^True Deferred/);
    await deletePod(c, 'n2-f1');
    expect(await pending('n2-second')).toBeUndefined();
    expect(await pending('n2-first')).toMatch(/^True Deferred/);
  });

  it('writes nothing when a retried resize is still Deferred for the same reason (no watch event)', async () => {
    c.addNode({ name: 'n3', cpu: '2', memory: '4Gi' });
    await createPod(c, workloadPod('n3-grow', { node: 'n3', cpu: '500m', memory: '64Mi' }));
    await createPod(c, workloadPod('n3-fill', { node: 'n3', cpu: '1400m', memory: '64Mi' }));
    await resizePod(c, 'n3-grow', { cpu: '800m', memory: '64Mi' });
    const deferred = await getPod(c, 'n3-grow');
    expect(condition(deferred, 'PodResizePending')).toMatch(/^True Deferred/);
    // The kubelet retries on every clock tick; the status it would write is the one the pod has,
    // which its status manager does not write again.
    sim.clock.advance(60_000);
    sim.clock.advance(60_000);
    const after = await getPod(c, 'n3-grow');
    expect(condition(after, 'PodResizePending')).toMatch(/^True Deferred/);
    expect(after.metadata.resourceVersion).toBe(deferred.metadata.resourceVersion);
  });
});
