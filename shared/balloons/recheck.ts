/**
 * The bind race, closed. Between the cycle's read of a node and its inflate, the scheduler can bind a
 * pod into the space the inflate takes (or nominate one there after preempting); a kubelet that has
 * not admitted that pod yet accepts the inflate and then rejects the pod (OutOfcpu), and one that
 * answers after the settle window leaves the inflate Deferred, counted by the scheduler, for a whole
 * cycle. So each inflated node's pods are read afresh (bound to it or nominated to it) right after the
 * inflates, and again after the settle wait; where they and the balloon no longer fit the node's
 * allocatable, the balloon is deflated back at once to what fits. Deciding from the pods as they are
 * covers both a kubelet that has not admitted the pod yet and one that has not answered yet. No taint:
 * the scheduler keeps using the node throughout.
 */
import { type Amounts, add, amounts, equal, RESOURCES, sub } from './amounts.js';
import type { BalloonPod, CountedPod } from './cluster-read.js';
import type { NodeDecision } from './decide.js';
import type { CycleLedger, Revert } from './ledger.js';
import { BALLOON_CONTAINER } from './manifests.js';
import { BALLOON_FLOOR } from './sizing.js';

/**
 * The balloon size that fits beside `others` when `balloon` does not (undefined when it does): each
 * resource that overflows goes back to what is left, never below the floor; the others stay.
 */
export function fitBack(allocatable: Amounts, others: Amounts, balloon: Amounts): Amounts | undefined {
  const room = sub(allocatable, others);
  if (RESOURCES.every((r) => balloon[r] <= room[r])) return undefined;
  const one = (r: 'cpu' | 'memory') =>
    balloon[r] <= room[r] ? balloon[r] : Math.max(BALLOON_FLOOR[r], Math.min(balloon[r], room[r]));
  return amounts(one('cpu'), one('memory'));
}

const podName = (p: CountedPod) => `${p.namespace}/${p.name}`;

/** How many pods a cycle found bound or nominated between its read and its inflates (a counter). */
export const podsBoundSinceRead = (r: { reverts: readonly Revert[] }): number =>
  r.reverts.reduce((n, v) => n + (v.boundSinceRead?.length ?? 0), 0);

/**
 * Re-reads each node inflated this cycle and deflates its balloon back where pods that arrived since
 * the read no longer fit beside it. `known` holds the uids the cycle's read saw on each node.
 */
export async function recheckInflates(
  l: CycleLedger,
  inflated: readonly NodeDecision[],
  known: ReadonlySet<string>,
): Promise<void> {
  for (const d of inflated) {
    const pod = d.balloon as BalloonPod | undefined;
    if (!pod || !d.balloon || !inflatedNow(d)) continue;
    try {
      const all = await l.ctx.fresh.podsOn(d.node);
      // The balloon as it is now (inflated): the deflate back is planned against it, not against the
      // cycle's read, in which a deflate back to the old size would look like no change at all.
      const now = all.find((p) => p.uid === pod.uid);
      // What the decision counted, plus what arrived since: a pod the read saw is already in the
      // decision's workloads as the cycle counts it (a balloon being replaced is not a workload).
      const arrived = all.filter((p) => p.uid !== pod.uid && !known.has(p.uid));
      // Nothing arrived: the decision already weighed everything on the node (an over-committed
      // resource it left alone included); re-judging it here would undo the decision's own choices.
      if (arrived.length === 0) continue;
      const others = arrived.reduce((sum, p) => add(sum, p.requests), d.state.workloads);
      const fit = fitBack(d.state.allocatable, others, d.state.balloon);
      // Only what this cycle inflated goes back; a resource it did not raise is not the race's.
      const back = fit && onlyInflated(fit, d.state.balloon, d.balloon.requests);
      if (back) await deflateBack(l, d, now ?? pod, back, arrived.map(podName));
    } catch (err) {
      l.errors.push(
        `node ${d.node}: re-reading the node after the inflate failed: ${(err as Error).message}`,
      );
    }
  }
}

/** `fit` where the cycle raised a resource, the balloon as it is elsewhere; undefined if that is no change. */
function onlyInflated(fit: Amounts, now: Amounts, before: Amounts): Amounts | undefined {
  const one = (r: 'cpu' | 'memory') => (now[r] > before[r] ? Math.max(fit[r], before[r]) : now[r]);
  const back = amounts(one('cpu'), one('memory'));
  return equal(back, now) ? undefined : back;
}

/** Whether the balloon is still larger than before this cycle (not reverted since). */
const inflatedNow = (d: NodeDecision) =>
  d.balloon !== undefined && RESOURCES.some((r) => d.state.balloon[r] > d.balloon!.requests[r]);

async function deflateBack(
  l: CycleLedger,
  d: NodeDecision,
  pod: BalloonPod,
  to: Amounts,
  arrived: string[],
): Promise<void> {
  const from = d.state.balloon;
  const desired = { [BALLOON_CONTAINER]: { requests: { cpu: to.cpu, memory: to.memory } } };
  const res = await l.ctx.resizer.resize({ pod: pod.like, desired }, undefined);
  if (res.report) l.reports.push(res.report);
  l.records.set(d.node, res.record);
  if (res.report?.kind !== 'resized' || equal(from, to)) return;
  d.state.balloon = to;
  l.reverts.push({
    node: d.node,
    pod: pod.name,
    podUid: pod.uid,
    from,
    to,
    message: `pods bound or nominated to the node since the read no longer fit beside the inflate: ${arrived.join(', ') || 'requests grew'}`,
    boundSinceRead: arrived,
  });
}
