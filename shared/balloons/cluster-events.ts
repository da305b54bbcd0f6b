/**
 * Kubernetes Events on the balloon pods, so `kubectl describe pod` and `kubectl get events -n
 * kube-system` tell the same story as the bus: every resize requested, every Deferred inflate reverted,
 * every reclaim newly blocked. Best effort (an Event that cannot be written loses nothing), and bounded
 * by the cycle's resizes: at most one Event per resize, revert or new block.
 */
import type { ResizeReport } from '../resize/index.js';
import { pairText, sub } from './amounts.js';
import type { Revert } from './cycle.js';
import type { NodeDecision } from './decide.js';
import type { BalloonObjects } from './incluster.js';
import { blockedText } from './summary.js';

export async function recordClusterEvents(
  objects: BalloonObjects,
  decisions: readonly NodeDecision[],
  reports: readonly ResizeReport[],
  reverts: readonly Revert[],
  now: number,
): Promise<number> {
  let written = 0;
  const note = async (
    pod: { name: string; uid: string } | undefined,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ) => {
    if (pod && (await objects.event(pod, type, reason, message, now))) written++;
  };
  const byNode = new Map(decisions.map((d) => [d.node, d]));
  for (const r of reports) {
    if (r.kind !== 'resized' || r.outcome !== 'Requested' || !r.node) continue;
    const d = byNode.get(r.node);
    if (!d?.balloon) continue;
    const offers = sub(d.state.allocatable, d.state.balloon);
    await note(
      d.balloon,
      'Normal',
      'BalloonResized',
      `balloon resized to ${pairText(d.state.balloon)}: node ${r.node} offers ${pairText(offers)}`,
    );
  }
  for (const v of reverts)
    await note(
      { name: v.pod, uid: v.podUid },
      'Warning',
      'BalloonInflateReverted',
      `inflate to ${pairText(v.from)} deferred by the kubelet (${v.message}); reverted to ${pairText(v.to)}`,
    );
  for (const d of decisions) {
    if (!d.newlyBlocked || !d.balloon) continue;
    const text = blockedText(d.node, d.state);
    if (text) await note(d.balloon, 'Warning', 'BalloonReclaimBlocked', text);
  }
  return written;
}
