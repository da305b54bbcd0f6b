/**
 * Node scope end to end on a real kube-apiserver, with the simulated nodes of `fleetscope sim
 * --apiserver` under it: the same cycle as the simulator suites (runCycle) computes per-node
 * recommendations for a DaemonSet from metrics.k8s.io served through the real aggregator, and in mode
 * Auto resizes the pods in place through the real pods/resize subresource; the simulated kubelet
 * applies each resize into the pod's status (allocatedResources, resources, observedGeneration).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LoadProfile } from '../../local/sim/workload.js';
import { vpaCheckpointCrd, vpaCrd } from '../../shared/kernel/crds/vpa.js';
import type { CycleResult } from '../../shared/nodescope/cycle.js';
import { vpaObject } from '../nodescope/helpers.js';
import { describeRealApiserver } from '../support/real-apiserver.js';
import {
  createAgentDaemonSet,
  installCrd,
  type RealEnv,
  runNodeScopeCycles,
  startRealEnv,
} from './helpers.js';

const CLUSTER = 'ns-real';
const NS = 'monitoring';

describeRealApiserver(
  'node scope over simulated nodes',
  (server) => {
    let env: RealEnv;
    let nodeNames: string[];
    let uidsAtStart: string[];
    const results: CycleResult[] = [];
    const agentPods = async () =>
      (await env.client.core.listNamespacedPod({ namespace: NS, labelSelector: 'app=agent' })).items;

    beforeAll(async () => {
      env = await startRealEnv(server, CLUSTER, 3);
      nodeNames = [...env.nodes.nodeNames].sort();
      await installCrd(env.client, vpaCrd());
      await installCrd(env.client, vpaCheckpointCrd());
      await env.client.core.createNamespace({ body: { metadata: { name: NS } } });
      await env.nodes.sync(); // the namespace's default ServiceAccount, without which no pod is admitted
      // The second node carries four times the first's load, the third twice.
      const load: LoadProfile = {
        cpu: 100,
        memory: '96Mi',
        perNode: { [nodeNames[0]!]: 1, [nodeNames[1]!]: 4, [nodeNames[2]!]: 2 },
        containers: { shipper: { cpu: 40, memory: '48Mi' } },
        noise: 0.05,
      };
      await createAgentDaemonSet(env, NS, load, { shipper: true });
      await env.client.custom.createNamespacedCustomObject({
        group: 'autoscaling.k8s.io',
        version: 'v1',
        namespace: NS,
        plural: 'verticalpodautoscalers',
        body: vpaObject({ mode: 'Auto', policies: [{ containerName: 'shipper', mode: 'Off' }] }),
      });
      await env.nodes.sync();
      uidsAtStart = (await agentPods()).map((p) => p.metadata!.uid!).sort();
      results.push(...(await runNodeScopeCycles(env, CLUSTER, 16)));
    }, 600_000);
    afterAll(async () => {
      await env?.stop();
    });

    it('runs one daemon pod per simulated node, owned by the DaemonSet, Running', async () => {
      const pods = await agentPods();
      expect(pods.map((p) => p.spec?.nodeName).sort()).toEqual(nodeNames);
      const ds = await env.client.apps.readNamespacedDaemonSet({ name: 'agent', namespace: NS });
      for (const p of pods) {
        expect(p.status?.phase).toBe('Running');
        expect(p.metadata?.ownerReferences).toEqual([
          expect.objectContaining({
            kind: 'DaemonSet',
            name: 'agent',
            uid: ds.metadata?.uid,
            controller: true,
          }),
        ]);
      }
    });

    it('gives each node a target that follows its own load, from metrics served through the aggregator', () => {
      const agent = results.at(-1)?.daemonSets.find((d) => d.name === 'agent');
      expect(agent?.metrics).toBe('available');
      const cpu = (n: number) => agent?.recs.get(nodeNames[n]!)?.containers.collector?.target.cpu as number;
      expect(agent?.recs.get(nodeNames[0]!)?.source).toBe('node');
      expect(cpu(1)).toBeGreaterThan(3 * cpu(0));
      expect(cpu(2)).toBeGreaterThan(cpu(0));
      expect(cpu(1)).toBeGreaterThan(cpu(2));
      expect(results.flatMap((r) => r.detail.errors)).toEqual([]);
    });

    it('resizes the pods in place through pods/resize, and the kubelet applies each resize', async () => {
      expect(
        results
          .flatMap((r) => r.resizeReports)
          .some((x) => x.report.kind === 'resized' && x.report.outcome === 'Completed'),
      ).toBe(true);
      const pods = await agentPods();
      expect(pods.map((p) => p.metadata!.uid!).sort()).toEqual(uidsAtStart);
      const requests = new Set<string>();
      for (const p of pods) {
        const spec = p.spec!.containers.find((c) => c.name === 'collector')!.resources!.requests!;
        requests.add(spec.cpu!);
        const status = p.status!.containerStatuses!.find((c) => c.name === 'collector')!;
        // 1.36: the kubelet reports what it admitted and what runs, for the generation it saw.
        expect(status.allocatedResources).toEqual(spec);
        expect(status.resources?.requests).toEqual(spec);
        expect(p.metadata!.generation).toBeGreaterThan(1);
        expect(p.status!.observedGeneration).toBe(p.metadata!.generation);
        const types = (p.status!.conditions ?? []).map((c) => c.type);
        expect(types).not.toContain('PodResizePending');
        expect(types).not.toContain('PodResizeInProgress');
        const shipper = p.spec!.containers.find((c) => c.name === 'shipper')!.resources!.requests;
        expect(shipper).toEqual({ cpu: '50m', memory: '64Mi' });
      }
      // Per-node sizes: the pods no longer share the template's request.
      expect(requests.size).toBeGreaterThan(1);
      expect(env.nodes.problems()).toEqual([]);
    });
  },
  { versions: ['1.36'] },
);
