/**
 * Issue 28 on a whole real cluster (1.36: the real scheduler, DaemonSet controller, admission and
 * kubelets judge): demand only toward the nodes a pending pod can land on; a balloon recreated from a
 * drifted template (priority 0, preemptible) held at the floor and the template repaired; a LimitRange in
 * kube-system injecting a limit into a new balloon, reported, and that balloon never inflated; and
 * turning balloons off with such balloons left (held at the floor already): the deflate task ends.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { amounts } from '../../shared/balloons/amounts.js';
import { deflateEveryBalloon } from '../../shared/balloons/feature-hooks.js';
import type { BalloonCycleResult } from '../../shared/balloons/ledger.js';
import {
  BALLOON_LABEL,
  BALLOON_NAME,
  BALLOON_NAMESPACE,
  PRIORITY_CLASS,
} from '../../shared/balloons/manifests.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import { BALLOON_FLOOR } from '../../shared/balloons/sizing.js';
import type { BalloonStore } from '../../shared/balloons/store.js';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import type { TaskContext } from '../../shared/features/spec.js';
import { parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { type CycleEnv, PAUSE, rawPods, resizeSettled, startCycleEnv } from '../cluster/helpers.js';
import { describeRealCluster } from '../support/real-cluster.js';
import { realBalloonCycle } from './helpers.js';

const CLUSTER = 'balloons-cluster';
const NS = 'work';
const GI = 2 ** 30;
const node = (name: string) => ({ name, cpus: 2, memory: '4Gi', labels: { pool: 'elastic' } });
const POLICY = validatePolicy({
  name: 'elastic',
  selector: 'pool=elastic',
  headroomPercent: 0,
  headroomMin: { cpu: '0', memory: '0' },
  min: { cpu: '1', memory: '2Gi' },
  max: { cpu: '2', memory: '4Gi' },
  step: { cpu: '100m', memory: '256Mi' },
  shrinkCooldownMinutes: 0,
});

describeRealCluster('balloons, issue 28', { nodes: [node('roomy'), node('full-a'), node('full-b')] }, (k) => {
  let env: CycleEnv;
  let store: BalloonStore;
  let n = 0;
  const balloons = () => rawPods(k, BALLOON_NAMESPACE, `${BALLOON_LABEL}=true`);
  const balloonOn = async (name: string) => (await balloons()).find((p) => p.spec?.nodeName === name);
  const specOf = (p: V1Pod | undefined) => {
    const r = p?.spec?.containers.find((c) => c.name === 'balloon')?.resources?.requests;
    return amounts(parseCpu(r?.cpu ?? '0'), parseMemory(r?.memory ?? '0'));
  };
  const allocatable = async (name: string) => {
    const a = (await env.client.core.readNode({ name })).status?.allocatable;
    return amounts(parseCpu(a?.cpu ?? '0'), parseMemory(a?.memory ?? '0'));
  };

  /** One balloon cycle, then until the real kubelets have answered every balloon resize. */
  const cycle = async (): Promise<BalloonCycleResult> => {
    env.clock.advance(60_000);
    const r = await realBalloonCycle({
      client: env.client,
      store,
      cluster: CLUSTER,
      cycleId: `real/${++n}`,
      now: () => env.clock.now(),
    });
    await k.waitFor('the kubelets to answer the balloon resizes', async () =>
      (await balloons()).every(resizeSettled),
    );
    return r;
  };
  /** Deletes the node's balloon and waits for the real DaemonSet controller's replacement to run. */
  const recreate = async (name: string) => {
    const old = await balloonOn(name);
    await env.client.core.deleteNamespacedPod({
      name: old?.metadata?.name ?? '',
      namespace: BALLOON_NAMESPACE,
      gracePeriodSeconds: 0,
    });
    return k.waitFor(`a new balloon on ${name} Running`, async () => {
      const p = await balloonOn(name);
      return p && p.metadata?.uid !== old?.metadata?.uid && p.status?.phase === 'Running' ? p : undefined;
    });
  };
  const pod = (name: string, cpu: string, spec: object = {}) => ({
    metadata: { name },
    spec: {
      ...spec,
      containers: [{ name: 'app', image: PAUSE, resources: { requests: { cpu, memory: '256Mi' } } }],
    },
  });

  beforeAll(async () => {
    env = await startCycleEnv(k);
    store = new DynamoBalloonStore(env.runtime.db, env.runtime.table);
    await k.namespace(NS);
    for (const name of ['full-a', 'full-b'])
      await env.client.core.createNamespacedPod({
        namespace: NS,
        body: pod(`busy-${name}`, '800m', { nodeSelector: { 'kubernetes.io/hostname': name } }),
      });
    for (const name of ['full-a', 'full-b'])
      await k.waitForPod(NS, `busy-${name}`, (p) => p.status?.phase === 'Running');
    await store.putPolicy(CLUSTER, POLICY);
    await cycle();
    await k.waitFor('three balloons Running', async () => {
      const b = await balloons();
      return b.length === 3 && b.every((p) => p.status?.phase === 'Running');
    });
    await cycle();
  }, 240_000);
  afterAll(async () => {
    await env?.stop();
  });

  it('3. pods pinned to the full nodes grow those nodes, not the roomiest; the real scheduler then binds them', async () => {
    for (const name of ['roomy', 'full-a', 'full-b'])
      expect(specOf(await balloonOn(name)).cpu).toBeGreaterThan(800);
    for (const name of ['full-a', 'full-b'])
      await env.client.core.createNamespacedPod({
        namespace: NS,
        body: pod(`pinned-${name}`, '300m', {
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchFields: [{ key: 'metadata.name', operator: 'In', values: [name] }] },
                ],
              },
            },
          },
        }),
      });
    for (const name of ['full-a', 'full-b'])
      await k.waitForPodCondition(NS, `pinned-${name}`, 'PodScheduled', 'False', 'Unschedulable');
    const r = await cycle();
    for (const name of ['full-a', 'full-b'])
      expect(r.decisions.find((d) => d.node === name)?.desired?.size.cpu).toBeGreaterThanOrEqual(1100);
    for (const name of ['full-a', 'full-b'])
      await k.waitForPod(NS, `pinned-${name}`, (p) => p.status?.phase === 'Running', 60_000);
    const events = await k.events();
    expect(events.filter((e) => e.reason === 'Preempted' || e.reason === 'Evicted')).toEqual([]);
  });

  it('3. a gated pod and another scheduler’s pod wait too, and grow nothing', async () => {
    const onRoomy = { nodeSelector: { 'kubernetes.io/hostname': 'roomy' } };
    await env.client.core.createNamespacedPod({
      namespace: NS,
      body: pod('other-scheduler', '1500m', { ...onRoomy, schedulerName: 'volcano' }),
    });
    await env.client.core.createNamespacedPod({
      namespace: NS,
      body: pod('gated', '1500m', { ...onRoomy, schedulingGates: [{ name: 'example.com/wait' }] }),
    });
    await k.waitForPodCondition(NS, 'gated', 'PodScheduled', 'False', 'SchedulingGated');
    const before = specOf(await balloonOn('roomy'));
    const r = await cycle();
    expect(r.decisions.find((d) => d.node === 'roomy')?.desired?.size.cpu).toBe(1000);
    expect(specOf(await balloonOn('roomy'))).toEqual(before);
    for (const name of ['gated', 'other-scheduler'])
      await env.client.core.deleteNamespacedPod({ name, namespace: NS });
  });

  it('1. a balloon recreated from a template without its priorityClassName runs at priority 0: held at the floor, the template repaired', async () => {
    const ds = `/apis/apps/v1/namespaces/${BALLOON_NAMESPACE}/daemonsets/${BALLOON_NAME}`;
    const res = await k.raw(
      'PATCH',
      ds,
      { spec: { template: { spec: { priorityClassName: null } } } },
      'application/merge-patch+json',
    );
    expect(res.status).toBe(200);
    const fresh = await recreate('roomy');
    expect(fresh.spec?.priority ?? 0).toBe(0);
    expect(fresh.spec?.preemptionPolicy).toBe('PreemptLowerPriority');
    const r = await cycle();
    expect(specOf(await balloonOn('roomy'))).toEqual(BALLOON_FLOOR);
    expect(r.errors.join('\n')).toMatch(
      /node roomy: balloon pod .* has priority 0 .*preemptionPolicy PreemptLowerPriority/,
    );
    expect(r.repairs.join()).toMatch(/pod template had priorityClassName unset: repaired/);
    const template = await env.client.apps.readNamespacedDaemonSet({
      name: BALLOON_NAME,
      namespace: BALLOON_NAMESPACE,
    });
    expect(template.spec?.template.spec?.priorityClassName).toBe(PRIORITY_CLASS);
    // recreated from the repaired template, it is a balloon again and is sized
    const again = await recreate('roomy');
    expect(again.spec?.priority).toBe(1_000_000_000);
    await cycle();
    const sized = specOf(await balloonOn('roomy'));
    expect(sized).toEqual(
      amounts((await allocatable('roomy')).cpu - 1000, (await allocatable('roomy')).memory - 2 * GI),
    );
  });

  it('2. a LimitRange in kube-system injects a limit into a new balloon: reported, and that balloon is never inflated', async () => {
    await env.client.core.createNamespacedLimitRange({
      namespace: BALLOON_NAMESPACE,
      body: {
        metadata: { name: 'defaults' },
        spec: { limits: [{ type: 'Container', _default: { cpu: '500m' } }] },
      },
    });
    try {
      const fresh = await recreate('full-a');
      expect(fresh.spec?.containers[0]?.resources?.limits?.cpu).toBe('500m');
      const r = await cycle();
      const errors = r.errors.join('\n');
      expect(errors).toMatch(/LimitRange kube-system\/defaults \(Container\) injects limits \(cpu 500m\)/);
      expect(errors).toMatch(/node full-a: balloon pod .* has limits on container balloon/);
      expect(specOf(await balloonOn('full-a'))).toEqual(BALLOON_FLOOR);
      // no inflate was even tried into the limit (the server would refuse it: requests above limits)
      expect(r.reports.filter((x) => x.kind === 'refused')).toEqual([]);
      // the other nodes go on
      expect(specOf(await balloonOn('full-b')).cpu).toBeGreaterThan(BALLOON_FLOOR.cpu);
    } finally {
      await env.client.core.deleteNamespacedLimitRange({ name: 'defaults', namespace: BALLOON_NAMESPACE });
    }
  });

  it('turning balloons off with unsound balloons left (priority 0 and a sidecar, a limit): the deflate task deflates the rest and ends', async () => {
    const ds = `/apis/apps/v1/namespaces/${BALLOON_NAMESPACE}/daemonsets/${BALLOON_NAME}`;
    // As a webhook's sidecar would: the pod holds more than its balloon container, which is at the floor.
    const sidecar = {
      name: 'sidecar',
      image: PAUSE,
      resources: { requests: { cpu: '100m', memory: '64Mi' } },
    };
    const patch = { spec: { template: { spec: { priorityClassName: null, containers: [sidecar] } } } };
    expect((await k.raw('PATCH', ds, patch, 'application/strategic-merge-patch+json')).status).toBe(200);
    const fresh = await recreate('full-b');
    expect(fresh.spec?.priority ?? 0).toBe(0);
    expect(fresh.spec?.containers.map((c) => c.name).sort()).toEqual(['balloon', 'sidecar']);
    // full-a's balloon still has the LimitRange's limit (test 2); roomy's is sound and inflated.
    expect(specOf(await balloonOn('roomy')).cpu).toBeGreaterThan(BALLOON_FLOOR.cpu);
    const ctx = {
      cluster: CLUSTER,
      client: async () => env.client,
      balloons: store,
      get now() {
        return env.clock.now();
      },
    } as unknown as TaskContext;
    let outcome = await deflateEveryBalloon(ctx);
    for (let i = 0; i < 5 && !outcome.done; i++) {
      await k.waitFor('the kubelets to answer the balloon resizes', async () =>
        (await balloons()).every(resizeSettled),
      );
      env.clock.advance(60_000);
      outcome = await deflateEveryBalloon(ctx);
    }
    expect(outcome).toEqual({ done: true });
    for (const name of ['roomy', 'full-a', 'full-b'])
      expect(specOf(await balloonOn(name))).toEqual(BALLOON_FLOOR);
  });
});
