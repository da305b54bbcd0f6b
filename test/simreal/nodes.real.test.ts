/**
 * Simulated nodes against a real kube-apiserver (local/sim/real/, `fleetscope sim --apiserver`): the
 * server judges every write the simulated kubelets, scheduler and controllers make.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type SimulatedNodes, startSimulatedNodes } from '../../local/sim/real/index.js';
import { ClusterClient } from '../../shared/k8s/client.js';
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
  },
  { versions: ['1.36'] },
);
