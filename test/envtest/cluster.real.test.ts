/**
 * The whole-cluster harness itself (test/support/real-cluster.ts): hollow nodes register with the
 * capacity, labels, taints and pod count asked for; the real scheduler binds and the real kubelets run
 * pods; the real DaemonSet controller creates daemon pods where they fit; metrics.k8s.io answers through
 * the real aggregator; and stopping leaves no process, and no kubelet root directory in /tmp, behind.
 */
import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';
import { nodeLog } from '../../local/envtest/cluster.js';
import { kubeletRoots } from '../../local/envtest/kubelet-litter.js';
import { groupAlive } from '../../local/envtest/processes.js';
import { LOAD_ANNOTATION } from '../../local/sim/daemonsets.js';
import { parseCpu } from '../../shared/kernel/quantity.js';
import { describeRealCluster } from '../support/real-cluster.js';

const NS = 'harness';
const pause = 'registry.k8s.io/pause:3.10';

describeRealCluster(
  'whole-cluster harness',
  {
    nodes: [
      { name: 'plain', cpus: 2, memory: '2Gi', labels: { pool: 'general' } },
      { name: 'tainted', cpus: 1, memory: '1Gi', taints: ['dedicated=infra:NoSchedule'], maxPods: 20 },
    ],
  },
  (k) => {
    it('registers each hollow node with the capacity, labels, taints and max pods asked for', async () => {
      const nodes = (await k.client().core.listNode()).items;
      const byName = new Map(nodes.map((n) => [n.metadata?.name, n]));
      expect([...byName.keys()].sort()).toEqual(['plain', 'tainted']);
      expect(byName.get('plain')?.status?.capacity).toMatchObject({ cpu: '2', memory: '2Gi', pods: '110' });
      expect(byName.get('plain')?.metadata?.labels?.pool).toBe('general');
      expect(byName.get('tainted')?.status?.capacity).toMatchObject({ cpu: '1', memory: '1Gi', pods: '20' });
      expect(byName.get('tainted')?.spec?.taints).toEqual([
        { key: 'dedicated', value: 'infra', effect: 'NoSchedule' },
      ]);
      for (const n of nodes) expect(n.status?.nodeInfo?.containerRuntimeVersion).toMatch(/^fakeRuntime:/);
    });

    it('the real scheduler binds a tolerating pod to the tainted node and its kubelet runs it', async () => {
      await k.namespace(NS);
      await k.client().core.createNamespacedPod({
        namespace: NS,
        body: {
          metadata: { name: 'infra' },
          spec: {
            nodeSelector: { 'kubernetes.io/hostname': 'tainted' },
            tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }],
            containers: [{ name: 'c', image: pause, resources: { requests: { cpu: '100m' } } }],
          },
        },
      });
      const pod = await k.waitForPod(
        NS,
        'infra',
        (p) =>
          p.status?.phase === 'Running' &&
          (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      expect(pod.spec?.nodeName).toBe('tainted');
      const scheduled = await k.events(NS, 'Scheduled');
      expect(
        scheduled.map((e) => [e.involvedObject.name, e.source?.component ?? e.reportingComponent]),
      ).toEqual([['infra', 'default-scheduler']]);
    });

    it('the real DaemonSet controller creates a pod on the untainted node only; metrics answer for it', async () => {
      const load = { cpu: 120, memory: '64Mi', noise: 0 };
      await k.client().apps.createNamespacedDaemonSet({
        namespace: NS,
        body: {
          metadata: { name: 'agent', annotations: { [LOAD_ANNOTATION]: JSON.stringify(load) } },
          spec: {
            selector: { matchLabels: { app: 'agent' } },
            template: {
              metadata: { labels: { app: 'agent' } },
              spec: { containers: [{ name: 'a', image: pause, resources: { requests: { cpu: '50m' } } }] },
            },
          },
        },
      });
      const pods = await k.waitFor('the agent pod Running', async () => {
        const list = (await k.client().core.listNamespacedPod({ namespace: NS, labelSelector: 'app=agent' }))
          .items;
        return list.length === 1 && list[0]?.status?.phase === 'Running' ? list : undefined;
      });
      expect(pods[0]?.spec?.nodeName).toBe('plain');
      expect(pods[0]?.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'DaemonSet', name: 'agent' });
      // The simulator's metrics-server through the real aggregator: usage from the load profile, once
      // two scrapes have passed since the pod started.
      const metrics = k.cluster().metrics;
      if (!metrics) throw new Error('the harness serves metrics by default');
      await metrics.refresh();
      metrics.clock.set(Date.now() + 120_000);
      const r = await k.raw('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods`);
      expect(r.status).toBe(200);
      const items = (r.json?.items ?? []) as {
        metadata: { name: string };
        containers: { usage: { cpu: string } }[];
      }[];
      const agent = items.find((i) => i.metadata.name === pods[0]?.metadata?.name);
      // The profile's 120m, without noise.
      expect(parseCpu(agent?.containers[0]?.usage.cpu ?? '0')).toBe(120);
    });

    it('stops every process it started, leaves no kubelet root directory in /tmp, and stopping twice is harmless', async () => {
      const pids = k.cluster().pids();
      expect(pids.length).toBe(2 + 2 + 2); // etcd, apiserver; controller-manager, scheduler; two nodes
      for (const p of pids) expect(groupAlive(p)).toBe(true);
      // Each hollow kubelet's root directory, which kubemark puts in /tmp.
      const roots = k.cluster().nodeNames.flatMap((n) => kubeletRoots(nodeLog(k.cluster().api.dir, n)));
      expect(roots).toHaveLength(2);
      for (const r of roots) expect(existsSync(r)).toBe(true);
      await k.cluster().stop();
      await k.cluster().stop();
      expect(pids.filter(groupAlive)).toEqual([]);
      expect(roots.filter((r) => existsSync(r))).toEqual([]);
    }, 90_000);
  },
);
