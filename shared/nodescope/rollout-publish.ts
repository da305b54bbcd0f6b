/**
 * Saying what canary and revert did, on the VPA (`kubectl describe vpa`): a Warning Event per revert
 * (reason ResizeReverted), and the condition ResizeReverted: True while a revert holds the DaemonSet's
 * downsizes, False once the hold lapsed (never written for a DaemonSet that was never reverted). Within
 * the cycle's write budget; only where writes are allowed (the caller applies, so not in mode Off).
 */
import { timeCell } from '../kernel/units-format.js';
import { type CycleRun, describe } from './cycle-run.js';
import { currentCondition, patchVpaStatus, type VpaCondition } from './incluster.js';
import type { VpaObject } from './k8s-types.js';
import { type Hold, type RevertEntry, type RolloutOutcome, sizeChangeWords } from './rollout.js';
import type { NodeScopeTarget } from './targets.js';
import { postVpaEvent } from './vpa-event.js';

export const REVERT_CONDITION = 'ResizeReverted';
export const REVERT_EVENT_REASON = 'ResizeReverted';

export function revertMessage(e: RevertEntry, hold: Hold | undefined): string {
  const held = hold
    ? `; downsizes held until ${timeCell(hold.until)} (revert ${hold.consecutive} in a row)`
    : '';
  return `node ${e.node}: ${e.reason}: ${e.detail}; reverted to the previous size (${sizeChangeWords(e.from, e.to)})${held}`;
}

/** The condition the rollout calls for now, if any. */
export function revertCondition(o: RolloutOutcome, now: number): VpaCondition | undefined {
  const hold = o.hold;
  if (!hold) return undefined;
  if (now < hold.until)
    return {
      type: REVERT_CONDITION,
      status: 'True',
      reason: 'RevertedOnHarm',
      message:
        `node ${hold.node} was reverted (${hold.reason}) at ${timeCell(hold.at)}: downsizes held until ${timeCell(hold.until)} (revert ${hold.consecutive} in a row)`.slice(
          0,
          1024,
        ),
    };
  return {
    type: REVERT_CONDITION,
    status: 'False',
    reason: 'NotHeld',
    message: `no downsize held; last revert: node ${hold.node} (${hold.reason}) at ${timeCell(hold.at)}`,
  };
}

/**
 * The Events of this cycle's reverts and the condition where it changed. Returns the VPA as it now
 * stands (the condition merged), for the status patch that follows: a merge patch replaces the list.
 */
export async function publishRollout(
  run: CycleRun,
  target: NodeScopeTarget,
  vpa: VpaObject | undefined,
  o: RolloutOutcome | undefined,
): Promise<VpaObject | undefined> {
  if (!o) return vpa;
  for (const [k, e] of o.reverts.entries()) {
    if (!run.budget.take()) break;
    try {
      await revertEvent(run, target, e, o.hold, k);
    } catch (err) {
      run.errors.push(`event on VPA ${target.vpa.namespace}/${target.vpa.name}: ${describe(err)}`);
    }
  }
  const cond = revertCondition(o, run.now);
  const cur = currentCondition(vpa, REVERT_CONDITION);
  if (!cond || (cur?.status === cond.status && cur.reason === cond.reason && cur.message === cond.message))
    return vpa;
  if (!run.budget.take()) return vpa;
  try {
    await patchVpaStatus(run.reader, target.vpa, cond, run.now, vpa);
  } catch (err) {
    run.errors.push(`status of VPA ${target.vpa.namespace}/${target.vpa.name}: ${describe(err)}`);
    return vpa;
  }
  const others = (vpa?.status?.conditions ?? []).filter((c) => c.type !== REVERT_CONDITION);
  return { ...vpa, status: { ...vpa?.status, conditions: [...others, cond] } } as VpaObject;
}

function revertEvent(
  run: CycleRun,
  target: NodeScopeTarget,
  e: RevertEntry,
  hold: Hold | undefined,
  k: number,
) {
  return postVpaEvent(run, target.vpa, {
    suffix: `r${k}`,
    type: 'Warning',
    reason: REVERT_EVENT_REASON,
    message: revertMessage(e, hold),
  });
}
