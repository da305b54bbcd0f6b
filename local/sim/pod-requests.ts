/**
 * What a pod takes from its node in the scheduler's eyes (component-helpers PodRequests with
 * UseStatusResources, KEP-1287 §Scheduler and API Server Interaction, facts 1.6): per container the
 * largest of the spec requests (left out while the pod's resize is Infeasible), the kubelet's
 * allocatedResources and the actual status resources, plus sidecars, init containers, pod-level
 * resources and overhead. A Deferred upsize therefore reserves its larger size at once, an Infeasible
 * one reserves nothing.
 */
import { type ParseList, podOccupancy } from '../../shared/kernel/pod-requests.js';
import type { Json } from './json.js';
import { amountOr0 } from './nodes.js';

export interface Amounts {
  cpuM: number;
  mem: number;
}

/** Index value of pods not bound to a node (no node name can contain NUL). */
export const UNBOUND = '\u0000unbound';

/** The pods collection's index: the node a pod is bound to, or UNBOUND. */
export const podIndexKey = (p: Json): string | undefined =>
  p?.spec ? p.spec.nodeName || UNBOUND : undefined;

export const isTerminal = (p: Json): boolean =>
  p?.status?.phase === 'Succeeded' || p?.status?.phase === 'Failed';

/** Whether the kubelet marked the pod's pending resize Infeasible (condition from 1.33, status.resize before). */
export function resizeInfeasible(pod: Json): boolean {
  if (pod?.status?.resize === 'Infeasible') return true;
  return (pod?.status?.conditions ?? []).some(
    (c: Json) => c?.type === 'PodResizePending' && c.reason === 'Infeasible',
  );
}

const parse: ParseList = (list) => ({
  cpu: amountOr0(list?.cpu, 'cpu'),
  memory: amountOr0(list?.memory, 'mem'),
});

/**
 * The pod's requests as the scheduler counts them: the one formula of shared/kernel/pod-requests.ts
 * (sidecars, init containers, pod-level resources, overhead, and mid-resize the larger of spec,
 * allocated and actual).
 */
export function schedulerRequests(pod: Json): Amounts {
  const o = podOccupancy(pod ?? {}, parse, resizeInfeasible(pod));
  return { cpuM: o.cpu, mem: o.memory };
}
