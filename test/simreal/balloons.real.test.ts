/**
 * Balloons end to end on a real kube-apiserver, with the simulated nodes of `fleetscope sim
 * --apiserver` under it, through the same cycle as the simulator suites (runBalloonCycle): the real
 * server admits the balloon DaemonSet's pods (PriorityClass, ServiceAccount), the simulated DaemonSet
 * controller, scheduler (pods/binding) and kubelets run them, the balloons inflate through the real
 * pods/resize into the free capacity, and deflate when a workload cannot be scheduled, which then
 * lands without anything being preempted.
 */

import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Amounts, amounts, sub } from '../../shared/balloons/amounts.js';
import { type BalloonCycleResult, runBalloonCycle } from '../../shared/balloons/cycle.js';
import { freshPods } from '../../shared/balloons/fresh-read.js';
import { BalloonObjects } from '../../shared/balloons/incluster.js';
import { BALLOON_LABEL } from '../../shared/balloons/manifests.js';
import { snapshotRead } from '../../shared/balloons/read.js';
import { BalloonStore } from '../../shared/balloons/store.js';
import { ClusterSnapshot } from '../../shared/cycle/snapshot.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { Resizer, rawResizeApi } from '../../shared/resize/index.js';
import { WHOLE_CLUSTER_POLICY } from '../balloons/helpers.js';
import { describeRealApiserver } from '../support/real-apiserver.js';
import { type RealEnv, startRealEnv } from './helpers.js';

const CLUSTER = 'b-real';
const GI = 2 ** 30;

const q = (l: Record<string, string> | undefined): Amounts =>
  amounts(parseCpu(l?.cpu ?? '0'), parseMemory(l?.memory ?? '0'));

describeRealApiserver(
  'balloons over simulated nodes',
  (server) => {
    let env: RealEnv;
    let store: BalloonStore;
    let n = 0;
    const allocatable = new Map<string, Amounts>();

    /** One balloon cycle a minute later; the kubelets answer inflates before the cycle reads them back. */
    const cycle = async (): Promise<BalloonCycleResult> => {
      env.clock.advance(60_000);
      await env.nodes.sync();
      const snapshot = new ClusterSnapshot(new RawReader(env.client), { pageSize: 500, allPods: true });
      const api = rawResizeApi(snapshot.reader);
      const result = await runBalloonCycle({
        cluster: CLUSTER,
        cycleId: `real/${++n}`,
        store,
        objects: new BalloonObjects(env.client, snapshot.reader, 'registry.k8s.io/pause:3.10'),
        resizer: new Resizer(api, { now: () => env.clock.now() }),
        api,
        read: snapshotRead(snapshot),
        fresh: freshPods(snapshot.reader),
        settings: { settleMs: 1 },
        sleep: () => env.nodes.sync(),
        now: () => env.clock.now(),
      });
      await env.nodes.sync();
      return result;
    };
    const balloons = async () =>
      (
        await env.client.core.listNamespacedPod({
          namespace: 'kube-system',
          labelSelector: `${BALLOON_LABEL}=true`,
        })
      ).items;
    const specOf = (p: V1Pod) => q(p.spec!.containers[0]!.resources?.requests);
    const runningOf = (p: V1Pod) => q(p.status?.containerStatuses?.[0]?.resources?.requests);

    beforeAll(async () => {
      env = await startRealEnv(server, CLUSTER, 2);
      store = new BalloonStore(env.runtime.db, env.runtime.table);
      for (const node of (await env.client.core.listNode()).items)
        allocatable.set(node.metadata!.name!, q(node.status!.allocatable));
    }, 120_000);
    afterAll(async () => {
      await env?.stop();
    });

    it('inflates a balloon per node into the free capacity: the node offers the policy minimum', async () => {
      await store.putPolicy(CLUSTER, WHOLE_CLUSTER_POLICY);
      await cycle(); // PriorityClass and DaemonSet; the DaemonSet controller places the balloons
      const r = await cycle();
      expect(r.errors).toEqual([]);
      const pods = await balloons();
      expect(pods.map((p) => p.spec?.nodeName).sort()).toEqual([...allocatable.keys()].sort());
      for (const p of pods) {
        const alloc = allocatable.get(p.spec!.nodeName!)!;
        expect(p.status?.phase).toBe('Running');
        // ... or what the node uses, with headroom, where that is more (issue 28: never offers less)
        const used = r.decisions.find((d) => d.node === p.spec!.nodeName)?.state.usageFloor;
        expect(specOf(p)).toEqual(sub(alloc, amounts(1000, Math.max(2 * GI, used?.memory ?? 0))));
        expect(runningOf(p)).toEqual(specOf(p));
        expect(p.status?.observedGeneration).toBe(p.metadata?.generation);
      }
      expect(env.nodes.problems()).toEqual([]);
    });

    it('deflates a balloon for a workload that fits nowhere; the workload lands and nothing is preempted', async () => {
      const before = new Map((await balloons()).map((p) => [p.metadata!.uid!, specOf(p)]));
      await env.client.core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: 'app' },
          spec: {
            // The first simulated node is never the tainted GPU node the shapes include now and then.
            nodeSelector: { 'kubernetes.io/hostname': env.nodes.nodeNames[0]! },
            containers: [
              {
                name: 'app',
                image: 'registry.k8s.io/pause:3.10',
                resources: { requests: { cpu: '1500m', memory: '3Gi' } },
              },
            ],
          },
        },
      });
      await env.nodes.sync();
      const waiting = await env.client.core.readNamespacedPod({ name: 'app', namespace: 'default' });
      const scheduled = waiting.status?.conditions?.find((c) => c.type === 'PodScheduled');
      expect([waiting.spec?.nodeName, scheduled?.reason]).toEqual([undefined, 'Unschedulable']);
      expect(scheduled?.message).toMatch(/^0\/2 nodes are available: 1 Insufficient cpu/);
      const r = await cycle();
      expect(r.reports.some((x) => x.kind === 'resized')).toBe(true);
      env.clock.advance(60_000); // the kubelet actuates the deflate; the scheduler retries
      await env.nodes.sync();
      const app = await env.client.core.readNamespacedPod({ name: 'app', namespace: 'default' });
      expect(app.status?.phase).toBe('Running');
      const after = await balloons();
      // The same balloon pods, all still Running: one gave the workload its room by shrinking.
      expect(after.map((p) => p.metadata!.uid!).sort()).toEqual([...before.keys()].sort());
      for (const p of after) expect(p.status?.phase).toBe('Running');
      const host = after.find((p) => p.spec?.nodeName === app.spec?.nodeName)!;
      expect(specOf(host).cpu).toBeLessThan(before.get(host.metadata!.uid!)!.cpu);
      expect(runningOf(host)).toEqual(specOf(host));
      const events = await env.client.core.listEventForAllNamespaces();
      expect(events.items.filter((e) => e.reason === 'Preempted' || e.reason === 'Killing')).toEqual([]);
      expect(env.nodes.problems()).toEqual([]);
    });
  },
  { versions: ['1.36'] },
);
