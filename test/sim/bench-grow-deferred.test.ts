/**
 * The grow bench's busy case (bench/grow-deferred.ts) on a small copy of the bench's cluster (its
 * DaemonSets and workload pods, on the simulator's default version, which like a real 1.33+ server
 * leaves resizePolicy unset): it finds a pod on the first node and the kubelet Defers its resize. It
 * once looked for a pod by a defaulted resizePolicy, found none, and the bench failed at any size.
 */
import { afterEach, expect, it } from 'vitest';
import { deferOneResize } from '../../bench/grow-deferred.js';
import { addWorkloads, CLUSTER, clusterSpec } from '../../bench/spec.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { ClusterClient } from '../../shared/k8s/client.js';

let sim: Simulator | undefined;
let client: ClusterClient | undefined;
afterEach(async () => {
  await client?.close();
  await sim?.stop();
});

it("defers the resize of a DaemonSet's pod on the first node", async () => {
  sim = await startSimulator({ clusters: [{ ...clusterSpec(), nodes: 3 }] });
  addWorkloads(sim, 20);
  client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: CLUSTER, context: CLUSTER });
  const { node, pod } = await deferOneResize(client);
  const [namespace, name] = pod.split('/') as [string, string];
  const after = await client.core.readNamespacedPod({ namespace, name });
  expect(after.spec?.nodeName).toBe(node);
  expect(after.metadata?.ownerReferences?.[0]?.kind).toBe('DaemonSet');
  expect(after.metadata?.labels?.['fleetscope.io/balloon']).toBeUndefined();
  const pending = after.status?.conditions?.find((c) => c.type === 'PodResizePending');
  expect(pending?.reason).toBe('Deferred');
});
