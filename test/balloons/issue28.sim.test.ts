/**
 * Issue 28's defects found from outside, each reproduced over the simulator first: a balloon taken for
 * what its template said rather than what its pod is; a refused inflate holding deflates back; pending
 * demand counted against nodes the pod can never land on.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Amounts, amounts, sub } from '../../shared/balloons/amounts.js';
import { BALLOON_NAME, BALLOON_NAMESPACE, PRIORITY_CLASS } from '../../shared/balloons/manifests.js';
import { BALLOON_FLOOR } from '../../shared/balloons/sizing.js';
import { raw } from '../sim/helpers.js';
import {
  type BalloonEnv,
  balloonOn,
  FIXED_SIZE_POLICY,
  nodesOf,
  podPhase,
  startBalloonEnv,
  workload,
} from './helpers.js';

const GI = 2 ** 30;
const explicit = (node: string, size: Amounts) => ({ node, size, requestedAt: 0, via: 'test' });
const DS_PATH = `/apis/apps/v1/namespaces/${BALLOON_NAMESPACE}/daemonsets/${BALLOON_NAME}`;

async function patch(env: BalloonEnv, path: string, body: object) {
  const res = await raw(env.sim.cluster(env.cluster), 'PATCH', path, {
    body,
    contentType: 'application/merge-patch+json',
  });
  if (res.status >= 300) throw new Error(`PATCH ${path}: ${res.status} ${res.text}`);
  return res.json;
}

async function template(env: BalloonEnv) {
  const ds = await env.client.apps.readNamespacedDaemonSet({
    name: BALLOON_NAME,
    namespace: BALLOON_NAMESPACE,
  });
  return ds.spec!.template.spec!;
}

/** Deletes the node's balloon; the DaemonSet controller recreates it from the template as it is now. */
async function recreate(env: BalloonEnv, node: string) {
  const b = (await balloonOn(env, node))!;
  await env.core.deleteNamespacedPod({ name: b.name, namespace: BALLOON_NAMESPACE });
  const again = (await balloonOn(env, node))!;
  expect(again.uid).not.toBe(b.uid);
  return env.core.readNamespacedPod({ name: again.name, namespace: BALLOON_NAMESPACE });
}

