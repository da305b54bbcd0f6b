/**
 * What a pod takes from its node in the scheduler's eyes (component-helpers PodRequests with
 * UseStatusResources, KEP-1287 §Scheduler and API Server Interaction, facts 1.6): per container the
 * largest of the spec requests (left out while the pod's resize is Infeasible), the kubelet's
 * allocatedResources and the actual status resources. A Deferred upsize therefore reserves its larger
 * size at once, an Infeasible one reserves nothing.
 */
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

function amounts(list: Json): Amounts {
  return { cpuM: amountOr0(list?.cpu, 'cpu'), mem: amountOr0(list?.memory, 'mem') };
}

const max = (...xs: Amounts[]): Amounts => ({
  cpuM: Math.max(0, ...xs.map((x) => x.cpuM)),
  mem: Math.max(0, ...xs.map((x) => x.mem)),
});

const add = (a: Amounts, b: Amounts): Amounts => ({ cpuM: a.cpuM + b.cpuM, mem: a.mem + b.mem });

const ZERO: Amounts = { cpuM: 0, mem: 0 };

/** One container's requests: the spec's until the kubelet has reported resources for it. */
function containerRequests(c: Json, status: Json | undefined, infeasible: boolean): Amounts {
  const spec = amounts(c?.resources?.requests);
  if (!status?.resources) return spec;
  const actual = amounts(status.resources.requests);
  const allocated = amounts(status.allocatedResources);
  return infeasible ? max(actual, allocated) : max(spec, actual, allocated);
}

/**
 * The pod's requests as the scheduler counts them: regular containers and sidecars add up; a
 * non-sidecar init container runs alone beside the sidecars started before it, so the pod needs the
 * larger of the two.
 */
export function schedulerRequests(pod: Json): Amounts {
  const statuses = new Map<string, Json>();
  for (const s of [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])])
    if (s?.name) statuses.set(s.name, s);
  const infeasible = resizeInfeasible(pod);
  const of = (c: Json) => containerRequests(c, statuses.get(c?.name), infeasible);
  let total = ZERO;
  for (const c of pod?.spec?.containers ?? []) total = add(total, of(c));
  let sidecars = ZERO;
  let initPeak = ZERO;
  for (const c of pod?.spec?.initContainers ?? []) {
    if (c?.restartPolicy === 'Always') {
      total = add(total, of(c));
      sidecars = add(sidecars, of(c));
      initPeak = max(initPeak, sidecars);
    } else {
      initPeak = max(initPeak, add(of(c), sidecars));
    }
  }
  return max(total, initPeak);
}
