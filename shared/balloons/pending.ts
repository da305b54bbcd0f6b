/**
 * Pods waiting to be scheduled are demand a pool can grow for: each is placed, on paper, on a node of a
 * policy-sized pool its nodeSelector and tolerations allow, where the policy's maximum leaves room, and the node's
 * policy then sizes it for that pod too. Once the balloon deflates, the scheduler places the pod itself.
 * (Explicit sizes and shared hosts are never grown for it: their size is someone else's decision.)
 */
import { termMatches } from '../kernel/node-affinity.js';
import { UNSCHEDULABLE_TAINT, untoleratedTaint } from '../kernel/taints.js';
import { type Amounts, add, RESOURCES, ZERO } from './amounts.js';
import type { BalloonNode, CountedPod } from './cluster-read.js';
import { type CompiledPolicy, policyFor } from './desired.js';

/**
 * Whether the scheduler could place the pod on the node, resources aside: its nodeSelector and required
 * node affinity (labels, and metadata.name: a DaemonSet's pod is pinned so) match, and
 * it tolerates the node's NoSchedule/NoExecute taints and, on a cordoned node, the unschedulable one
 * (TaintToleration and NodeUnschedulable). A pod the node turns away is not served by growing it.
 */
function allows(pod: CountedPod, node: BalloonNode): boolean {
  if (!Object.entries(pod.nodeSelector ?? {}).every(([k, v]) => node.labels[k] === v)) return false;
  if (pod.terms && !pod.terms.some((t) => termMatches(t, node))) return false;
  const taints = [...(node.taints ?? []), ...(node.unschedulable ? [UNSCHEDULABLE_TAINT] : [])];
  return untoleratedTaint(pod.tolerations ?? [], taints) === undefined;
}

export function pendingDemand(
  pending: readonly CountedPod[],
  nodes: readonly BalloonNode[],
  workloads: ReadonlyMap<string, Amounts>,
  policies: readonly CompiledPolicy[],
  explicit: ReadonlySet<string>,
): Map<string, Amounts> {
  const demand = new Map<string, Amounts>();
  const pool = nodes
    .filter((n) => !explicit.has(n.name))
    .map((n) => ({ node: n, policy: policyFor(n, policies)?.policy }))
    .filter((x): x is { node: BalloonNode; policy: NonNullable<typeof x.policy> } => x.policy !== undefined);
  if (pool.length === 0) return demand;
  const ordered = [...pending].sort(
    (a, b) => b.requests.cpu - a.requests.cpu || a.name.localeCompare(b.name),
  );
  for (const pod of ordered) {
    let best: { name: string; room: number } | undefined;
    for (const { node, policy } of pool) {
      if (!allows(pod, node)) continue;
      const used = add(workloads.get(node.name) ?? ZERO, demand.get(node.name) ?? ZERO);
      const cap = (r: 'cpu' | 'memory') => Math.min(policy.max[r], node.allocatable[r]);
      if (RESOURCES.some((r) => used[r] + pod.requests[r] > cap(r))) continue;
      const room = cap('cpu') - used.cpu - pod.requests.cpu;
      if (!best || room > best.room) best = { name: node.name, room };
    }
    if (best) demand.set(best.name, add(demand.get(best.name) ?? ZERO, pod.requests));
  }
  return demand;
}
