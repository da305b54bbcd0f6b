/**
 * Kubernetes Events on the balloon pods, so `kubectl describe pod` and `kubectl get events -n
 * kube-system` tell the same story as the bus: every resize requested, every Deferred inflate reverted,
 * every reclaim newly blocked. Best effort (an Event that cannot be written loses nothing), and bounded
 * by the cycle's resizes: at most one Event per resize, revert or new block.
 */
import type { ResizeReport } from '../resize/index.js';
import { max, pairText, sub, ZERO } from './amounts.js';
import type { NodeDecision } from './decide.js';
import type { BalloonObjects } from './incluster.js';
import type { Revert } from './ledger.js';
import { BALLOON_LABEL, BALLOON_NAME, BALLOON_NAMESPACE } from './manifests.js';
import type { Impostor } from './store.js';
import { blockedText } from './summary-model.js';

export interface ClusterEventsInput {
  decisions: readonly NodeDecision[];
  reports: readonly ResizeReport[];
  reverts: readonly Revert[];
  /** Impostors not reported before. */
  impostors: readonly Impostor[];
  repairs: readonly string[];
  now: number;
}

const DAEMONSET = { kind: 'DaemonSet', name: BALLOON_NAME } as const;

export async function recordClusterEvents(
  objects: BalloonObjects,
  input: ClusterEventsInput,
): Promise<number> {
  let written = 0;
  const note = async (
    on: { name: string; uid?: string; kind?: 'Pod' | 'DaemonSet' } | undefined,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ) => {
    if (on && (await objects.event(on, type, reason, message, input.now))) written++;
  };
  const byNode = new Map(input.decisions.map((d) => [d.node, d]));
  for (const r of input.reports) {
    if (r.kind !== 'resized' || r.outcome !== 'Requested' || !r.node) continue;
    const d = byNode.get(r.node);
    if (!d?.balloon) continue;
    const offers = max(ZERO, sub(d.state.allocatable, d.state.balloon));
    await note(
      d.balloon,
      'Normal',
      'BalloonResized',
      `balloon resized to ${pairText(d.state.balloon)}: node ${r.node} offers ${pairText(offers)}`,
    );
  }
  for (const v of input.reverts)
    await note(
      { name: v.pod, uid: v.podUid },
      'Warning',
      'BalloonInflateReverted',
      `inflate to ${pairText(v.from)} held back by the kubelet (${v.message}); reverted to ${pairText(v.to)}`,
    );
  for (const d of input.decisions) {
    const text = d.newlyBlocked ? blockedText(d.node, d.state) : undefined;
    if (text) await note(d.balloon, 'Warning', 'BalloonReclaimBlocked', text);
    if (d.newlyOvercommitted) await note(d.balloon, 'Warning', 'BalloonNodeOvercommitted', overcommitText(d));
  }
  for (const p of input.impostors)
    await note(
      DAEMONSET,
      'Warning',
      'BalloonImpostor',
      `pod ${p.namespace}/${p.name}${p.node ? ` on node ${p.node}` : ''} carries ${BALLOON_LABEL}=true but is not fleetscope's (a balloon is a pod in ${BALLOON_NAMESPACE} owned by DaemonSet ${BALLOON_NAME}): counted as a workload, never resized`,
    );
  for (const r of input.repairs)
    await note(
      DAEMONSET,
      'Warning',
      r.startsWith('DaemonSet') ? 'BalloonTemplateRepaired' : 'BalloonPriorityClassRepaired',
      r,
    );
  return written;
}

/** "node X over-committed by ...": its pods and balloon hold more than its allocatable. */
export const overcommitText = (d: NodeDecision): string =>
  `node ${d.node} over-committed by ${pairText(d.state.overcommitted)} (allocatable ${pairText(d.state.allocatable)} is below what its pods and balloon hold): the balloon deflates and waits for the kubelet, nothing is evicted`;
