/**
 * Balloon size = allocatable - desired effective size. The two rules of KEP-5620 live here:
 *   deflating (growing the node) is always allowed;
 *   inflating (shrinking the node) only takes free capacity: allocatable minus what every other pod on
 *   the node requests, counted as the scheduler counts it. What does not fit is a blocked reclaim, with
 *   the pods in the way; no pod is ever deleted, evicted or preempted to make room.
 */
import { type Amounts, amounts, equal, RESOURCES, type Resource, sub } from './amounts.js';

/**
 * The smallest balloon. A zero request would make the pod BestEffort, and a BestEffort pod may never
 * gain requests (its QoS class cannot change on resize), so a deflated balloon keeps this much.
 */
export const BALLOON_FLOOR: Amounts = amounts(1, 1024 * 1024);

export interface PodInTheWay {
  namespace: string;
  name: string;
  requests: Amounts;
}

export interface NodeLoad {
  allocatable: Amounts;
  /** Requests of every other pod on the node (max of spec, allocated and actual, as the scheduler counts). */
  others: Amounts;
  /** The balloon's current size: what the scheduler counts for it. */
  balloon: Amounts;
}

export interface BalloonPlan {
  /** What the balloon should be for the node to offer exactly the desired size. */
  target: Amounts;
  /** What it is resized to now: the target, or as much of it as free capacity allows. */
  next: Amounts;
  /** Capacity the balloon could not take back because pods hold it (zero when none). */
  blocked: Amounts;
}

export const balloonTarget = (allocatable: Amounts, desired: Amounts): Amounts =>
  amounts(
    Math.max(BALLOON_FLOOR.cpu, allocatable.cpu - desired.cpu),
    Math.max(BALLOON_FLOOR.memory, allocatable.memory - desired.memory),
  );

export function planBalloon(load: NodeLoad, desired: Amounts): BalloonPlan {
  const target = balloonTarget(load.allocatable, desired);
  const free = sub(load.allocatable, load.others);
  const one = (r: Resource): number => {
    if (target[r] <= load.balloon[r]) return target[r];
    // Inflate into free space only; never below the current size on this path (that is a deflate).
    return Math.min(target[r], Math.max(load.balloon[r], free[r]));
  };
  const planned = amounts(one('cpu'), one('memory'));
  // The kubelet admits a resize only when the pod's whole new request fits beside the others: on a node
  // over-committed in either resource (shrunk from below) an inflate of the other would be Deferred, so
  // nothing is inflated there; deflates go ahead.
  const fits = RESOURCES.every((r) => load.others[r] + planned[r] <= load.allocatable[r]);
  const next = fits
    ? planned
    : amounts(Math.min(planned.cpu, load.balloon.cpu), Math.min(planned.memory, load.balloon.memory));
  const blocked = amounts(target.cpu - next.cpu, target.memory - next.memory);
  return { target, next, blocked };
}

export const changes = (plan: BalloonPlan, current: Amounts): boolean => !equal(plan.next, current);
export const isInflate = (plan: BalloonPlan, current: Amounts): boolean =>
  RESOURCES.some((r) => plan.next[r] > current[r]);

/** The pods holding the space a blocked reclaim wanted: the largest requesters of the blocked resources. */
export function podsInTheWay(pods: readonly PodInTheWay[], blocked: Amounts, limit = 5): PodInTheWay[] {
  const weight = (p: PodInTheWay) =>
    (blocked.cpu > 0 ? p.requests.cpu / Math.max(1, blocked.cpu) : 0) +
    (blocked.memory > 0 ? p.requests.memory / Math.max(1, blocked.memory) : 0);
  return [...pods]
    .filter((p) => (blocked.cpu > 0 && p.requests.cpu > 0) || (blocked.memory > 0 && p.requests.memory > 0))
    .sort((a, b) => weight(b) - weight(a) || a.name.localeCompare(b.name))
    .slice(0, limit);
}