describe('issue 28 defects, over the simulator', () => {
  let env: BalloonEnv;
  beforeEach(async () => {
    env = await startBalloonEnv();
    await env.store.putPolicy(env.cluster, FIXED_SIZE_POLICY);
    await env.cycle();
    await env.cycle();
  });
  afterEach(async () => env.stop());

  for (const [what, drift, priority] of [
    ['removed', { priorityClassName: null }, 0],
    ['set to system-node-critical', { priorityClassName: 'system-node-critical' }, 2_000_001_000],
  ] as const)
    it(`1. a balloon made from a template whose priorityClassName was ${what} is never inflated, and the template is repaired`, async () => {
      const [n1, n2] = await nodesOf(env);
      await patch(env, DS_PATH, { spec: { template: { spec: drift } } });
      const pod = await recreate(env, n1!.name);
      expect(pod.spec?.priority).toBe(priority);
      const r = await env.cycle();
      expect((await balloonOn(env, n1!.name))?.spec).toEqual(BALLOON_FLOOR);
      expect(r.errors.join('\n')).toMatch(new RegExp(`node ${n1!.name}: balloon pod .*priority ${priority}`));
      expect(r.decisions.find((d) => d.node === n1!.name)?.state.unsound?.join()).toMatch(/priority/);
      // the others are untouched, and the template is written back as balloons need it
      expect((await balloonOn(env, n2!.name))?.spec).toEqual(sub(n2!.allocatable, amounts(2000, 4 * GI)));
      expect(r.repairs.join()).toMatch(/pod template had priorityClassName/);
      expect((await template(env)).priorityClassName).toBe(PRIORITY_CLASS);
      // a balloon recreated from the repaired template is sized again
      await recreate(env, n1!.name);
      const after = await env.cycle();
      expect(after.errors).toEqual([]);
      expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(n1!.allocatable, amounts(2000, 4 * GI)));
    });

  it('1. a balloon admitted while the PriorityClass was replaced at value 0 keeps priority 0: not inflated after the class is repaired', async () => {
    const [n1] = await nodesOf(env);
    await env.client.scheduling.deletePriorityClass({ name: PRIORITY_CLASS });
    await env.client.scheduling.createPriorityClass({
      body: {
        metadata: { name: PRIORITY_CLASS, labels: { 'app.kubernetes.io/managed-by': 'fleetscope' } },
        value: 0,
      },
    });
    const pod = await recreate(env, n1!.name);
    expect(pod.spec?.priority).toBe(0);
    const r = await env.cycle();
    expect(r.repairs.join()).toMatch(/value 0/);
    expect((await env.client.scheduling.readPriorityClass({ name: PRIORITY_CLASS })).value).toBe(1e9);
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(BALLOON_FLOOR);
    expect(r.errors.join()).toMatch(/priority 0.*preemptionPolicy PreemptLowerPriority/);
  });

  it('1. a second container in the balloon pod (a webhook sidecar) holds it at the floor, reported', async () => {
    const [n1] = await nodesOf(env);
    const t = await template(env);
    const sidecar = {
      name: 'sidecar',
      image: 'registry.k8s.io/pause:3.10',
      resources: { requests: { cpu: '500m' } },
    };
    await patch(env, DS_PATH, { spec: { template: { spec: { containers: [...t.containers, sidecar] } } } });
    const pod = await recreate(env, n1!.name);
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(['balloon', 'sidecar']);
    const r = await env.cycle();
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(BALLOON_FLOOR);
    expect(r.errors.join()).toMatch(/containers \[balloon, sidecar\]/);
    expect((await template(env)).containers.map((c) => c.name)).toEqual(['balloon']);
  });

  for (const code of [403, 500])
    it(`2. a deflate is never held back by the back-off of a refused inflate (${code})`, async () => {
      const [n1] = await nodesOf(env);
      await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(2000, 4 * GI)));
      await env.cycle();
      await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(1000, 2 * GI)));
      const fault = env.sim.faults.inject({
        cluster: env.cluster,
        match: { method: 'PATCH', pathIncludes: '/resize' },
        fault: { type: 'status', code },
        times: 10,
      });
      const refused = await env.cycle();
      env.sim.faults.clear(fault);
      expect(refused.reports.map((x) => x.kind)).toContain('refused');
      expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(n1!.allocatable, amounts(2000, 4 * GI)));
      // the node must now grow: the deflate goes at once, whatever the inflate's back-off
      await env.store.putRequest(env.cluster, explicit(n1!.name, amounts(3000, 6 * GI)));
      await env.cycle();
      expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(n1!.allocatable, amounts(3000, 6 * GI)));
    });

  it('3. pods pinned each to its own node grow each its own node, not the roomiest', async () => {
    const [n1, ...full] = await nodesOf(env);
    // n1 is the roomiest; the others are nearly full, and a pod pinned to each waits for room there
    for (const n of full) await workload(env, `busy-${n.name}`, n.name, '1800m', '1Gi');
    for (const n of full)
      await env.core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: `pinned-${n.name}` },
          spec: {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [
                    { matchFields: [{ key: 'metadata.name', operator: 'In', values: [n.name] }] },
                  ],
                },
              },
            },
            containers: [
              {
                name: 'app',
                image: 'registry.k8s.io/pause:3.10',
                resources: { requests: { cpu: '1', memory: '1Gi' } },
              },
            ],
          },
        },
      });
    env.sim.clock.advance(1000);
    for (const n of full) expect(await podPhase(env, `pinned-${n.name}`)).toBe('Pending');
    await env.store.putPolicy(env.cluster, { ...FIXED_SIZE_POLICY, max: amounts(8000, 16 * GI) });
    const r = await env.cycle();
    expect(r.decisions.find((d) => d.node === n1!.name)?.desired?.size.cpu).toBe(2000);
    for (const n of full)
      expect(r.decisions.find((d) => d.node === n.name)?.desired?.size.cpu).toBeGreaterThanOrEqual(2800);
    env.sim.clock.advance(5000);
    for (const n of full) expect(await podPhase(env, `pinned-${n.name}`)).toBe('Running');
  });

  it('3. a pod whose affinity selects another pool, or that another scheduler places, grows no node', async () => {
    const [n1] = await nodesOf(env);
    const body = (name: string, spec: object) => ({
      metadata: { name },
      spec: {
        ...spec,
        containers: [
          {
            name: 'app',
            image: 'registry.k8s.io/pause:3.10',
            resources: { requests: { cpu: '2500m', memory: '1Gi' } },
          },
        ],
      },
    });
    await env.core.createNamespacedPod({
      namespace: 'default',
      body: body('other-pool', {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['gpu'] }] }],
            },
          },
        },
      }),
    });
    await env.core.createNamespacedPod({
      namespace: 'default',
      body: body('other-scheduler', { schedulerName: 'volcano' }),
    });
    env.sim.clock.advance(1000);
    await env.store.putPolicy(env.cluster, { ...FIXED_SIZE_POLICY, max: amounts(8000, 16 * GI) });
    const r = await env.cycle();
    expect(r.decisions.find((d) => d.node === n1!.name)?.desired?.size.cpu).toBe(2000);
    for (const d of r.decisions) expect(d.desired?.size).toEqual(amounts(2000, 4 * GI));
  });

  it('5. an explicit size belongs to the node object it was set for: dropped when the node goes, never applied to a new node of that name', async () => {
    const [n1] = await nodesOf(env);
    const uid = (await env.core.readNode({ name: n1!.name })).metadata!.uid!;
    await env.store.putRequest(env.cluster, { ...explicit(n1!.name, amounts(1000, 2 * GI)), nodeUid: uid });
    await env.cycle();
    expect((await balloonOn(env, n1!.name))?.spec).toEqual(sub(n1!.allocatable, amounts(1000, 2 * GI)));
    // the VM goes, and a bigger one registers under the recycled name
    env.sim.cluster(env.cluster).removeNode(n1!.name);
    env.sim.cluster(env.cluster).addNode({
      name: n1!.name,
      cpu: '32',
      memory: '128Gi',
      labels: { 'kubernetes.io/os': 'linux' },
    });
    const r = await env.cycle();
    expect(r.errors).toEqual([]);
    expect(r.dropped.join()).toMatch(
      new RegExp(`explicit size for node ${n1!.name} dropped: .*another node now`),
    );
    expect((await env.store.load(env.cluster)).requests).toEqual([]);
    // the new node is sized by its pool's policy, not by the old node's 1 CPU / 2Gi
    expect(r.decisions.find((d) => d.node === n1!.name)?.desired?.source.kind).toBe('policy');
    const again = await env.cycle();
    expect(again.errors).toEqual([]);
    expect(again.dropped).toEqual([]);
  });

  it('5. an explicit size whose node was deleted is dropped once, and the cycle has no error', async () => {
    const [, n2] = await nodesOf(env);
    await env.store.putRequest(env.cluster, explicit(n2!.name, amounts(1000, 2 * GI)));
    await env.cycle();
    env.sim.cluster(env.cluster).removeNode(n2!.name);
    const r = await env.cycle();
    expect(r.errors).toEqual([]);
    expect(r.dropped).toEqual([
      `explicit size for node ${n2!.name} dropped: node ${n2!.name} no longer exists`,
    ]);
    expect((await env.store.load(env.cluster)).requests).toEqual([]);
  });

  it('2. a LimitRange and a ResourceQuota in kube-system are reported with what they break; the cycle goes on', async () => {
    await env.core.createNamespacedLimitRange({
      namespace: BALLOON_NAMESPACE,
      body: {
        metadata: { name: 'defaults' },
        spec: { limits: [{ type: 'Container', _default: { cpu: '2' } }] },
      },
    });
    await env.core.createNamespacedResourceQuota({
      namespace: BALLOON_NAMESPACE,
      body: { metadata: { name: 'quota' }, spec: { hard: { 'requests.cpu': '4' } } },
    });
    const r = await env.cycle();
    expect(r.errors).toEqual([
      'LimitRange kube-system/defaults (Container) injects limits (cpu 2) into new balloons: an inflate past them is refused, so such a balloon is held at the floor',
      'ResourceQuota kube-system/quota bounds requests.cpu 4: an inflate past what is left is refused (403)',
    ]);
    expect(r.decisions.length).toBe(3);
  });
});

