/**
 * Balloons over the simulator's apiserver, kubelets and DaemonSet controller, with DynamoDB (dynalite):
 * inflate and deflate, a reclaim blocked by a pod that took the space first (nothing evicted), a
 * Deferred inflate reverted in the same cycle, N kubelets per host, a recreated balloon re-sized, an
 * explicit size overriding the policy.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Amounts, amounts, sub } from '../../shared/balloons/amounts.js';
import type { ClusterRead, FreshPods } from '../../shared/balloons/cluster-read.js';
import { balloonMetrics } from '../../shared/balloons/events.js';
import { BALLOON_NAME, PRIORITY_CLASS } from '../../shared/balloons/manifests.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import { BALLOON_FLOOR } from '../../shared/balloons/sizing.js';
import {
  type BalloonEnv,
  balloonOn,
  FIXED_SIZE_POLICY,
  nodesOf,
  podPhase,
  startBalloonEnv,
  WHOLE_CLUSTER_POLICY,
  workload,
} from './helpers.js';

const GI = 2 ** 30;
const explicit = (node: string, size: Amounts) => ({ node, size, requestedAt: 0, via: 'test' });

describe('balloons over the simulator', () => {
  let env: BalloonEnv;
  beforeEach(async () => {
    env = await startBalloonEnv();
  });
  afterEach(async () => env.stop());

  it('does nothing, and reads no pod, in a cluster where nothing asks for balloons', async () => {
    const before = env.sim.cluster(env.cluster).stats().byKind.pods ?? 0;
    const r = await env.cycle();
    expect(r.managed).toBe(false);
    expect(env.sim.cluster(env.cluster).stats().byKind.pods ?? 0).toBe(before);
    await expect(
      env.client.apps.readNamespacedDaemonSet({ name: BALLOON_NAME, namespace: 'kube-system' }),
    ).rejects.toThrow();
  });

  it('creates the PriorityClass and DaemonSet, inflates by policy, and deflates as workloads grow', async () => {
    const [n1] = await nodesOf(env);
    await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
    await env.cycle(); // objects created; the DaemonSet controller places the balloons
    const pc = await env.client.scheduling.readPriorityClass({ name: PRIORITY_CLASS });
    expect([pc.value, pc.preemptionPolicy]).toEqual([1_000_000_000, 'Never']);
    const steady = await env.cycle();
    const b = await balloonOn(env, n1!.name);
    // nothing runs there: the node offers the policy's minimum (1 cpu, 2Gi), or what the node uses
    // (metrics, with the policy's headroom) where that is more: it never offers less (issue 28)
    const used = steady.decisions.find((d) => d.node === n1!.name)?.state.usageFloor;
    expect(b?.spec).toEqual(sub(n1!.allocatable, amounts(1000, Math.max(2 * GI, used?.memory ?? 0))));
    expect(b?.actual).toEqual(b?.spec);
    // a workload arrives into the free part; the next cycle grows the node to requests + headroom
    await workload(env, 'app', n1!.name, '900m', '1Gi');
    const r = await env.cycle();
    const after = await balloonOn(env, n1!.name);
    // the node never offers less than it uses (issue 28): the simulated node's usage, with headroom
    const floor = r.decisions.find((d) => d.node === n1!.name)?.state.usageFloor;
    const memory = Math.max(2 * GI, floor?.memory ?? 0);
    expect(after?.spec).toEqual(sub(n1!.allocatable, amounts(1500, memory)));
    expect(r.reports.some((x) => x.kind === 'resized' && x.node === n1!.name)).toBe(true);
    expect(await podPhase(env, 'app')).toBe('Running');
  });

  it('an inflate blocked by a pod that took the space: recorded with the pod, and nothing evicted', async () => {
    const [n1] = await nodesOf(env);
    await env.store.putRequest(env.cluster, explicit(n1!.name, n1!.allocatable));
    await env.cycle();
    await env.cycle();
    await workload(env, 'big', n1!.name, '2', '4Gi');
    // now the node should offer only 1 cpu: the balloon can take back only what "big" leaves free
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(1000, 2 * GI)));
    const r = await env.cycle();
    const d = r.decisions.find((x) => x.node === n1!.name)!;
    expect(d.state.blocked?.missing).toEqual(amounts(1000, 2 * GI));
    expect(d.state.blocked?.pods.map((p) => p.name)).toEqual(['big']);
    expect(d.newlyBlocked).toBe(true);
    const b = await balloonOn(env, n1!.name);
    expect(b?.spec).toEqual(sub(n1!.allocatable, amounts(2000, 4 * GI)));
    expect(await podPhase(env, 'big')).toBe('Running');
    const events = await env.core.listNamespacedEvent({ namespace: 'kube-system' });
    const reasons = events.items.filter((e) => e.involvedObject.name === b?.name).map((e) => e.reason);
    expect(reasons).toContain('BalloonReclaimBlocked');
    expect(reasons).toContain('BalloonResized');
    // reported once, not every cycle
    expect((await env.cycle()).decisions.find((x) => x.node === n1!.name)?.newlyBlocked).toBe(false);
    // once the pod leaves, the reclaim completes
    await env.core.deleteNamespacedPod({ name: 'big', namespace: 'default' });
    const done = await env.cycle();
    expect(done.decisions.find((x) => x.node === n1!.name)?.state.blocked).toBeUndefined();
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(n1!.allocatable, amounts(1000, 2 * GI)));
  });

  it('reverts a Deferred inflate in the same cycle (a pod landed between the read and the resize)', async () => {
    const [n1] = await nodesOf(env);
    await env.store.putRequest(env.cluster, explicit(n1!.name, n1!.allocatable));
    await env.cycle();
    await env.cycle();
    const floor = (await balloonOn(env, n1!.name))!.spec;
    expect(floor).toEqual(BALLOON_FLOOR);
    await workload(env, 'late', n1!.name, '2', '1Gi');
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(1000, 2 * GI)));
    // the cycle's read misses "late", as if it had been bound just after the list
    const stale = (r: ClusterRead): ClusterRead => ({
      nodes: r.nodes,
      pods: async () => (await r.pods()).filter((p) => p.name !== 'late'),
    });
    // and the re-read after the inflate misses it too (which would deflate back before the kubelet
    // answered, test/balloons/race.sim.test.ts): the kubelet's Deferred is what is left to act on
    const unseen = (f: FreshPods): FreshPods => ({
      podsOn: async (n) => (await f.podsOn(n)).filter((p) => p.name !== 'late'),
    });
    const r = await env.cycle({ alterRead: stale, alterFresh: unseen });
    expect(r.reverts).toHaveLength(1);
    expect(r.reverts[0]?.message).toMatch(/Node didn't have enough resource: cpu/);
    const b = await balloonOn(env, n1!.name);
    expect(b?.spec).toEqual(floor);
    expect(b?.pending).toBeUndefined();
    expect(r.reports.some((x) => x.kind === 'refused' && x.refusal === 'Deferred')).toBe(true);
    const events = await env.core.listNamespacedEvent({ namespace: 'kube-system' });
    expect(events.items.some((e) => e.reason === 'BalloonInflateReverted' && e.type === 'Warning')).toBe(
      true,
    );
    expect(await podPhase(env, 'late')).toBe('Running');
    // the next cycle reads "late" and takes only what is free: a blocked reclaim, not another Deferred
    const next = await env.cycle();
    expect(next.reverts).toHaveLength(0);
    expect(next.decisions.find((x) => x.node === n1!.name)?.state.blocked?.pods.map((p) => p.name)).toContain(
      'late',
    );
  });

  it('prices the capacity that does not exist in the EMF metrics (BalloonMonthlyValueUsd), as in the summary', async () => {
    const [n1] = await nodesOf(env);
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(1000, 2 * GI)));
    await env.cycle();
    const r = await env.cycle();
    expect(r.summary.monthlyUsd).toBeGreaterThan(0);
    const metrics = new Map(balloonMetrics(r).map(([name, , value]) => [name, value]));
    expect(metrics.get('BalloonMonthlyValueUsd')).toBe(Math.round(r.summary.monthlyUsd * 100) / 100);
  });

  it('N kubelets per host: each node offers 1/N of the host', async () => {
    const nodes = await nodesOf(env);
    for (const n of nodes.slice(0, 2))
      await env.client.core.patchNode(
        {
          name: n.name,
          body: {
            metadata: { labels: { 'fleetscope.io/host-id': 'h1', 'fleetscope.io/kubelets-per-host': '2' } },
          },
        },
        (await import('../../shared/k8s/client.js')).patchOptions('merge'),
      );
    await env.cycle();
    await env.cycle();
    for (const n of nodes.slice(0, 2)) {
      const b = await balloonOn(env, n.name);
      expect(b?.spec).toEqual(amounts(Math.ceil(n.capacity.cpu / 2), Math.ceil(n.capacity.memory / 2)));
    }
    expect(await balloonOn(env, nodes[2]!.name)).toBeUndefined();
  });

  it('re-sizes a recreated balloon (it starts at the floor)', async () => {
    const [n1] = await nodesOf(env);
    const want = amounts(1000, 2 * GI);
    await env.store.putRequest(env.cluster, explicit(n1!.name, want));
    await env.cycle();
    await env.cycle();
    const first = (await balloonOn(env, n1!.name))!;
    expect(first.spec).toEqual(sub(n1!.allocatable, want));
    await env.core.deleteNamespacedPod({ name: first.name, namespace: 'kube-system' });
    const recreated = (await balloonOn(env, n1!.name))!;
    expect(recreated.uid).not.toBe(first.uid);
    expect(recreated.spec).toEqual(BALLOON_FLOOR);
    await env.cycle();
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(n1!.allocatable, want));
  });

  it('an explicit size overrides the policy, and clearing it hands the node back to the policy', async () => {
    const [n1] = await nodesOf(env);
    await env.store.putPolicy(env.cluster, FIXED_SIZE_POLICY);
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(3000, 6 * GI)));
    await env.cycle();
    const r = await env.cycle();
    expect(r.decisions.find((d) => d.node === n1!.name)?.desired?.source.kind).toBe('explicit');
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(n1!.allocatable, amounts(3000, 6 * GI)));
    await env.store.deleteRequest(env.cluster, n1!.name);
    await env.cycle();
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(n1!.allocatable, amounts(2000, 4 * GI)));
  });

  it('a node that grows from below (hotplug, a cloud resize) is sized from its new allocatable, not fought', async () => {
    const [n1] = await nodesOf(env);
    await env.store.putPolicy(env.cluster, FIXED_SIZE_POLICY);
    await env.cycle();
    await env.cycle();
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(n1!.allocatable, amounts(2000, 4 * GI)));
    const cap = n1!.capacity;
    env.sim
      .cluster(env.cluster)
      .setNodeCapacity(n1!.name, { cpu: String((cap.cpu * 2) / 1000), memory: String(cap.memory * 2) });
    const [grown] = (await nodesOf(env)).filter((n) => n.name === n1!.name);
    expect(grown!.allocatable.cpu).toBeGreaterThan(n1!.allocatable.cpu);
    const r = await env.cycle();
    const d = r.decisions.find((x) => x.node === n1!.name)!;
    expect(d.capacityChanged).toEqual({ from: n1!.allocatable, to: grown!.allocatable });
    // the node still offers what the policy says; the new capacity is held until the policy wants it
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(grown!.allocatable, amounts(2000, 4 * GI)));
    expect((await balloonOn(env, n1!.name))?.pending).toBeUndefined();
  });

  it('a system-critical pod can still preempt a balloon: it is recreated and re-inflated only into free capacity', async () => {
    const [n1] = await nodesOf(env);
    await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(1000, 2 * GI)));
    await env.cycle();
    await env.cycle();
    const first = (await balloonOn(env, n1!.name))!;
    await env.core.createNamespacedPod({
      namespace: 'kube-system',
      body: {
        metadata: { name: 'critical' },
        spec: {
          priorityClassName: 'system-node-critical',
          nodeSelector: { 'kubernetes.io/hostname': n1!.name },
          containers: [
            {
              name: 'c',
              image: 'registry.k8s.io/pause:3.10',
              resources: { requests: { cpu: '2', memory: '4Gi' } },
            },
          ],
        },
      },
    });
    expect(await podPhase(env, 'critical', 'kube-system')).toBe('Running');
    const recreated = (await balloonOn(env, n1!.name))!;
    expect(recreated.uid).not.toBe(first.uid);
    expect(recreated.spec).toEqual(BALLOON_FLOOR);
    const r = await env.cycle();
    const d = r.decisions.find((x) => x.node === n1!.name)!;
    expect(d.state.blocked?.pods.map((p) => p.name)).toContain('critical');
    expect(await podPhase(env, 'critical', 'kube-system')).toBe('Running');
    const others = sub(n1!.allocatable, (await balloonOn(env, n1!.name))!.spec);
    expect(others.cpu).toBeGreaterThanOrEqual(2000);
  });

  it('drain deflates every balloon whatever asks for a size (the first step of turning balloons off)', async () => {
    const nodes = await nodesOf(env);
    for (const n of nodes) await env.store.putRequest(env.cluster, explicit(n.name, amounts(1000, 2 * GI)));
    await env.cycle();
    await env.cycle();
    expect((await balloonOn(env, nodes[0]!.name))?.spec).toEqual(
      sub(nodes[0]!.allocatable, amounts(1000, 2 * GI)),
    );
    const drained = await env.cycle({ drain: true });
    for (const n of nodes) expect((await balloonOn(env, n.name))?.spec).toEqual(BALLOON_FLOOR);
    // Drained, each node stays in its pool (what would size it), so no view calls it unmanaged.
    expect(drained.decisions.map((d) => d.state.source?.kind)).toEqual(nodes.map(() => 'explicit'));
    expect(drained.decisions.every((d) => d.state.desired === undefined)).toBe(true);
  });
});

describe('a cluster without pods/resize', () => {
  it('is reported and left alone: no DaemonSet, no PriorityClass, asked again only after the recheck', async () => {
    const env = await startBalloonEnv({ resizeSubresource: false });
    try {
      await env.store.putPolicy(
        env.cluster,
        validatePolicy({ name: 'all', selector: 'kubernetes.io/os=linux', max: { cpu: '2', memory: '4Gi' } }),
      );
      const r = await env.cycle();
      expect(r.errors.join()).toMatch(/no pods\/resize subresource/);
      await expect(
        env.client.apps.readNamespacedDaemonSet({ name: BALLOON_NAME, namespace: 'kube-system' }),
      ).rejects.toThrow();
      await expect(env.client.scheduling.readPriorityClass({ name: PRIORITY_CLASS })).rejects.toThrow();
      expect((await env.store.state(env.cluster))?.unsupported).toMatch(/pods\/resize/);
      const discovery = env.sim.cluster(env.cluster).stats().byKind.discovery ?? 0;
      await env.cycle();
      expect(env.sim.cluster(env.cluster).stats().byKind.discovery ?? 0).toBe(discovery);
    } finally {
      await env.stop();
    }
  });
});
