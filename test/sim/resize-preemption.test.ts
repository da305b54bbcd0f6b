/**
 * KEP-5836 on a 1.37 server (resize-preemption.ts): the node field `spec.podPreemptionPolicy.
 * disableResizePreemption` served in the OpenAPI and validated (a set of label keys, at most 20); the
 * scheduler preempting a lower-priority pod so that a Deferred resize completes; a node that opted out
 * keeps the resize Deferred, with the kubelet's PodResizePreemptionDisabled condition. On 1.35 none of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { raw } from './helpers.js';
import {
  condition,
  createPod,
  createPriorityClass,
  getPod,
  podExists,
  resizePod,
  workloadPod,
} from './pod-helpers.js';

let sim: Simulator;
let c: SimCluster;
let old: SimCluster;
let gateOff: SimCluster;

const patchNode = (cl: SimCluster, name: string, keys: unknown) =>
  raw(cl, 'PATCH', `/api/v1/nodes/${name}`, {
    body: { spec: { podPreemptionPolicy: { disableResizePreemption: keys } } },
    contentType: 'application/merge-patch+json',
  });

beforeAll(async () => {
  sim = await startSimulator({
    clusters: [
      { name: 'v137', nodes: 0, kubernetesVersion: '1.37.0' },
      { name: 'v135', nodes: 0 },
      { name: 'v137off', nodes: 0, kubernetesVersion: '1.37.0', resizePreemptionGate: false },
    ],
  });
  gateOff = sim.cluster('v137off');
  gateOff.addNode({ name: 'n1', cpu: '2', memory: '4Gi' });
  c = sim.cluster('v137');
  old = sim.cluster('v135');
  for (const n of ['n1', 'n2']) c.addNode({ name: n, cpu: '2', memory: '4Gi' });
  old.addNode({ name: 'n1', cpu: '2', memory: '4Gi' });
  await createPriorityClass(c, 'low', 100);
  await createPriorityClass(c, 'high', 1000);
});
afterAll(async () => {
  await sim?.stop();
});

const nodeSpecSchema = async (cl: SimCluster) =>
  (await raw(cl, 'GET', '/openapi/v3/api/v1')).json.components.schemas['io.k8s.api.core.v1.NodeSpec'];

describe('KEP-5836 on 1.37', () => {
  it('serves the node field in its OpenAPI; 1.35 does not, and prunes it from writes', async () => {
    expect((await nodeSpecSchema(c)).properties.podPreemptionPolicy).toBeDefined();
    expect((await nodeSpecSchema(old)).properties.podPreemptionPolicy).toBeUndefined();
    expect((await patchNode(old, 'n1', ['fleetscope.io/balloons'])).status).toBe(200);
    expect(old.store.get('nodes', 'n1').spec.podPreemptionPolicy).toBeUndefined();
  });

  it('with the alpha gate off (a real 1.37 default): the OpenAPI shows the field, writes drop it', async () => {
    expect((await nodeSpecSchema(gateOff)).properties.podPreemptionPolicy).toBeDefined();
    expect((await patchNode(gateOff, 'n1', ['fleetscope.io/balloons'])).status).toBe(200);
    expect(gateOff.store.get('nodes', 'n1').spec.podPreemptionPolicy).toBeUndefined();
  });

  it('validates the field: label keys, no duplicates, at most 20', async () => {
    const many = Array.from({ length: 21 }, (_, i) => `example.com/k${i}`);
    const tooMany = await patchNode(c, 'n2', many);
    expect(tooMany.status).toBe(422);
    expect(tooMany.json.message).toMatch(/disableResizePreemption: Too many: must have at most 20 items/);
    const bad = await patchNode(c, 'n2', ['Not A Key']);
    expect([bad.status, bad.json.details.causes[0].field]).toEqual([
      422,
      'spec.podPreemptionPolicy.disableResizePreemption[0]',
    ]);
    expect((await patchNode(c, 'n2', ['a/b', 'a/b'])).status).toBe(422);
    expect((await patchNode(c, 'n2', ['fleetscope.io/balloons'])).status).toBe(200);
    expect(c.store.get('nodes', 'n2').spec.podPreemptionPolicy.disableResizePreemption).toEqual([
      'fleetscope.io/balloons',
    ]);
  });

  it('the scheduler preempts a lower-priority pod so a Deferred resize completes', async () => {
    await createPod(
      c,
      workloadPod('victim', { node: 'n1', cpu: '800m', memory: '64Mi', priorityClassName: 'low' }),
    );
    await createPod(
      c,
      workloadPod('grower', { node: 'n1', cpu: '500m', memory: '64Mi', priorityClassName: 'high' }),
    );
    await resizePod(c, 'grower', { cpu: '1500m', memory: '64Mi' });
    expect(await podExists(c, 'victim')).toBe(false);
    const g = await getPod(c, 'grower');
    expect(condition(g, 'PodResizePending')).toBeUndefined();
    expect(g.status.containerStatuses[0].allocatedResources.cpu).toBe('1500m');
  });

  it('a node that opted out keeps the resize Deferred, and the kubelet says why', async () => {
    await createPod(
      c,
      workloadPod('stays', { node: 'n2', cpu: '800m', memory: '64Mi', priorityClassName: 'low' }),
    );
    await createPod(
      c,
      workloadPod('waits', { node: 'n2', cpu: '500m', memory: '64Mi', priorityClassName: 'high' }),
    );
    await resizePod(c, 'waits', { cpu: '1500m', memory: '64Mi' });
    expect(await podExists(c, 'stays')).toBe(true);
    const w = await getPod(c, 'waits');
    expect(condition(w, 'PodResizePending')).toMatch(/^True Deferred/);
    expect(condition(w, 'PodResizePreemptionDisabled')).toMatch(
      /^True PreemptionDisabledByNodePolicy: resize preemption is disabled on the node by: fleetscope.io\/balloons/,
    );
  });

  it("the kubelet's critical-pod preemption for a resize honours the opt-out too", async () => {
    for (const n of ['n3', 'n4']) c.addNode({ name: n, cpu: '2', memory: '4Gi' });
    expect((await patchNode(c, 'n3', ['fleetscope.io/balloons'])).status).toBe(200);
    for (const n of ['n3', 'n4']) {
      await createPod(
        c,
        workloadPod(`low-${n}`, { node: n, cpu: '800m', memory: '64Mi', priorityClassName: 'low' }),
      );
      await createPod(
        c,
        workloadPod(`critical-${n}`, {
          node: n,
          cpu: '500m',
          memory: '64Mi',
          priorityClassName: 'system-node-critical',
        }),
      );
      await resizePod(c, `critical-${n}`, { cpu: '1500m', memory: '64Mi' });
    }
    expect(await podExists(c, 'low-n3')).toBe(true);
    expect(condition(await getPod(c, 'critical-n3'), 'PodResizePending')).toMatch(/^True Deferred/);
    // without the opt-out the critical pod's resize takes the room
    const lowN4 = (await podExists(c, 'low-n4')) ? (await getPod(c, 'low-n4')).status.phase : 'Gone';
    expect(lowN4).not.toBe('Running');
    expect(condition(await getPod(c, 'critical-n4'), 'PodResizePending')).toBeUndefined();
  });
});