describe('issue 28, owners: a DaemonSet of the balloon name that fleetscope did not create', () => {
  let env: BalloonEnv;
  beforeEach(async () => {
    env = await startBalloonEnv();
  });
  afterEach(async () => env.stop());

  it('is never written, and its pods are impostors: never resized, reported', async () => {
    const labels = { app: 'theirs', 'fleetscope.io/balloon': 'true' };
    await env.client.apps.createNamespacedDaemonSet({
      namespace: BALLOON_NAMESPACE,
      body: {
        metadata: { name: BALLOON_NAME },
        spec: {
          selector: { matchLabels: { app: 'theirs' } },
          template: {
            metadata: { labels },
            spec: {
              containers: [
                {
                  name: 'balloon',
                  image: 'registry.k8s.io/pause:3.10',
                  resources: { requests: { cpu: '100m', memory: '128Mi' } },
                },
              ],
            },
          },
        },
      },
    });
    const before = await env.client.apps.readNamespacedDaemonSet({
      name: BALLOON_NAME,
      namespace: BALLOON_NAMESPACE,
    });
    await env.store.putPolicy(env.cluster, FIXED_SIZE_POLICY);
    await env.cycle();
    const r = await env.cycle();
    expect(r.errors.join()).toMatch(
      /DaemonSet kube-system\/fleetscope-balloon is not fleetscope's .*left alone/,
    );
    const after = await env.client.apps.readNamespacedDaemonSet({
      name: BALLOON_NAME,
      namespace: BALLOON_NAMESPACE,
    });
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
    const pods = await env.core.listNamespacedPod({
      namespace: BALLOON_NAMESPACE,
      labelSelector: 'app=theirs',
    });
    expect(pods.items.length).toBe(3);
    for (const p of pods.items) {
      expect(p.spec?.containers[0]?.resources?.requests).toEqual({ cpu: '100m', memory: '128Mi' });
      expect(p.metadata?.generation ?? 1).toBe(1);
    }
    expect(r.impostors.length).toBe(3);
  });
});
