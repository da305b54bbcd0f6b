/**
 * Saying what living beside upstream VPA means for each VPA (upstream-vpa.ts): scoped VPAs left to
 * another recommender, and what upstream's components would do to the VPAs fleetscope sizes. Each
 * notice is said once per VPA and reason (the cluster record remembers them): a log line, and a
 * Kubernetes Event on the VPA (`kubectl describe vpa`), within the cycle's write budget and never in
 * update mode Off, which writes nothing. `recommendations get/list` and the summary read the notices
 * from the cluster record.
 */
import { type CycleRun, describe } from './cycle-run.js';
import { type FoundTargets, vpaKey } from './find-targets.js';
import type { ClusterRecord } from './store.js';
import { writesAllowed } from './targets.js';
import type { UpstreamNotice } from './upstream-vpa.js';
import { postVpaEvent } from './vpa-event.js';

export const SKIPPED_EVENT_REASON = 'NodeScopeSkipped';
export const WARNING_EVENT_REASON = 'UpstreamVPAConflict';

/** This cycle's notices: one per skipped VPA and one per warning of each target. */
export function noticesOf(found: FoundTargets): UpstreamNotice[] {
  const out: UpstreamNotice[] = found.skipped.map((s) => ({
    namespace: s.namespace,
    vpa: s.vpa,
    uid: s.uid,
    updateMode: s.updateMode,
    kind: 'skipped',
    reason: s.reason,
    ...(s.daemonSet ? { daemonSet: s.daemonSet } : {}),
  }));
  for (const t of found.targets)
    for (const w of t.warnings ?? [])
      out.push({
        namespace: t.vpa.namespace,
        vpa: t.vpa.name,
        uid: t.vpa.uid,
        updateMode: t.updateMode,
        kind: 'warning',
        reason: w,
        daemonSet: `${t.ds.namespace}/${t.ds.name}`,
      });
  return out;
}

const noticeKey = (n: UpstreamNotice) => `${n.uid}#${n.kind}#${n.reason}`;

/**
 * Logs and records as Events the notices not said before; returns this cycle's notices, each marked
 * said or not (an Event the budget or an error kept back is tried again next cycle).
 */
export async function publishNotices(
  run: CycleRun,
  found: FoundTargets,
  clusterRec: ClusterRecord | undefined,
): Promise<UpstreamNotice[]> {
  const notices = noticesOf(found);
  const said = new Set((clusterRec?.notices ?? []).filter((n) => n.said).map(noticeKey));
  let k = 0;
  for (const n of notices) {
    n.said = said.has(noticeKey(n));
    if (n.said) continue;
    run.ctx.logger?.warn(
      n.kind === 'skipped'
        ? 'scoped VerticalPodAutoscaler left to another recommender'
        : 'upstream VPA would act on a VPA fleetscope sizes',
      { namespace: n.namespace, vpa: n.vpa, reason: n.reason },
    );
    // Under fleetscope.io/writes: none nothing is written, an Event included (mode Off still says it).
    if (!writesAllowed(found.vpas.get(vpaKey(n.namespace, n.vpa)))) {
      n.said = true;
      continue;
    }
    if (!run.budget.take()) continue;
    try {
      await recordEvent(run, n, k++);
      n.said = true;
    } catch (err) {
      run.errors.push(`event on VPA ${n.namespace}/${n.vpa}: ${describe(err)}`);
    }
  }
  return notices;
}

function recordEvent(run: CycleRun, n: UpstreamNotice, k: number): Promise<void> {
  return postVpaEvent(
    run,
    { namespace: n.namespace, name: n.vpa, ...(n.uid ? { uid: n.uid } : {}) },
    {
      suffix: String(k),
      type: n.kind === 'skipped' ? 'Normal' : 'Warning',
      reason: n.kind === 'skipped' ? SKIPPED_EVENT_REASON : WARNING_EVENT_REASON,
      message: n.reason,
    },
  );
}
