/**
 * The bind race, produced by the simulator's lags: the scheduler binds a pod into a node between the
 * cycle's read of it and its inflate. Whether the kubelet admits that pod after the inflate reached it
 * (it then rejects the pod, OutOfcpu) or answers the inflate after fleetscope's settle window (the
 * scheduler then counts a Deferred inflate that never happened), the inflate must not strand a pod that
 * fitted before it: the node is re-read after the inflate and the balloon deflated back at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SimClusterSpec } from '../../local/sim/index.js';
import { type Amounts, add, amounts } from '../../shared/balloons/amounts.js';
import type { ClusterRead } from '../../shared/balloons/cluster-read.js';
import { fitBack, podsBoundSinceRead } from '../../shared/balloons/recheck.js';
import { BALLOON_FLOOR } from '../../shared/balloons/sizing.js';
import { type BalloonEnv, balloonOn, nodesOf, podPhase, startBalloonEnv } from './helpers.js';

const GI = 2 ** 30;
const explicit = (node: string, size: Amounts) => ({ node, size, requestedAt: 0, via: 'test' });

/** A pod the scheduler places (on `node`, by its hostname label), requesting 2 cpu and 1Gi. */
async function scheduled(env: BalloonEnv, name: string, node: string, cpu = '2') {
  await env.core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name },
      spec: {
        nodeSelector: { 'kubernetes.io/hostname': node },
        containers: [
          {
            name: 'app',
            image: 'registry.k8s.io/pause:3.10',
            resources: { requests: { cpu, memory: '1Gi' } },
          },
        ],
      },
    },
  });
}

/** The cycle's read, with a pod bound to `node` right after the pods were listed. */
const bindAfterRead =
  (env: BalloonEnv, name: string, node: string) =>
  (r: ClusterRead): ClusterRead => ({
    nodes: r.nodes,
    pods: async () => {
      const pods = await r.pods();
      await scheduled(env, name, node);
      return pods;
    },
  });

/** A cluster whose node n1 has its balloon at the floor, and an explicit size of 1 cpu / 2Gi asked. */
async function readyToInflate(lags: SimClusterSpec['lags']) {
  const env = await startBalloonEnv({ lags });
  const [n1] = await nodesOf(env);
  await env.store.putRequest(env.cluster, explicit(n1!.name, n1!.allocatable));
  await env.cycle();
  await env.cycle();
  expect((await balloonOn(env, n1!.name))?.actual).toEqual(BALLOON_FLOOR);
  await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(1000, 2 * GI)));
  return { env, n1: n1! };
}

