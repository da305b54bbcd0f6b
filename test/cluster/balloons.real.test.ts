import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Amounts, amounts, sub } from '../../shared/balloons/amounts.js';
import type { BalloonCycleResult } from '../../shared/balloons/ledger.js';
import { BALLOON_LABEL, BALLOON_NAME, PRIORITY_CLASS } from '../../shared/balloons/manifests.js';
import type { BalloonStore } from '../../shared/balloons/store.js';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import { parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { realBalloonCycle, WHOLE_CLUSTER_POLICY } from '../balloons/helpers.js';
import { describeRealCluster } from '../support/real-cluster.js';
import { type CycleEnv, PAUSE, rawPods, resizeSettled, startCycleEnv } from './helpers.js';

const CLUSTER = 'b-cluster';
const GI = 2 ** 30;
const q = (l: Record<string, string> | undefined): Amounts =>
  amounts(parseCpu(l?.cpu ?? '0'), parseMemory(l?.memory ?? '0'));

describeRealCluster(
  'balloons',
  {
    nodes: [
      { name: 'pool-a', cpus: 3, memory: '6Gi' },
      { name: 'pool-b', cpus: 3, memory: '6Gi' },
    ],
  },
  (k) => {
    let env: CycleEnv;
    let store: BalloonStore;
    let n = 0;
    const allocatable = new Map<string, Amounts>();
    const balloons = () => rawPods(k, 'kube-system', `${BALLOON_LABEL}=true`);
    const specOf = (p: V1Pod) => q(p.spec?.containers[0]?.resources?.requests);
    const runningOf = (p: V1Pod) => q(p.status?.containerStatuses?.[0]?.resources?.requests);

    /** One balloon cycle a minute later (wall time for the kubelets: the cycle's sleep is real). */
    const cycle = async (): Promise<BalloonCycleResult> => {
      env.clock.advance(60_000);
      const result = await realBalloonCycle({
        client: env.client,
        store,
        cluster: CLUSTER,
        cycleId: `cluster/${++n}`,
        now: () => env.clock.now(),
      });
      await k.waitFor('the kubelets to answer the balloons’ resizes', async () =>
        (await balloons()).every(resizeSettled),
      );
      return result;
    };

    beforeAll(async () => {
      env = await startCycleEnv(k);
      store = new DynamoBalloonStore(env.runtime.db, env.runtime.table);
      for (const node of (await env.client.core.listNode()).items)
        allocatable.set(node.metadata?.name ?? '', q(node.status?.allocatable));
      await store.putPolicy(CLUSTER, WHOLE_CLUSTER_POLICY);
    }, 60_000);
    afterAll(async () => {
      await env?.stop();
    });

    it('the real apiserver admits the PriorityClass and DaemonSet; the real controller and scheduler place a balloon per node', async () => {
      const first = await cycle();
      expect(first.errors).toEqual([]);
      const pc = await env.client.scheduling.readPriorityClass({ name: PRIORITY_CLASS });
      expect([pc.value, pc.preemptionPolicy]).toEqual([1_000_000_000, 'Never']);
      const pods = await k.waitFor('a Running balloon on each node', async () => {
        const list = await balloons();
        return list.length === 2 && list.every((p) => p.status?.phase === 'Running') ? list : undefined;
      });
      expect(pods.map((p) => p.spec?.nodeName).sort()).toEqual(['pool-a', 'pool-b']);
      for (const p of pods) {
        expect(p.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'DaemonSet', name: BALLOON_NAME });
        expect(p.spec?.priority).toBe(1_000_000_000);
      }
      const scheduled = (await k.events('kube-system', 'Scheduled')).filter((e) =>
        e.involvedObject.name?.startsWith(BALLOON_NAME),
      );
      expect(new Set(scheduled.map((e) => e.source?.component ?? e.reportingComponent))).toEqual(
        new Set(['default-scheduler']),
      );
    });

    it('inflates each balloon into the free room; the real kubelet actuates it', async () => {
      const r = await cycle();
      expect(r.errors).toEqual([]);
      for (const p of await balloons()) {
        const alloc = allocatable.get(p.spec?.nodeName ?? '') as Amounts;
        expect(specOf(p)).toEqual(sub(alloc, amounts(1000, 2 * GI)));
        expect(runningOf(p)).toEqual(specOf(p));
        expect(p.status?.containerStatuses?.[0]?.allocatedResources).toEqual(
          p.spec?.containers[0]?.resources?.requests,
        );
      }
    });

    it('a workload Pending for resources is placed by the real scheduler after a deflate; nothing preempted or evicted', async () => {
      const before = new Map((await balloons()).map((p) => [p.metadata?.uid, specOf(p)]));
      await env.client.core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: 'app' },
          spec: {
            containers: [
              { name: 'app', image: PAUSE, resources: { requests: { cpu: '1500m', memory: '3Gi' } } },
            ],
          },
        },
      });
      const waiting = await k.waitForPodCondition('default', 'app', 'PodScheduled', 'False', 'Unschedulable');
      expect(waiting.spec?.nodeName).toBeUndefined();
      expect(waiting.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message).toMatch(
        /^0\/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory/,
      );
      const r = await cycle();
      expect(r.reports.some((x) => x.kind === 'resized')).toBe(true);
      const app = await k.waitForPod('default', 'app', (p) => p.status?.phase === 'Running', 90_000);
      const after = await balloons();
      // The same balloon pods, all still Running: one gave the workload its room by shrinking.
      expect(after.map((p) => p.metadata?.uid).sort()).toEqual([...before.keys()].sort());
      for (const p of after) expect(p.status?.phase).toBe('Running');
      const host = after.find((p) => p.spec?.nodeName === app.spec?.nodeName) as V1Pod;
      expect(specOf(host).cpu).toBeLessThan((before.get(host.metadata?.uid) as Amounts).cpu);
      expect(runningOf(host)).toEqual(specOf(host));
      const bad = (await k.events()).filter((e) =>
        ['Preempted', 'Evicted', 'Killing', 'Preempting'].includes(e.reason ?? ''),
      );
      expect(bad.map((e) => `${e.reason} ${e.involvedObject.name}: ${e.message}`)).toEqual([]);
    });
  },
);
