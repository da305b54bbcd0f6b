/**
 * KEP-5836 on 1.37 (issue 15, item 8): the scheduler may preempt lower-priority pods to complete a
 * Deferred resize. On the nodes balloons manage fleetscope puts its key in the node's
 * `spec.podPreemptionPolicy.disableResizePreemption`, so such a resize waits for the balloon to deflate
 * (grow on demand) instead of taking a workload's room; the key goes when the node leaves management
 * and when the feature turns off; other owners' keys are never dropped; a 1.36 server gets no node patch.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { balloonsLeftovers, releaseResizePreemptionOptOut } from '../../shared/balloons/feature-hooks.js';
import { serveDemand } from '../../shared/balloons/grow.js';
import { NodeOptOutApi } from '../../shared/balloons/node-opt-out.js';
import { OPT_OUT_KEY } from '../../shared/balloons/opt-out.js';
import { RBAC_FEATURE } from '../../shared/balloons/opt-out-step.js';
import { balloonSettingsFromEnv } from '../../shared/balloons/settings.js';
import { resizePreemptionText } from '../../shared/balloons/summary-model.js';
import { CAPABILITIES } from '../../shared/capabilities.js';
import type { TaskContext } from '../../shared/features/spec.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { rbacManifests, withRequired } from '../../shared/platform/rbac-manifests.js';
import { raw } from '../sim/helpers.js';
import {
  condition,
  createPod,
  createPriorityClass,
  getPod,
  podExists,
  resizePod,
  workloadPod,
} from '../sim/pod-helpers.js';
import { collectionPath } from '../support/rbac-paths.js';
import { type BalloonEnv, balloonOn, nodesOf, startBalloonEnv, WHOLE_CLUSTER_POLICY } from './helpers.js';

const OTHER = 'autoscaling.example.com/vpa-updater';

let env: BalloonEnv;
afterEach(async () => env?.stop());

const sim = () => env.sim.cluster(env.cluster);
const keysOf = (node: string): string[] =>
  sim().store.get('nodes', node).spec?.podPreemptionPolicy?.disableResizePreemption ?? [];
/** Another owner's write to the node's list (merge patch: the whole list, as an admin would). */
const setKeys = async (node: string, keys: string[] | null) => {
  const r = await raw(sim(), 'PATCH', `/api/v1/nodes/${node}`, {
    body: { spec: { podPreemptionPolicy: keys === null ? null : { disableResizePreemption: keys } } },
    contentType: 'application/merge-patch+json',
  });
  expect(r.status, r.text).toBe(200);
};
/** Node patches the simulated apiserver served. */
const served = () => ({ nodePatches: sim().stats().byMethodAndKind['PATCH nodes'] ?? 0 });

async function oneThirtySeven(version = '1.37.0') {
  env = await startBalloonEnv({ kubernetesVersion: version, nodes: 2 });
  await createPriorityClass(sim(), 'low', 100);
  await createPriorityClass(sim(), 'high', 1000);
  const [n1, n2] = await nodesOf(env);
  return { n1: n1!.name, n2: n2!.name };
}

/**
 * A workload (high priority) and a lower-priority pod on a ballooned node; the workload then asks for
 * more than the node has free, but less than free plus the other pod: preempting it would make room.
 */
async function deferredResizeOn(node: string) {
  await createPod(
    sim(),
    workloadPod('victim', { node, cpu: '400m', memory: '64Mi', priorityClassName: 'low' }),
  );
  await createPod(
    sim(),
    workloadPod('grower', { node, cpu: '300m', memory: '64Mi', priorityClassName: 'high' }),
  );
  await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
  const first = await env.cycle();
  await env.cycle();
  const free = first.decisions.find((d) => d.node === node)!;
  const balloon = (await balloonOn(env, node))!;
  const allocatable = free.state.allocatable.cpu;
  const room = allocatable - balloon.actual.cpu - 700; // what the balloon and both pods leave
  expect(room).toBeGreaterThanOrEqual(0);
  await resizePod(sim(), 'grower', { cpu: `${300 + room + 200}m`, memory: '64Mi' });
}

const growPass = () =>
  serveDemand({
    cluster: env.cluster,
    client: env.client,
    store: env.store,
    settings: { ...balloonSettingsFromEnv({}), settleMs: 0 },
    now: () => env.sim.clock.now(),
    passId: String(env.sim.clock.now()),
  });

