/**
 * The grow bench's busy case set up (bench/balloon-grow.ts): a DaemonSet's pod on the first node asks,
 * through /resize, for the node's allocatable CPU less 100m, which the kubelet Defers.
 */
import { cpuMillis } from '../shared/cycle/quantities.js';
import type { ClusterClient } from '../shared/k8s/client.js';
import { RawReader } from '../shared/k8s/raw-reader.js';
import { rawResizeApi } from '../shared/resize/raw-api.js';

/** Resizes one pod of the first node past what the node has free; returns the node and the pod. */
export async function deferOneResize(client: ClusterClient): Promise<{ node: string; pod: string }> {
  const nodes = await client.core.listNode({ limit: 1 });
  const node = nodes.items[0]!;
  const pods = await client.core.listPodForAllNamespaces({
    fieldSelector: `spec.nodeName=${node.metadata!.name}`,
  });
  // A DaemonSet's pod, running (the bench's workload pods are loaded raw, without a status), and not a
  // balloon. Told by its owner: a defaulted resizePolicy told it once, and 1.33+ no longer defaults it.
  const pod = pods.items.find(
    (p) =>
      p.metadata!.ownerReferences?.some((o) => o.kind === 'DaemonSet') &&
      !p.metadata!.labels?.['fleetscope.io/balloon'],
  );
  if (!pod) throw new Error(`no DaemonSet's pod (other than a balloon) on node ${node.metadata!.name}`);
  // Allocatable is a quantity ("7910m" on an EKS node): parsed as one, not as a number of cores.
  const allocatable = cpuMillis(node.status?.allocatable?.cpu);
  if (allocatable === undefined) throw new Error(`node ${node.metadata!.name} reports no allocatable CPU`);
  const cpuM = allocatable - 100;
  const container = pod.spec!.containers[0]!;
  await rawResizeApi(new RawReader(client)).patchResize(pod.metadata!.namespace!, pod.metadata!.name!, {
    spec: {
      containers: [
        {
          name: container.name,
          resources: { requests: { ...container.resources?.requests, cpu: `${cpuM}m` } },
        },
      ],
    },
  });
  return { node: node.metadata!.name!, pod: `${pod.metadata!.namespace}/${pod.metadata!.name}` };
}
