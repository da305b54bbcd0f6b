/**
 * Node allocatable changed at run time (hotplug, KEP-3953, or a VM resize), and nodes added and removed,
 * through SimCluster and the authenticated /_sim/nodes endpoints: the change is an ordinary store write
 * (new resourceVersion, a watch event); the kubelet retries Deferred resizes and the scheduler pending
 * pods; a shrink below what is allocated evicts nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { raw } from './helpers.js';
import { condition, createPod, getPod, podExists, podView, resizePod, workloadPod } from './pod-helpers.js';

let sim: Simulator;
let c: SimCluster;

beforeAll(async () => {
  sim = await startSimulator({ clusters: [{ name: 'cap', nodes: 0 }] });
  c = sim.cluster('cap');
  c.addNode({ name: 'n1', cpu: '2', memory: '4Gi' });
  await createPod(c, workloadPod('a', { cpu: '500m' }));
  await createPod(c, workloadPod('b', { cpu: '1' }));
});
afterAll(async () => {
  await sim?.stop();
});

describe('growing a node', () => {
  it('retries Deferred resizes and pending pods (over HTTP, as a watch sees it)', async () => {
    await resizePod(c, 'a', { cpu: '1200m' });
    expect(condition(await getPod(c, 'a'), 'PodResizePending')).toMatch(/^True Deferred: /);
    const waiting = await createPod(c, workloadPod('waiting', { cpu: '400m' }));
    expect(podView(waiting).phase).toBe('Pending');
    const before = (await raw(c, 'GET', '/api/v1/nodes/n1')).json;
    expect(
      (await raw(c, 'POST', '/_sim/nodes/n1/capacity', { token: 'wrong', body: { cpu: '4' } })).status,
    ).toBe(401);
    const r = await raw(c, 'POST', '/_sim/nodes/n1/capacity', { body: { cpu: '4' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.status.capacity).toMatchObject({ cpu: '4', memory: '4Gi' });
    expect(r.json.status.allocatable).toMatchObject({ cpu: '4', memory: '4Gi' });
    const a = await getPod(c, 'a');
    expect(condition(a, 'PodResizePending')).toBeUndefined();
    expect(podView(a).cpu?.allocated).toBe('1200m');
    expect(podView(await getPod(c, 'waiting'))).toMatchObject({ phase: 'Running', node: 'n1' });
    const w = await raw(
      c,
      'GET',
      `/api/v1/nodes?watch=true&timeoutSeconds=1&resourceVersion=${before.metadata.resourceVersion}`,
    );
    const events = w.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e) => `${e.type} ${e.object.status.allocatable.cpu}`)).toEqual(['MODIFIED 4']);
    expect(Number(events[0].object.metadata.resourceVersion)).toBeGreaterThan(
      Number(before.metadata.resourceVersion),
    );
  });

  it('keeps the node reservation: allocatable is capacity less what the kubelet reserves', () => {
    c.addNode({ name: 'n2', cpu: '2', memory: '4Gi', reserved: { cpu: '100m', memory: '256Mi' } });
    const n2 = c.setNodeCapacity('n2', { cpu: '3', memory: '8Gi' });
    expect(n2.status.capacity).toMatchObject({ cpu: '3', memory: '8Gi', pods: '110' });
    expect(n2.status.allocatable).toMatchObject({ cpu: '2900m', memory: '7936Mi', pods: '110' });
    expect(c.removeNode('n2')).toBe(true);
    expect(c.removeNode('n2')).toBe(false);
  });
});

describe('shrinking a node', () => {
  it('evicts nothing, refuses new pods and makes a larger resize Infeasible', async () => {
    const node = c.setNodeCapacity('n1', { cpu: '1' });
    expect(node.status.allocatable.cpu).toBe('1');
    for (const name of ['a', 'b', 'waiting']) expect(podView(await getPod(c, name)).phase).toBe('Running');
    const extra = await createPod(c, workloadPod('extra', { cpu: '100m' }));
    expect(condition(extra, 'PodScheduled')).toBe(
      'False Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    );
    await resizePod(c, 'b', { cpu: '1100m' });
    expect(condition(await getPod(c, 'b'), 'PodResizePending')).toBe(
      "True Infeasible: Node didn't have enough capacity: cpu, requested: 1100, capacity: 1000",
    );
  });

  it('counts pods against the pods capacity (Too many pods)', async () => {
    c.setNodeCapacity('n1', { cpu: '8', pods: 4 });
    // a, b, waiting and now extra: four pods, the node's limit.
    expect(podView(await getPod(c, 'extra')).phase).toBe('Running');
    const fifth = await createPod(c, workloadPod('fifth', { cpu: '100m' }));
    expect(condition(fifth, 'PodScheduled')).toBe(
      'False Unschedulable: 0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    );
  });
});

describe('nodes added and removed over HTTP', () => {
  it('binds pending pods to a new node, and garbage-collects its pods when it goes', async () => {
    const bad = await raw(c, 'POST', '/_sim/nodes', { body: { name: 'n3', cpu: 'lots', memory: '4Gi' } });
    expect(bad.status).toBe(400);
    const r = await raw(c, 'POST', '/_sim/nodes', { body: { name: 'n3', cpu: '2', memory: '4Gi' } });
    expect(r.status, r.text).toBe(201);
    expect(r.json.metadata.uid).toBeTruthy();
    expect(
      (await raw(c, 'POST', '/_sim/nodes', { body: { name: 'n3', cpu: '2', memory: '4Gi' } })).status,
    ).toBe(409);
    expect(podView(await getPod(c, 'fifth'))).toMatchObject({ phase: 'Running', node: 'n3' });
    expect((await raw(c, 'DELETE', '/_sim/nodes/n3')).status).toBe(200);
    expect(await podExists(c, 'fifth')).toBe(false);
    expect((await raw(c, 'DELETE', '/_sim/nodes/n3')).status).toBe(404);
    expect((await raw(c, 'POST', '/_sim/nodes/nope/capacity', { body: { cpu: '1' } })).status).toBe(404);
  });
});
