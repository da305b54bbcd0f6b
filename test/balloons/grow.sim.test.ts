/**
 * Grow on demand (grow.ts): a per-node upsize of a DaemonSet pod (the call node scope makes) Deferred
 * on a full ballooned node is served by the next minute's pass: the balloon deflates by what it needs,
 * the kubelet admits the resize on its own, nothing is preempted. A pod Pending for resources in a
 * policy-sized pool grows a node the same way. A cluster where nothing asks for balloons is not read.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { serveDemand, waitingServedByDeflate } from '../../shared/balloons/grow.js';
import { balloonSettingsFromEnv } from '../../shared/balloons/settings.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { raw } from '../sim/helpers.js';
import { resizePod } from '../sim/pod-helpers.js';
import {
  type BalloonEnv,
  balloonOn,
  nodesOf,
  podPhase,
  startBalloonEnv,
  WHOLE_CLUSTER_POLICY,
  workload,
} from './helpers.js';

const MINUTE = 60_000;

describe('grow on demand', () => {
  let env: BalloonEnv;
  beforeEach(async () => {
    env = await startBalloonEnv({
      daemonSets: [{ name: 'agent', containers: [{ name: 'a', requests: { cpu: '100m', memory: '64Mi' } }] }],
    });
  });
  afterEach(async () => env.stop());

  const pass = () =>
    serveDemand({
      cluster: env.cluster,
      client: env.client,
      store: env.store,
      settings: { ...balloonSettingsFromEnv({}), settleMs: 0 },
      now: () => env.sim.clock.now(),
      passId: String(env.sim.clock.now()),
    });
  const agentOn = (node: string) =>
    env.sim
      .cluster(env.cluster)
      .store.list('pods', 'kube-system')
      .find((p) => p.metadata.name.startsWith('agent-') && p.spec.nodeName === node);
  /** The agent's container asks for 1500m: more than a full ballooned node has free, so Deferred. */
  const upsize = (pod: string) =>
    resizePod(
      env.sim.cluster(env.cluster),
      pod,
      { cpu: '1500m', memory: '64Mi' },
      undefined,
      'kube-system',
      'a',
    );
  const pending = (pod: { status?: { conditions?: { type: string; reason?: string }[] } }) =>
    pod.status?.conditions?.find((c) => c.type === 'PodResizePending')?.reason;

  it('reads nothing but its own items where nothing asks for balloons', async () => {
    const before = env.sim.cluster(env.cluster).stats().total;
    const r = await pass();
    expect(r).toEqual({ configured: false, results: [] });
    expect(env.sim.cluster(env.cluster).stats().total).toBe(before);
  });

  it("a DaemonSet pod's per-node upsize Deferred on a full ballooned node: the balloon deflates and the resize completes", async () => {
    const [n1] = await nodesOf(env);
    await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
    await env.cycle();
    await env.cycle();
    // the node offers the policy's minimum, 1 cpu: the agent's 100m and 900m free
    const before = (await balloonOn(env, n1!.name))!;
    expect(before.spec.cpu).toBe(n1!.allocatable.cpu - 1000);
    const agent = agentOn(n1!.name);
    const podsBefore = env.sim.cluster(env.cluster).store.list('pods').length;
    await upsize(agent.metadata.name);
    expect(pending(agentOn(n1!.name))).toBe('Deferred');
    // within the minute: the pass finds the Deferred resize and sizes that node alone
    env.sim.clock.advance(MINUTE);
    expect(pending(agentOn(n1!.name))).toBe('Deferred'); // nothing else grows the node meanwhile
    const r = await pass();
    expect(r.demand?.deferred).toEqual([{ node: n1!.name, pod: `kube-system/${agent.metadata.name}` }]);
    expect(r.results.map((x) => x.decisions.map((d) => d.node))).toEqual([[n1!.name]]);
    expect(waitingServedByDeflate(r)).toBe(1);
    const after = (await balloonOn(env, n1!.name))!;
    // requests (1500m) plus the policy's 500m headroom: the balloon gave back 1 cpu
    expect(after.spec.cpu).toBe(n1!.allocatable.cpu - 2000);
    env.sim.clock.advance(1_000);
    const grown = agentOn(n1!.name);
    expect(pending(grown)).toBeUndefined();
    expect(grown.status.containerStatuses[0].resources.requests.cpu).toBe('1500m');
    // nothing preempted, evicted or replaced
    expect(grown.metadata.uid).toBe(agent.metadata.uid);
    const pods = env.sim.cluster(env.cluster).store.list('pods');
    expect(pods).toHaveLength(podsBefore);
    expect(pods.filter((p) => p.status?.phase !== 'Running')).toEqual([]);
    // served: the next pass finds nothing waiting
    expect((await pass()).results).toEqual([]);
  });

  it('closes the idle sockets its reads kept alive, as a cycle does (the next pass is a minute away)', async () => {
    const [n1] = await nodesOf(env);
    await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
    await env.cycle();
    const agent = agentOn(n1!.name);
    await upsize(agent.metadata.name);
    env.sim.clock.advance(MINUTE);
    // What closing does to the sockets is counted at the server in test/cycle/follow-sockets.sim.test.ts.
    const closed = vi.spyOn(RawReader.prototype, 'closeIdle');
    try {
      const r = await pass();
      expect(r.results).toHaveLength(1); // it read the demand and the node, and deflated
      expect(closed).toHaveBeenCalledTimes(1);
      // and when the pass fails part-way
      env.sim.faults.inject({ cluster: env.cluster, fault: { type: 'status', code: 403 } });
      await expect(pass()).rejects.toThrow();
      expect(closed).toHaveBeenCalledTimes(2);
    } finally {
      closed.mockRestore();
    }
  });

  it('a pod Pending for resources in a policy-sized pool: the pass grows a node and the pod runs', async () => {
    await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
    await env.cycle();
    await env.cycle();
    await env.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'wants-room' },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'registry.k8s.io/pause:3.10',
              resources: { requests: { cpu: '1500m', memory: '1Gi' } },
            },
          ],
        },
      },
    });
    expect(await podPhase(env, 'wants-room')).toBe('Pending');
    env.sim.clock.advance(MINUTE);
    const r = await pass();
    expect(r.demand?.pending).toEqual(['default/wants-room']);
    expect(waitingServedByDeflate(r)).toBe(1);
    expect(r.results).toHaveLength(1);
    env.sim.clock.advance(1_000);
    expect(await podPhase(env, 'wants-room')).toBe('Running');
  });

  it('a Pending pod is not taken as served by growing a node whose taint it does not tolerate', async () => {
    // n1, the largest node, is tainted (a dedicated pool): the waiting pod cannot land there, though
    // growing it would leave the most room (where the pod would be placed if its taint were ignored)
    const [n1, n2, n3] = (await nodesOf(env)).sort((a, b) => b.allocatable.cpu - a.allocatable.cpu);
    const taint = await raw(env.sim.cluster(env.cluster), 'PATCH', `/api/v1/nodes/${n1!.name}`, {
      body: { spec: { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] } },
      contentType: 'application/merge-patch+json',
    });
    expect(taint.status).toBe(200);
    await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
    await env.cycle();
    await env.cycle();
    await workload(env, 'busy-2', n2!.name, '400m', '256Mi');
    await workload(env, 'busy-3', n3!.name, '400m', '256Mi');
    await env.cycle();
    await env.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'no-toleration' },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'registry.k8s.io/pause:3.10',
              resources: { requests: { cpu: '1500m', memory: '1Gi' } },
            },
          ],
        },
      },
    });
    expect(await podPhase(env, 'no-toleration')).toBe('Pending');
    const n1Before = (await balloonOn(env, n1!.name))!.spec;
    env.sim.clock.advance(MINUTE);
    const r = await pass();
    expect(r.demand?.pending).toEqual(['default/no-toleration']);
    // the tainted node is not grown for it; a node it tolerates is, and it runs there
    expect((await balloonOn(env, n1!.name))!.spec).toEqual(n1Before);
    env.sim.clock.advance(1_000);
    expect(await podPhase(env, 'no-toleration')).toBe('Running');
    const bound = await env.core.readNamespacedPod({ name: 'no-toleration', namespace: 'default' });
    expect([n2!.name, n3!.name]).toContain(bound.spec?.nodeName);
  });
});
