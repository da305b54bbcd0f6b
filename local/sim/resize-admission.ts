/**
 * The apiserver's admission check of a resize against the pod's node (seen on a real 1.36.2; not on
 * 1.33.13): the pod's new requests in all may not exceed the node's allocatable (other pods are not
 * counted: that is the kubelet's Deferred), and the node must exist. Both refusals are 403 Forbidden.
 * A pod not bound to a node yet is not checked (a real 1.36.2 accepts its resize:
 * test/k8s/patch-semantics.real.test.ts).
 */
import { ApiError } from './errors.js';
import type { Json } from './json.js';
import { amountOr0 } from './nodes.js';
import { schedulerRequests } from './pod-requests.js';

export function admitResizeOnNode(pod: Json, node: Json | undefined): void {
  const name = pod.metadata?.name;
  const forbidden = (why: string, causes?: { reason: string }[]) =>
    new ApiError(403, 'Forbidden', `pods "${name}" is forbidden: ${why}`, {
      name,
      kind: 'pods',
      ...(causes ? { causes } : {}),
    });
  if (!pod.spec?.nodeName) return;
  if (!node) throw forbidden(`node "${pod.spec?.nodeName}" not found`);
  const wanted = schedulerRequests({ spec: pod.spec });
  const allocatable = node.status?.allocatable;
  const short = [
    { name: 'cpu', requested: wanted.cpuM, allocatable: amountOr0(allocatable?.cpu, 'cpu') },
    { name: 'memory', requested: wanted.mem, allocatable: amountOr0(allocatable?.memory, 'mem') },
  ].filter((r) => r.requested > r.allocatable);
  if (short.length === 0) return;
  const list = short
    .map((r) => `${r.name}, requested: ${r.requested}, allocatable: ${r.allocatable}`)
    .join('; ');
  throw forbidden(`node didn't have enough allocatable resources: ${list}`, [{ reason: 'NodeCapacity' }]);
}