describe('KEP-5836 on a 1.37 cluster', () => {
  it('without fleetscope key, a Deferred resize on a ballooned node preempts the lower-priority pod', async () => {
    const { n1 } = await oneThirtySeven();
    await createPod(
      sim(),
      workloadPod('victim', { node: n1, cpu: '400m', memory: '64Mi', priorityClassName: 'low' }),
    );
    await createPod(
      sim(),
      workloadPod('grower', { node: n1, cpu: '300m', memory: '64Mi', priorityClassName: 'high' }),
    );
    await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
    await env.cycle();
    await env.cycle();
    // A fleetscope without KEP-5836 support: the node carries no key.
    await setKeys(n1, null);
    const balloon = (await balloonOn(env, n1))!;
    const allocatable = (await nodesOf(env)).find((n) => n.name === n1)!.allocatable.cpu;
    const room = allocatable - balloon.actual.cpu - 700;
    await resizePod(sim(), 'grower', { cpu: `${300 + room + 200}m`, memory: '64Mi' });
    expect(await podExists(sim(), 'victim')).toBe(false);
    expect(condition(await getPod(sim(), 'grower'), 'PodResizePending')).toBeUndefined();
  });

  it('with fleetscope: its key is on the managed node, nothing is preempted, the resize waits for the balloon to deflate', async () => {
    const { n1 } = await oneThirtySeven();
    await deferredResizeOn(n1);
    expect(keysOf(n1)).toEqual([OPT_OUT_KEY]);
    const grower = await getPod(sim(), 'grower');
    expect(condition(grower, 'PodResizePending')).toMatch(/^True Deferred/);
    expect(condition(grower, 'PodResizePreemptionDisabled')).toMatch(
      /^True PreemptionDisabledByNodePolicy: .*fleetscope\.io\/balloons/,
    );
    expect(await podExists(sim(), 'victim')).toBe(true);
    // The grow pass (every minute) sizes the node: the balloon deflates, the kubelet admits the resize.
    env.sim.clock.advance(60_000);
    const r = await growPass();
    // what the operator sees: the key is set and the kubelet holds the resize without preemption
    const state = r.results[0]!.decisions.find((d) => d.node === n1)!.state;
    expect(state.resizePreemption).toEqual({ optedOut: true, held: ['default/grower'] });
    // stored, and shown by `balloons status -o wide` (RESIZE PREEMPTION) and the cycle's summary
    const stored = (await env.store.state(env.cluster))!.nodes[n1]!;
    expect(resizePreemptionText(stored)).toBe(
      'opted out; kubelet holds 1 resize(s) without preemption (default/grower)',
    );
    env.sim.clock.advance(1_000);
    const grown = await getPod(sim(), 'grower');
    expect(condition(grown, 'PodResizePending')).toBeUndefined();
    expect(grown.metadata.uid).toBe(grower.metadata.uid);
    expect((await getPod(sim(), 'victim')).status.phase).toBe('Running');
    expect(
      sim()
        .store.list('pods')
        .filter((p) => p.status?.phase !== 'Running'),
    ).toEqual([]);
  });

  it("keeps another owner's key, also one written between fleetscope's read and its patch", async () => {
    const { n1, n2 } = await oneThirtySeven();
    await setKeys(n1, [OTHER]);
    await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
    const detect = vi.spyOn(NodeOptOutApi.prototype, 'fieldServed');
    const r = await env.cycle({
      alterRead: (read) => ({
        ...read,
        nodes: async () => {
          const nodes = await read.nodes();
          await setKeys(n2, ['example.com/late']); // after the cycle read n2
          return nodes;
        },
      }),
    });
    expect(r.errors).toEqual([]);
    expect(keysOf(n1)).toEqual([OTHER, OPT_OUT_KEY]);
    expect(keysOf(n2)).toEqual(['example.com/late', OPT_OUT_KEY]);
    // The server knows the field: asked once for the cycle, not once per node.
    expect(detect).toHaveBeenCalledTimes(1);
    expect(await detect.mock.results[0]!.value).toMatchObject({ served: true });
    detect.mockRestore();
  });

  it('removes only its key when the node leaves management, and nothing when it has none', async () => {
    const { n1, n2 } = await oneThirtySeven();
    await setKeys(n1, [OTHER]);
    await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
    await env.cycle();
    expect(keysOf(n1)).toEqual([OTHER, OPT_OUT_KEY]);
    // the policy now selects n2 only
    await env.store.putPolicy(env.cluster, {
      ...WHOLE_CLUSTER_POLICY,
      selector: `kubernetes.io/hostname=${n2}`,
    });
    await env.cycle();
    expect(keysOf(n1)).toEqual([OTHER]);
    expect(keysOf(n2)).toEqual([OPT_OUT_KEY]);
    // the policy is deleted: nothing is managed, the last key goes too, then nothing more is sent
    await env.store.deletePolicy(env.cluster, WHOLE_CLUSTER_POLICY.name);
    for (let i = 0; i < 3; i++) await env.cycle();
    expect(keysOf(n2)).toEqual([]);
    const patches = served().nodePatches;
    await env.cycle();
    expect(served().nodePatches).toBe(patches);
  });

  it('a list of 20 other owners is left whole and the node is reported', async () => {
    const { n1 } = await oneThirtySeven();
    const twenty = Array.from({ length: 20 }, (_, i) => `example.com/owner-${i}`);
    await setKeys(n1, twenty);
    await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
    const r = await env.cycle();
    expect(keysOf(n1)).toEqual(twenty);
    expect(r.errors).toContainEqual(
      expect.stringMatching(new RegExp(`^node ${n1}: .*already holds 20 keys`)),
    );
    expect(r.decisions.find((d) => d.node === n1)!.state.resizePreemption).toMatchObject({ optedOut: false });
  });

  it("the feature's off task removes fleetscope's key and keeps the others", async () => {
    const { n1, n2 } = await oneThirtySeven();
    await setKeys(n1, [OTHER]);
    await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
    await env.cycle();
    expect(keysOf(n2)).toEqual([OPT_OUT_KEY]);
    const ctx = { client: async () => env.client } as unknown as TaskContext;
    // what `features get` reports as left behind while the key is there
    expect(await balloonsLeftovers(ctx)).toEqual([
      `2 node(s) still carry ${OPT_OUT_KEY} in spec.podPreemptionPolicy.disableResizePreemption: ${n1}, ${n2}`,
    ]);
    expect(await releaseResizePreemptionOptOut(ctx)).toEqual({ done: true });
    expect([keysOf(n1), keysOf(n2)]).toEqual([[OTHER], []]);
    expect(await balloonsLeftovers(ctx)).toEqual([]);
  });
});

