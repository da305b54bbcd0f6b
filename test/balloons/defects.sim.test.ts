/**
 * Issue 15's defects found from outside, each reproduced over the simulator first: a pod taken as a
 * balloon by its label alone; other pods' occupancy undercounted (sidecars, init containers, overhead,
 * pod-level resources, nominated pods); a Deferred inflate reverted only when fleetscope remembered
 * writing it; stale resize conditions believed; the PriorityClass half kept; a node whose allocatable
 * fell below what is requested.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Amounts, amounts, sub } from '../../shared/balloons/amounts.js';
import { BALLOON_NAMESPACE, PRIORITY_CLASS } from '../../shared/balloons/manifests.js';
import { BALLOON_FLOOR } from '../../shared/balloons/sizing.js';
import { parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { raw } from '../sim/helpers.js';
import { type BalloonEnv, balloonOn, nodesOf, podPhase, startBalloonEnv, workload } from './helpers.js';

const GI = 2 ** 30;
const explicit = (node: string, size: Amounts) => ({ node, size, requestedAt: 0, via: 'test' });
const PAUSE = 'registry.k8s.io/pause:3.10';

async function patch(env: BalloonEnv, path: string, body: object, type = 'application/merge-patch+json') {
  const res = await raw(env.sim.cluster(env.cluster), 'PATCH', path, { body, contentType: type });
  if (res.status >= 300) throw new Error(`PATCH ${path}: ${res.status} ${res.text}`);
  return res.json;
}

const podPath = (ns: string, name: string, sub = '') =>
  `/api/v1/namespaces/${ns}/pods/${name}${sub ? `/${sub}` : ''}`;

async function sized(env: BalloonEnv, node: string, size: Amounts) {
  await env.store.putRequest(env.cluster, explicit(node, size));
  await env.cycle();
  await env.cycle();
}

async function events(env: BalloonEnv, reason: string) {
  const list = await env.core.listNamespacedEvent({ namespace: BALLOON_NAMESPACE });
  return list.items.filter((e) => e.reason === reason);
}

describe('issue 15 defects, over the simulator', () => {
  let env: BalloonEnv;
  beforeEach(async () => {
    env = await startBalloonEnv();
  });
  afterEach(async () => env.stop());

  it('1. a labelled pod that fleetscope does not own is a workload: never resized, reported as an impostor', async () => {
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, amounts(1000, 2 * GI));
    for (const [namespace, name] of [
      ['default', 'fake'],
      [BALLOON_NAMESPACE, 'fake-in-ns'],
    ] as const)
      await env.core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name, labels: { 'fleetscope.io/balloon': 'true' } },
          spec: {
            nodeName: n1!.name,
            containers: [
              { name: 'balloon', image: PAUSE, resources: { requests: { cpu: '100m', memory: '128Mi' } } },
            ],
          },
        },
      });
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(2000, 4 * GI)));
    const r = await env.cycle();
    for (const [ns, name] of [
      ['default', 'fake'],
      [BALLOON_NAMESPACE, 'fake-in-ns'],
    ]) {
      const p = await env.core.readNamespacedPod({ namespace: ns!, name: name! });
      expect(p.spec?.containers[0]?.resources?.requests).toEqual({ cpu: '100m', memory: '128Mi' });
      expect(p.metadata?.generation ?? 1).toBe(1);
    }
    expect(r.impostors.map((p) => `${p.namespace}/${p.name}`).sort()).toEqual([
      'default/fake',
      `${BALLOON_NAMESPACE}/fake-in-ns`,
    ]);
    expect((await env.store.state(env.cluster))?.impostors?.length).toBe(2);
    const ev = await events(env, 'BalloonImpostor');
    expect(ev.map((e) => e.message).join()).toMatch(/default\/fake/);
    // the real balloon is sized, the impostors counted as workloads (their requests are load)
    const d = r.decisions.find((x) => x.node === n1!.name)!;
    expect(d.balloon?.namespace).toBe(BALLOON_NAMESPACE);
    expect(d.balloon?.name).not.toMatch(/^fake/);
    expect(d.state.workloads.cpu).toBeGreaterThanOrEqual(200);
    const real = await env.core.readNamespacedPod({ namespace: BALLOON_NAMESPACE, name: d.balloon!.name });
    const { cpu, memory } = real.spec!.containers[0]!.resources!.requests!;
    expect(amounts(parseCpu(cpu!), parseMemory(memory!))).toEqual(
      sub(n1!.allocatable, amounts(2000, 4 * GI)),
    );
  });

  it('1. a copy of the balloon DaemonSet in another namespace makes impostors, not balloons', async () => {
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, amounts(1000, 2 * GI));
    const labels = { app: 'copy', 'fleetscope.io/balloon': 'true' };
    await env.client.apps.createNamespacedDaemonSet({
      namespace: 'default',
      body: {
        metadata: { name: 'fleetscope-balloon' },
        spec: {
          selector: { matchLabels: { app: 'copy' } },
          template: {
            metadata: { labels },
            spec: {
              containers: [
                { name: 'balloon', image: PAUSE, resources: { requests: { cpu: '100m', memory: '128Mi' } } },
              ],
            },
          },
        },
      },
    });
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(2000, 4 * GI)));
    const r = await env.cycle();
    const copies = await env.core.listNamespacedPod({ namespace: 'default' });
    expect(copies.items.length).toBeGreaterThan(0);
    for (const p of copies.items) {
      expect(p.spec?.containers[0]?.resources?.requests).toEqual({ cpu: '100m', memory: '128Mi' });
      expect(p.metadata?.generation ?? 1).toBe(1);
    }
    expect(r.impostors.map((p) => p.namespace)).toContain('default');
    expect(r.decisions.find((x) => x.node === n1!.name)?.balloon?.namespace).toBe(BALLOON_NAMESPACE);
  });

  it('2. a sidecar counts as the scheduler counts it: no inflate into it, no Deferred, a blocked reclaim', async () => {
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, n1!.allocatable);
    await env.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'with-sidecar' },
        spec: {
          nodeName: n1!.name,
          initContainers: [
            {
              name: 'proxy',
              image: PAUSE,
              restartPolicy: 'Always',
              resources: { requests: { cpu: '2', memory: '1Gi' } },
            },
          ],
          containers: [
            { name: 'app', image: PAUSE, resources: { requests: { cpu: '500m', memory: '1Gi' } } },
          ],
        },
      },
    });
    expect(await podPhase(env, 'with-sidecar')).toBe('Running');
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(1000, 2 * GI)));
    for (let i = 0; i < 3; i++) {
      const r = await env.cycle();
      expect(r.reverts).toEqual([]);
      const d = r.decisions.find((x) => x.node === n1!.name)!;
      expect(d.state.workloads).toEqual(amounts(2500, 2 * GI));
      expect(d.state.blocked?.pods.map((p) => p.name)).toEqual(['with-sidecar']);
    }
    expect((await balloonOn(env, n1!.name))?.pending).toBeUndefined();
  });

  it('2. init containers, pod overhead, pod-level resources and a nominated pod all hold room', async () => {
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, n1!.allocatable);
    const pod = (name: string, spec: object) =>
      env.core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name }, spec: spec as never },
      });
    const app = (cpu: string, memory: string) => ({
      name: 'app',
      image: PAUSE,
      resources: { requests: { cpu, memory } },
    });
    // an init container larger than the app: the pod needs the larger (1.5 cpu)
    await pod('init', {
      nodeName: n1!.name,
      initContainers: [{ ...app('1500m', '256Mi'), name: 'setup' }],
      containers: [app('100m', '256Mi')],
    });
    // overhead (a RuntimeClass's): 250m / 256Mi on top of its containers
    await pod('overhead', {
      nodeName: n1!.name,
      overhead: { cpu: '250m', memory: '256Mi' },
      containers: [app('100m', '256Mi')],
    });
    // pod-level resources (1.34+): the pod's own requests replace its containers' sum
    await pod('podlevel', {
      nodeName: n1!.name,
      resources: { requests: { cpu: '1', memory: '1Gi' } },
      containers: [{ name: 'app', image: PAUSE }],
    });
    // nominated to n1 by the scheduler's preemption, not bound yet: it holds room there
    await pod('nominated', {
      nodeSelector: { 'fleetscope.test/nowhere': 'x' },
      containers: [app('1', '1Gi')],
    });
    await patch(env, podPath('default', 'nominated', 'status'), { status: { nominatedNodeName: n1!.name } });
    const r = await env.cycle();
    const d = r.decisions.find((x) => x.node === n1!.name)!;
    expect(d.state.workloads).toEqual(
      amounts(1500 + 350 + 1000 + 1000, 256 * 2 ** 20 + 512 * 2 ** 20 + GI + GI),
    );
  });

  it('3. any Deferred increase of a balloon is reverted to what the kubelet allocated, whoever wrote it', async () => {
    const [n1] = await nodesOf(env);
    const want = amounts(2000, 4 * GI);
    await sized(env, n1!.name, want);
    const before = (await balloonOn(env, n1!.name))!;
    await workload(env, 'app', n1!.name, '1', '1Gi');
    // another writer inflates the balloon past what is free: the kubelet defers it
    await patch(
      env,
      podPath(BALLOON_NAMESPACE, before.name, 'resize'),
      {
        spec: {
          containers: [{ name: 'balloon', resources: { requests: { cpu: `${n1!.allocatable.cpu}m` } } }],
        },
      },
      'application/strategic-merge-patch+json',
    );
    expect((await balloonOn(env, n1!.name))?.pending?.reason).toBe('Deferred');
    const r = await env.cycle();
    expect(r.reverts.map((v) => v.node)).toEqual([n1!.name]);
    const after = (await balloonOn(env, n1!.name))!;
    expect(after.spec).toEqual(before.spec);
    expect(after.pending).toBeUndefined();
    // a pod that fits the node as the kubelet has it is scheduled there
    await env.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'fits' },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': n1!.name },
          containers: [
            { name: 'app', image: PAUSE, resources: { requests: { cpu: '500m', memory: '512Mi' } } },
          ],
        },
      },
    });
    expect(await podPhase(env, 'fits')).toBe('Running');
    expect(await podPhase(env, 'app')).toBe('Running');
  });

  it('3. with no stored record (state lost), a Deferred inflate is still reverted', async () => {
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, n1!.allocatable);
    const floor = (await balloonOn(env, n1!.name))!.spec;
    await workload(env, 'late', n1!.name, '2', '1Gi');
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(1000, 2 * GI)));
    // the cycle misses "late" (in its read and its re-reads) and inflates into it: Deferred
    const r1 = await env.cycle({
      alterRead: (r) => ({
        nodes: r.nodes,
        pods: async () => (await r.pods()).filter((p) => p.name !== 'late'),
      }),
      alterFresh: (f) => ({ podsOn: async (n) => (await f.podsOn(n)).filter((p) => p.name !== 'late') }),
      lateKubelet: true,
    });
    expect(r1.reverts).toEqual([]);
    expect((await balloonOn(env, n1!.name))?.pending?.reason).toBe('Deferred');
    // the state write was lost to a concurrent cycle: nothing remembers the inflate
    await env.store.clear(env.cluster);
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(1000, 2 * GI)));
    const r2 = await env.cycle();
    expect(r2.reverts.map((v) => v.node)).toEqual([n1!.name]);
    expect((await balloonOn(env, n1!.name))?.pending).toBeUndefined();
    expect((await balloonOn(env, n1!.name))?.spec.cpu).toBeLessThan(n1!.allocatable.cpu - 1000);
    expect(floor).toEqual(BALLOON_FLOOR);
  });

  it("3. another writer's Infeasible increase is reverted, and its refusal does not hold fleetscope's next inflate back", async () => {
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, amounts(3000, 6 * GI));
    // fleetscope's own request is still on record when another writer asks more than the node has
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(2500, 6 * GI)));
    await env.cycle();
    const b = (await balloonOn(env, n1!.name))!;
    await patch(
      env,
      podPath(BALLOON_NAMESPACE, b.name, 'resize'),
      {
        spec: {
          containers: [
            { name: 'balloon', resources: { requests: { cpu: `${n1!.allocatable.cpu + 1000}m` } } },
          ],
        },
      },
      'application/strategic-merge-patch+json',
    );
    expect((await balloonOn(env, n1!.name))?.pending?.reason).toBe('Infeasible');
    const r = await env.cycle();
    expect(r.reverts.map((v) => v.node)).toEqual([n1!.name]);
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(b.spec);
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(2000, 6 * GI)));
    await env.cycle();
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(n1!.allocatable, amounts(2000, 6 * GI)));
  });

  it('4. a resize condition older than the spec is not the outcome of the current request', async () => {
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, amounts(2000, 4 * GI));
    const b = (await balloonOn(env, n1!.name))!;
    // fleetscope deflates (generation N); a stale Infeasible condition of generation N-1 is still there
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(3000, 6 * GI)));
    await env.cycle();
    const pod = await env.core.readNamespacedPod({ namespace: BALLOON_NAMESPACE, name: b.name });
    const gen = pod.metadata!.generation!;
    await patch(env, podPath(BALLOON_NAMESPACE, b.name, 'status'), {
      status: {
        conditions: [
          {
            type: 'PodResizePending',
            status: 'True',
            reason: 'Infeasible',
            message: 'stale',
            observedGeneration: gen - 1,
            lastTransitionTime: new Date(env.sim.clock.now()).toISOString(),
          },
        ],
      },
    });
    const r = await env.cycle();
    expect(
      r.reports.filter((x) => x.kind === 'refused').map((x) => x.kind === 'refused' && x.refusal),
    ).toEqual([]);
    // the next grow is not held back
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(4000, 8 * GI)));
    await env.cycle();
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(n1!.allocatable, amounts(4000, 8 * GI)));
  });

  it('5. PriorityClass drift is repaired and reported: globalDefault, and a value changed by replacing', async () => {
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, amounts(2000, 4 * GI));
    const balloon = await env.core.readNamespacedPod({
      namespace: BALLOON_NAMESPACE,
      name: (await balloonOn(env, n1!.name))!.name,
    });
    expect([balloon.spec?.priorityClassName, balloon.spec?.priority, balloon.spec?.preemptionPolicy]).toEqual(
      [PRIORITY_CLASS, 1_000_000_000, 'Never'],
    );
    await env.client.scheduling.patchPriorityClass(
      { name: PRIORITY_CLASS, body: { globalDefault: true } },
      (await import('../../shared/k8s/client.js')).patchOptions('merge'),
    );
    const r1 = await env.cycle();
    expect(r1.repairs.join()).toMatch(/globalDefault/);
    // A real server leaves globalDefault: false out of its answer (omitempty).
    const repaired = await env.client.scheduling.readPriorityClass({ name: PRIORITY_CLASS });
    expect(repaired.globalDefault ?? false).toBe(false);
    // recreated with another value (ours, by its label): replaced
    await env.client.scheduling.deletePriorityClass({ name: PRIORITY_CLASS });
    await env.client.scheduling.createPriorityClass({
      body: {
        metadata: { name: PRIORITY_CLASS, labels: { 'app.kubernetes.io/managed-by': 'fleetscope' } },
        value: 1000,
        preemptionPolicy: 'PreemptLowerPriority',
      },
    });
    const r2 = await env.cycle();
    expect(r2.repairs.join()).toMatch(/value 1000/);
    const pc = await env.client.scheduling.readPriorityClass({ name: PRIORITY_CLASS });
    expect([pc.value, pc.preemptionPolicy, pc.globalDefault ?? false]).toEqual([
      1_000_000_000,
      'Never',
      false,
    ]);
  });

  it('5. a PriorityClass fleetscope does not own is reported, left alone, and the cycle still grows nodes', async () => {
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, amounts(2000, 4 * GI));
    await env.client.scheduling.deletePriorityClass({ name: PRIORITY_CLASS });
    await env.client.scheduling.createPriorityClass({
      body: { metadata: { name: PRIORITY_CLASS }, value: 7 },
    });
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(3000, 6 * GI)));
    const r = await env.cycle();
    expect(r.errors.join()).toMatch(/PriorityClass fleetscope-balloon .*value 7/);
    expect((await env.client.scheduling.readPriorityClass({ name: PRIORITY_CLASS })).value).toBe(7);
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(n1!.allocatable, amounts(3000, 6 * GI)));
  });

  it("one node's failure never stops the others: its error names the node, the rest are sized", async () => {
    const [n1, n2, n3] = await nodesOf(env);
    for (const n of [n1!, n2!, n3!]) await env.store.putRequest(env.cluster, explicit(n.name, n.allocatable));
    await env.cycle();
    await env.cycle();
    const broken = (await balloonOn(env, n2!.name))!;
    // the apiserver refuses every resize of n2's balloon (a webhook, a quota: anything)
    const fault = env.sim.faults.inject({
      cluster: env.cluster,
      match: { method: 'PATCH', pathIncludes: `/pods/${broken.name}/resize` },
      fault: { type: 'status', code: 500 },
    });
    for (const n of [n1!, n2!, n3!])
      await env.store.putRequest(env.cluster, explicit(n.name, amounts(1000, 2 * GI)));
    const r = await env.cycle();
    env.sim.faults.clear(fault);
    // reported as a refused resize of that node's balloon (PodResizeRefused, backed off), nothing else
    const refused = r.reports.filter((x) => x.kind === 'refused');
    expect(refused.map((x) => [x.node, x.pod])).toEqual([[n2!.name, broken.name]]);
    expect(r.errors).toEqual([]);
    for (const n of [n1!, n3!])
      expect((await balloonOn(env, n.name))?.spec).toEqual(sub(n.allocatable, amounts(1000, 2 * GI)));
    expect((await balloonOn(env, n2!.name))?.spec).toEqual(BALLOON_FLOOR);
  });

  it('6. allocatable below what is requested: converges without flip-flop, says over-committed, never negative', async () => {
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, amounts(2000, 4 * GI));
    await workload(env, 'app', n1!.name, '1500m', '3Gi');
    // the VM shrinks under them: allocatable falls below the workload alone, so even the deflate waits
    env.sim.cluster(env.cluster).setNodeCapacity(n1!.name, { cpu: '1500m', memory: '4Gi' });
    const resizes: number[] = [];
    let last: Awaited<ReturnType<BalloonEnv['cycle']>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await env.cycle();
      expect(last.reverts).toEqual([]);
      resizes.push(last.reports.filter((x) => x.kind === 'resized' && x.outcome === 'Requested').length);
    }
    // one deflate, then nothing more: no revert, no retry
    expect(resizes.slice(1)).toEqual([0, 0, 0]);
    const d = last!.decisions.find((x) => x.node === n1!.name)!;
    expect(d.state.overcommitted?.cpu).toBeGreaterThan(0);
    expect((await balloonOn(env, n1!.name))?.pending?.reason).toBe('Deferred');
    expect(d.state.size!.cpu).toBeGreaterThanOrEqual(0);
    expect(d.state.size!.memory).toBeGreaterThanOrEqual(0);
    const texts = (await env.core.listNamespacedEvent({ namespace: BALLOON_NAMESPACE })).items.map(
      (e) => e.message ?? '',
    );
    expect(texts.join('\n')).toMatch(/over-committed by/);
    for (const t of texts) expect(t).not.toMatch(/offers -|\s-\d/);
    expect(await podPhase(env, 'app')).toBe('Running');
  });

  it('6. on an over-committed node a cpu deflate is requested even while a memory deflate is Deferred', async () => {
    // found at cycle 868 of the long property run: the cycle planned memory at the counted (allocated)
    // size, so its {400m, 5Gi} was not deeper than the pending {1250m, 2Gi} and waited behind it.
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, sub(n1!.allocatable, amounts(1250, 5 * GI)));
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(amounts(1250, 5 * GI));
    await workload(env, 'app', n1!.name, '1500m', '8Gi');
    // the VM shrinks under them: over-committed in both, so the kubelet defers even a deflate
    env.sim.cluster(env.cluster).setNodeCapacity(n1!.name, { cpu: '2500m', memory: '12Gi' });
    const shrunk = (await nodesOf(env)).find((n) => n.name === n1!.name)!.allocatable;
    await env.store.putRequest(env.cluster, explicit(n1!.name, sub(shrunk, amounts(1250, 2 * GI))));
    await env.cycle();
    const held = (await balloonOn(env, n1!.name))!;
    expect([held.pending?.reason, held.spec, held.actual]).toEqual([
      'Deferred',
      amounts(1250, 2 * GI),
      amounts(1250, 5 * GI),
    ]);
    // now the node needs cpu back too (memory's target rises above what is allocated: held, over-committed)
    await env.store.putRequest(env.cluster, explicit(n1!.name, sub(shrunk, amounts(400, 6 * GI))));
    await env.cycle();
    // the new request never raises the pending memory deflate back up
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(amounts(400, 2 * GI));
    expect(await podPhase(env, 'app')).toBe('Running');
  });

  it('6. a Deferred memory deflate does not hold back a cpu inflate that fits beside it', async () => {
    // found at cycle 1581 of the long property run, once the cycle-868 fix lowered every resource
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, sub(n1!.allocatable, amounts(1000, 5 * GI)));
    await workload(env, 'app', n1!.name, '500m', '8Gi');
    // over-committed in memory only: the kubelet defers a memory deflate too shallow to fit (4Gi)
    env.sim.cluster(env.cluster).setNodeCapacity(n1!.name, { cpu: '2500m', memory: '12Gi' });
    const shrunk = (await nodesOf(env)).find((n) => n.name === n1!.name)!.allocatable;
    await env.store.putRequest(env.cluster, explicit(n1!.name, sub(shrunk, amounts(1000, 4 * GI))));
    await env.cycle();
    expect((await balloonOn(env, n1!.name))?.pending?.reason).toBe('Deferred');
    // a deeper memory deflate with a cpu inflate, {1400m, 2Gi}, fits beside the app: sent, not held back
    await env.store.putRequest(env.cluster, explicit(n1!.name, sub(shrunk, amounts(1400, 2 * GI))));
    await env.cycle();
    const b = (await balloonOn(env, n1!.name))!;
    expect([b.spec, b.actual, b.pending]).toEqual([amounts(1400, 2 * GI), amounts(1400, 2 * GI), undefined]);
    expect(await podPhase(env, 'app')).toBe('Running');
  });

  it('6. a memory inflate that fits is sent in place of a Deferred deflate of both resources', async () => {
    // found at cycle 2479 of the long property run: lowering memory to the pending deflate left it at the
    // floor beside free room, though the plan inflated it (only where the whole request fits)
    const [n1] = await nodesOf(env);
    await sized(env, n1!.name, sub(n1!.allocatable, amounts(1250, 5 * GI)));
    await workload(env, 'app', n1!.name, '1500m', '2Gi');
    // over-committed in cpu only: a deflate of both, still too large in cpu, is Deferred
    env.sim.cluster(env.cluster).setNodeCapacity(n1!.name, { cpu: '2500m', memory: '12Gi' });
    const shrunk = (await nodesOf(env)).find((n) => n.name === n1!.name)!.allocatable;
    await env.store.putRequest(env.cluster, explicit(n1!.name, sub(shrunk, amounts(1000, 2 * GI))));
    await env.cycle();
    expect((await balloonOn(env, n1!.name))?.pending?.reason).toBe('Deferred');
    // a deeper cpu deflate with a memory inflate, {400m, 7Gi}, fits beside the app
    await env.store.putRequest(env.cluster, explicit(n1!.name, sub(shrunk, amounts(400, 7 * GI))));
    await env.cycle();
    const b = (await balloonOn(env, n1!.name))!;
    expect([b.spec, b.actual, b.pending]).toEqual([amounts(400, 7 * GI), amounts(400, 7 * GI), undefined]);
    expect(await podPhase(env, 'app')).toBe('Running');
  });
});
