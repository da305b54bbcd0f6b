/**
 * What a balloon pod must be before it may hold capacity, decided from the pod as it is, not from the
 * template it was made from: the template, the PriorityClass or an admission webhook may have changed
 * between. A balloon at another priority can be preempted (priority 0) or make the kubelet evict pods to
 * admit it (a system-* class); one that may preempt can take a running pod's place; a second container
 * or a limit (a webhook's sidecar, a LimitRange) makes it hold what fleetscope did not size. Such a pod
 * is deflated to the floor, never inflated, and reported, naming each field.
 */
import { effectiveContainerRequests, effectiveRequests, type PodView } from '../cycle/views.js';
import { BALLOON_CONTAINER, BALLOON_PRIORITY, PRIORITY_CLASS } from './manifests.js';

/** Each way the pod differs from a balloon, one phrase naming the field; empty when it is sound. */
export function balloonPodProblems(v: PodView): string[] {
  const out: string[] = [];
  if (v.priority !== BALLOON_PRIORITY)
    out.push(
      `priority ${v.priority ?? 'unset'} (the ${PRIORITY_CLASS} PriorityClass gives ${BALLOON_PRIORITY})`,
    );
  if (v.preemptionPolicy !== 'Never')
    out.push(
      `preemptionPolicy ${v.preemptionPolicy ?? 'PreemptLowerPriority'} (a balloon must never preempt)`,
    );
  const names = v.containers.map((c) => c.name);
  if (names.length !== 1 || names[0] !== BALLOON_CONTAINER)
    out.push(`containers [${names.join(', ')}] (a balloon has one container, "${BALLOON_CONTAINER}")`);
  const c = v.containers.find((x) => x.name === BALLOON_CONTAINER);
  if (c && (c.limCpu !== undefined || c.limMem !== undefined))
    out.push(
      `limits on container ${BALLOON_CONTAINER} (a balloon has requests only; a LimitRange in its namespace injects them)`,
    );
  const own = effectiveContainerRequests(v).find((x) => x.name === BALLOON_CONTAINER);
  const whole = effectiveRequests(v);
  if (own && names.length === 1 && (whole.cpu !== own.cpu || whole.memory !== own.memory))
    out.push('init containers, pod overhead or pod-level resources (the pod holds more than its balloon)');
  return out;
}