describe('KEP-5836 on a 1.37 cluster with its alpha gate off (the field in the OpenAPI, dropped on write)', () => {
  it('one patch finds the field dropped, said once; no key is added again for a day', async () => {
    env = await startBalloonEnv({ kubernetesVersion: '1.37.0', nodes: 2, resizePreemptionGate: false });
    await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
    const first = await env.cycle();
    expect(first.errors).toEqual([
      expect.stringMatching(/dropped .*InPlacePodVerticalScalingSchedulerPreemption/),
    ]);
    expect(served().nodePatches).toBe(1);
    for (let i = 0; i < 3; i++) expect((await env.cycle()).errors).toEqual([]);
    expect(served().nodePatches).toBe(1);
    env.sim.clock.advance(24 * 3_600_000);
    await env.cycle();
    expect(served().nodePatches).toBe(2);
  });
});

describe('KEP-5836 on a 1.36 cluster', () => {
  it('no node patch is ever sent: managed nodes, leaving management, and the off task', async () => {
    const { n1 } = await oneThirtySeven('1.36.2');
    const reads = vi.spyOn(RawReader.prototype, 'get');
    await deferredResizeOn(n1);
    await env.cycle();
    // core/v1's OpenAPI document is read once; later cycles see its hash unchanged in the small index
    const read = (op: string) => reads.mock.calls.filter((c) => c[0] === op).length;
    expect([read('read core/v1 OpenAPI v3'), read('read OpenAPI v3 index')]).toEqual([1, 3]);
    reads.mockRestore();
    await env.store.deletePolicy(env.cluster, WHOLE_CLUSTER_POLICY.name);
    await env.cycle();
    const ctx = { client: async () => env.client } as unknown as TaskContext;
    expect(await releaseResizePreemptionOptOut(ctx)).toEqual({ done: true });
    expect(served().nodePatches).toBe(0);
    expect(sim().store.get('nodes', n1).spec.podPreemptionPolicy).toBeUndefined();
  });
});

describe('KEP-5836 under the RBAC `fleetscope rbac` generates', () => {
  /** A client for `user`, bound to what `fleetscope rbac --capability balloons [--with ...]` prints. */
  const identity = async (user: string, withOptOut: boolean) => {
    const caps = withRequired(CAPABILITIES, ['fleet', 'balloons']);
    const subjects = [{ kind: 'User' as const, name: user }];
    for (const m of rbacManifests(caps, { subjects, prefix: user, with: withOptOut ? [RBAC_FEATURE] : [] })) {
      const r = await raw(sim(), 'POST', collectionPath(m.object as never), { body: m.object });
      expect(r.status, r.text).toBe(201);
    }
    const kubeconfig = await sim().kubeconfigFor({ user });
    return ClusterClient.fromKubeconfig(kubeconfig, { cluster: env.cluster, context: env.cluster });
  };

  it('without the opt-in the node patch is refused and said once, naming the flag; with it the key is written', async () => {
    env = await startBalloonEnv({ kubernetesVersion: '1.37.0', nodes: 2, rbac: true });
    const [n1, n2] = (await nodesOf(env)).map((n) => n.name);
    await env.store.putPolicy(env.cluster, WHOLE_CLUSTER_POLICY);
    const plain = await identity('fs-plain', false);
    const narrow = await identity('fs-opt-out', true);
    try {
      const refused = await env.cycle({ client: plain });
      expect(refused.errors).toEqual([expect.stringContaining('patch on nodes is forbidden')]);
      expect(refused.errors[0]).toContain('fleetscope rbac --with resize-preemption-opt-out');
      expect([keysOf(n1!), keysOf(n2!)]).toEqual([[], []]);
      const granted = await env.cycle({ client: narrow });
      expect(granted.errors).toEqual([]);
      expect([keysOf(n1!), keysOf(n2!)]).toEqual([[OPT_OUT_KEY], [OPT_OUT_KEY]]);
    } finally {
      await plain.close();
      await narrow.close();
    }
  });
});
