/**
 * An Event on the VPA (`kubectl describe vpa`) when what the guards hold back changed: reason
 * ResizeGuarded, Warning, within the cycle's write budget. The same holds are not said again.
 */
import { type CycleRun, describe } from '../cycle-run.js';
import type { NodeScopeTarget } from '../targets.js';
import { postVpaEvent } from '../vpa-event.js';
import { type GuardsSummary, guardsLine } from './summary.js';

export const GUARDED_EVENT_REASON = 'ResizeGuarded';

export async function guardEvent(run: CycleRun, target: NodeScopeTarget, s: GuardsSummary): Promise<void> {
  if (!run.budget.take()) return;
  try {
    await postVpaEvent(run, target.vpa, {
      suffix: 'g',
      type: 'Warning',
      reason: GUARDED_EVENT_REASON,
      message: guardsLine(s),
    });
  } catch (err) {
    run.errors.push(`event on VPA ${target.vpa.namespace}/${target.vpa.name}: ${describe(err)}`);
  }
}
