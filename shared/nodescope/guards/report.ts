/**
 * An Event on the VPA (`kubectl describe vpa`) when what the guards hold back changed: reason
 * ResizeGuarded, Warning, within the cycle's write budget. The same holds are not said again.
 */
import { VPA_GROUP } from '../../kernel/crds/vpa.js';
import { type CycleRun, describe } from '../cycle-run.js';
import type { NodeScopeTarget } from '../targets.js';
import { type GuardsSummary, guardsLine } from './summary.js';

export const GUARDED_EVENT_REASON = 'ResizeGuarded';

export async function guardEvent(run: CycleRun, target: NodeScopeTarget, s: GuardsSummary): Promise<void> {
  if (!run.budget.take()) return;
  const { namespace, name, uid } = target.vpa;
  const at = new Date(run.now).toISOString();
  try {
    await run.reader.send(
      'create VPA event',
      'POST',
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
      {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${name}.guard.${run.now.toString(16)}`, namespace },
        involvedObject: {
          apiVersion: `${VPA_GROUP}/v1`,
          kind: 'VerticalPodAutoscaler',
          name,
          namespace,
          ...(uid ? { uid } : {}),
        },
        type: 'Warning',
        reason: GUARDED_EVENT_REASON,
        message: guardsLine(s).slice(0, 1024),
        source: { component: 'fleetscope-nodescope' },
        firstTimestamp: at,
        lastTimestamp: at,
        count: 1,
      },
    );
  } catch (err) {
    run.errors.push(`event on VPA ${namespace}/${name}: ${describe(err)}`);
  }
}