describe('the bind race', () => {
  let env: BalloonEnv | undefined;
  afterEach(async () => env?.stop());

  it('a pod bound after the read and admitted after the inflate is not rejected: the balloon deflates back first', async () => {
    // the kubelet admits 2 s after the binding, and answers resizes at once (its view is ahead)
    const ready = await readyToInflate({ admitMs: 2_000 });
    env = ready.env;
    const n1 = ready.n1;
    const r = await env.cycle({ alterRead: bindAfterRead(env, 'late', n1.name) });
    expect((await env.core.readNamespacedPod({ name: 'late', namespace: 'default' })).spec?.nodeName).toBe(
      n1.name,
    );
    env.sim.clock.advance(2_000);
    expect(await podPhase(env, 'late')).toBe('Running');
    const back = r.reverts.find((v) => v.node === n1.name);
    expect(back?.boundSinceRead).toEqual(['default/late']);
    expect(podsBoundSinceRead(r)).toBe(1);
    // the balloon holds only what is left beside "late": everything on the node fits its allocatable
    const b = (await balloonOn(env, n1.name))!;
    expect(b.actual).toEqual(b.spec);
    expect(b.pending).toBeUndefined();
    expect(add(b.spec, amounts(2000, GI)).cpu).toBeLessThanOrEqual(n1.allocatable.cpu);
    // the next cycle sees "late" and reports the reclaim as blocked by it, nothing reverted
    const next = await env.cycle();
    expect(next.reverts).toHaveLength(0);
    expect(next.decisions.find((d) => d.node === n1.name)?.state.blocked?.pods.map((p) => p.name)).toEqual([
      'late',
    ]);
  });

  it('a pod bound after the read into all the room there was: the balloon goes back to its size before the inflate', async () => {
    // found by the property test: "what fits" is then exactly the balloon's old size, which the cycle's
    // read of the balloon still showed, so the deflate back was taken for no change and never sent
    const ready = await readyToInflate({ admitMs: 2_000 });
    env = ready.env;
    const n1 = ready.n1;
    const others = env.sim
      .cluster(env.cluster)
      .store.list('pods')
      .filter((p) => p.spec.nodeName === n1.name && !p.metadata.name.startsWith('fleetscope-balloon'));
    expect(others).toEqual([]);
    const free = {
      cpu: `${n1.allocatable.cpu - BALLOON_FLOOR.cpu}m`,
      memory: String(n1.allocatable.memory - BALLOON_FLOOR.memory),
    };
    const r = await env.cycle({
      alterRead: (read) => ({
        nodes: read.nodes,
        pods: async () => {
          const pods = await read.pods();
          await env!.core.createNamespacedPod({
            namespace: 'default',
            body: {
              metadata: { name: 'all-of-it' },
              spec: {
                nodeSelector: { 'kubernetes.io/hostname': n1.name },
                containers: [
                  { name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: free } },
                ],
              },
            },
          });
          return pods;
        },
      }),
    });
    expect(r.reverts.find((v) => v.node === n1.name)?.boundSinceRead).toEqual(['default/all-of-it']);
    env.sim.clock.advance(2_000);
    expect(await podPhase(env, 'all-of-it')).toBe('Running');
    const b = (await balloonOn(env, n1.name))!;
    expect(b.spec).toEqual(BALLOON_FLOOR);
    expect(b.actual).toEqual(BALLOON_FLOOR);
  });

  it('a kubelet answering after the settle window: the inflate is deflated back, never left Deferred', async () => {
    // the kubelet admits at once but answers resizes 10 s later, long after the settle read
    const ready = await readyToInflate({ resizeMs: 10_000 });
    env = ready.env;
    const n1 = ready.n1;
    await env.cycle({ alterRead: bindAfterRead(env, 'late', n1.name) });
    expect(await podPhase(env, 'late')).toBe('Running');
    env.sim.clock.advance(10_000);
    // the kubelet's late answer is for the size that fits beside "late": accepted, nothing Deferred
    // left for the scheduler to count, nor for the kubelet to apply on its own once "late" goes
    const b = (await balloonOn(env, n1.name))!;
    expect(b.pending).toBeUndefined();
    expect(b.actual).toEqual(b.spec);
    expect(b.spec.cpu + 2000).toBeLessThanOrEqual(n1.allocatable.cpu);
  });

  it('an inflate with no pod arriving meanwhile is left alone (re-read, nothing to do)', async () => {
    const ready = await readyToInflate({ admitMs: 2_000, resizeMs: 1_000 });
    env = ready.env;
    const r = await env.cycle();
    expect(r.reverts).toHaveLength(0);
    env.sim.clock.advance(1_000);
    const b = (await balloonOn(env, ready.n1.name))!;
    expect(b.actual).toEqual(b.spec);
    expect(b.spec.cpu).toBe(ready.n1.allocatable.cpu - 1000);
  });
});

describe('fitBack', () => {
  const alloc = amounts(4000, 16 * GI);
  it('leaves a balloon that fits beside the others', () => {
    expect(fitBack(alloc, amounts(1000, 4 * GI), amounts(3000, 12 * GI))).toBeUndefined();
  });
  it('takes back only the resource that overflows, never below the floor', () => {
    expect(fitBack(alloc, amounts(2000, 4 * GI), amounts(3000, 12 * GI))).toEqual(amounts(2000, 12 * GI));
    expect(fitBack(alloc, amounts(5000, 4 * GI), amounts(3000, 12 * GI))).toEqual(
      amounts(BALLOON_FLOOR.cpu, 12 * GI),
    );
  });
});

describe('a lagging DaemonSet controller', () => {
  it('a node whose balloon is gone for a while is left alone, then its new balloon is re-inflated', async () => {
    const env = await startBalloonEnv({ lags: { daemonSetMs: 90_000 } });
    try {
      const [n1] = await nodesOf(env);
      await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(1000, 2 * GI)));
      await env.cycle(); // the DaemonSet is created; its pods come 90 s later
      expect(await balloonOn(env, n1!.name)).toBeUndefined();
      env.sim.clock.advance(90_000);
      const first = (await balloonOn(env, n1!.name))!;
      await env.cycle();
      expect((await balloonOn(env, n1!.name))?.spec.cpu).toBe(n1!.allocatable.cpu - 1000);
      await env.core.deleteNamespacedPod({ name: first.name, namespace: 'kube-system' });
      const gap = await env.cycle(); // 60 s later: no balloon yet, nothing to resize, no error
      expect(gap.errors).toEqual([]);
      expect(await balloonOn(env, n1!.name)).toBeUndefined();
      await env.cycle(); // recreated at the floor meanwhile, and re-inflated into the free room
      const again = (await balloonOn(env, n1!.name))!;
      expect(again.uid).not.toBe(first.uid);
      expect(again.spec.cpu).toBe(n1!.allocatable.cpu - 1000);
    } finally {
      await env.stop();
    }
  });
});
