/**
 * Simulated nodes against a real kube-apiserver (local/sim/real/, `fleetscope sim --apiserver`): the
 * server judges every write the simulated kubelets, scheduler and controllers make.
 */

import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type SimulatedNodes, startSimulatedNodes } from '../../local/sim/real/index.js';
import { ClusterClient, patchOptions } from '../../shared/k8s/client.js';
import { parseCpu } from '../../shared/kernel/quantity.js';
import { describeRealApiserver } from '../support/real-apiserver.js';

describeRealApiserver(
  'simulated nodes on a real apiserver',
  (server) => {
    let nodes: SimulatedNodes;
    let client: ClusterClient;
    beforeAll(async () => {
      nodes = await startSimulatedNodes({ kubeconfig: server.api().adminKubeconfig, nodes: 3, name: 'kwok' });
      client = ClusterClient.fromKubeconfig(server.api().adminKubeconfig, { cluster: 'kwok' });
    }, 120_000);
    afterAll(async () => {
      await client?.close();
      await nodes?.stop();
    });

    it('registers Ready nodes whose not-ready taint the kubelet removes', async () => {
      const list = await client.core.listNode();
      expect(list.items.map((n) => n.metadata?.name).sort()).toEqual([...nodes.nodeNames].sort());
      for (const n of list.items) {
        expect(n.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
        expect((n.spec?.taints ?? []).map((t) => t.key)).not.toContain('node.kubernetes.io/not-ready');
        expect(n.status?.allocatable?.cpu).toBeTruthy();
      }
    });

    it('creates the default ServiceAccount of a new namespace, and runs a DaemonSet pod per node', async () => {
      await client.core.createNamespace({ body: { metadata: { name: 'agents' } } });
      await nodes.sync();
      await client.core.readNamespacedServiceAccount({ name: 'default', namespace: 'agents' });
      await client.apps.createNamespacedDaemonSet({
        namespace: 'agents',
        body: {
          metadata: { name: 'agent' },
          spec: {
            selector: { matchLabels: { app: 'agent' } },
            updateStrategy: { type: 'OnDelete' },
            template: {
              metadata: { labels: { app: 'agent' } },
              spec: {
                containers: [
                  {
                    name: 'a',
                    image: 'registry.k8s.io/pause:3.10',
                    resources: { requests: { cpu: '50m', memory: '32Mi' } },
                  },
                ],
              },
            },
          },
        },
      });
      await nodes.sync();
      const ds = await client.apps.readNamespacedDaemonSet({ name: 'agent', namespace: 'agents' });
      const pods = (await client.core.listNamespacedPod({ namespace: 'agents' })).items;
      expect(pods.map((p) => p.spec?.nodeName).sort()).toEqual([...nodes.nodeNames].sort());
      for (const p of pods) {
        expect(p.status?.phase).toBe('Running');
        expect(p.metadata?.ownerReferences?.[0]).toMatchObject({
          kind: 'DaemonSet',
          uid: ds.metadata?.uid,
          controller: true,
        });
        expect(p.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status).toBe('True');
      }
      expect(ds.status?.numberReady).toBe(3);
      expect(nodes.problems()).toEqual([]);
    });

    it('OnDelete: a template change reaches a node only once its pod is deleted (the kubelet confirms the deletion)', async () => {
      const before = (await client.core.listNamespacedPod({ namespace: 'agents' })).items;
      await client.apps.patchNamespacedDaemonSet(
        {
          name: 'agent',
          namespace: 'agents',
          body: { spec: { template: { metadata: { labels: { app: 'agent', rev: '2' } } } } },
        },
        patchOptions('merge'),
      );
      await nodes.sync();
      const same = (await client.core.listNamespacedPod({ namespace: 'agents' })).items;
      expect(same.map((p) => p.metadata?.uid).sort()).toEqual(before.map((p) => p.metadata?.uid).sort());
      const victim = same[0]!;
      // A bound pod's deletion is graceful on a real server: it stays until its kubelet confirms.
      await client.core.deleteNamespacedPod({ name: victim.metadata!.name!, namespace: 'agents' });
      await nodes.sync();
      const after = (await client.core.listNamespacedPod({ namespace: 'agents' })).items;
      expect(after.map((p) => p.metadata?.uid)).not.toContain(victim.metadata?.uid);
      const replacement = after.find((p) => p.spec?.nodeName === victim.spec?.nodeName)!;
      expect(replacement.metadata?.labels?.rev).toBe('2');
      expect(replacement.status?.phase).toBe('Running');
      expect(after.filter((p) => p.metadata?.labels?.rev === '2')).toHaveLength(1);
    });

    it('answers resizes as a 1.36 kubelet: Infeasible and Deferred with observedGeneration, then completed', async () => {
      await client.core.createNamespacedPod({
        namespace: 'agents',
        body: {
          metadata: { name: 'solo' },
          spec: {
            nodeSelector: { 'kubernetes.io/hostname': nodes.nodeNames[0]! },
            containers: [
              {
                name: 'c',
                image: 'registry.k8s.io/pause:3.10',
                resources: { requests: { cpu: '100m', memory: '64Mi' } },
              },
            ],
          },
        },
      });
      await nodes.sync();
      const node = await client.core.readNode({ name: nodes.nodeNames[0]! });
      const allocCpu = parseCpu(node.status!.allocatable!.cpu!);
      const resize = async (cpu: string) => {
        await client.core.patchNamespacedPodResize(
          {
            name: 'solo',
            namespace: 'agents',
            body: { spec: { containers: [{ name: 'c', resources: { requests: { cpu } } }] } },
          },
          patchOptions('strategic-merge'),
        );
        await nodes.sync();
        return client.core.readNamespacedPod({ name: 'solo', namespace: 'agents' });
      };
      const pendingOf = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'PodResizePending');
      // 1.36's apiserver itself refuses a resize beyond the node's allocatable (NodeCapacity).
      const refused = await resize(`${allocCpu + 1000}m`).then(
        () => undefined,
        (e: { code?: number; body?: string }) => e,
      );
      expect(refused?.code).toBe(403);
      expect(String(refused?.body)).toContain('NodeCapacity');
      // Room for it on the node, but not beside the other pods there now: Deferred.
      const deferred = await resize(`${allocCpu - 10}m`); // beside the 50m daemon pod
      expect(pendingOf(deferred)).toMatchObject({
        reason: 'Deferred',
        observedGeneration: deferred.metadata?.generation,
      });
      expect(pendingOf(deferred)?.message).toMatch(/^Node didn't have enough resource: cpu/);
      // The node shrinks (its kubelet reports less): the deferred resize can never fit, Infeasible.
      const capacity = parseCpu(node.status!.capacity!.cpu!);
      nodes.setNodeCapacity(nodes.nodeNames[0]!, { cpu: `${capacity - 500}m` });
      await nodes.sync();
      const infeasible = await client.core.readNamespacedPod({ name: 'solo', namespace: 'agents' });
      expect(pendingOf(infeasible)).toMatchObject({
        reason: 'Infeasible',
        observedGeneration: infeasible.metadata?.generation,
      });
      expect(pendingOf(infeasible)?.message).toMatch(/^Node didn't have enough capacity: cpu/);
      const fits = await resize('200m');
      expect(pendingOf(fits)).toBeUndefined();
      expect(fits.status?.conditions?.find((c) => c.type === 'PodResizeInProgress')).toMatchObject({
        status: 'True',
        observedGeneration: fits.metadata?.generation,
      });
      expect(fits.status?.containerStatuses?.[0]?.allocatedResources).toEqual({
        cpu: '200m',
        memory: '64Mi',
      });
      expect(fits.status?.observedGeneration).toBe(fits.metadata?.generation);
      await nodes.sync(); // actuated on the next pass
      const done = await client.core.readNamespacedPod({ name: 'solo', namespace: 'agents' });
      expect(done.status?.containerStatuses?.[0]?.resources?.requests).toEqual({
        cpu: '200m',
        memory: '64Mi',
      });
      expect((done.status?.conditions ?? []).map((c) => c.type)).not.toContain('PodResizeInProgress');
    });

    it('serves metrics.k8s.io through the aggregator', async () => {
      nodes.clock.advance(5 * 60_000);
      await nodes.sync();
      const list = (await client.custom.listClusterCustomObject({
        group: 'metrics.k8s.io',
        version: 'v1beta1',
        plural: 'nodes',
      })) as { items: { metadata: { name: string } }[] };
      expect(list.items.map((n) => n.metadata.name).sort()).toEqual([...nodes.nodeNames].sort());
    });

    it('finalizes a deleted namespace, as the namespace controller does', async () => {
      await client.core.deleteNamespace({ name: 'agents' });
      await nodes.sync();
      await nodes.sync();
      const gone = await client.core.readNamespace({ name: 'agents' }).then(
        (ns) => ns.status?.phase,
        (e: { code?: number }) => e.code,
      );
      expect(gone).toBe(404);
    });
  },
  { versions: ['1.36'] },
);
