/** What a node-scope cycle tells the bus and CloudWatch: its events and its EMF metrics. */
import type { OutgoingEvent } from '../platform/publisher.js';
import { resizeEventDetail, resizeMetricName } from '../resize/index.js';
import { NODESCOPE } from './capability.js';
import type { CycleResult } from './cycle.js';

export function nodescopeEvents(cluster: string, result: CycleResult): OutgoingEvent[] {
  const { detail } = result;
  const resources = [`cluster/${cluster}`];
  const events: OutgoingEvent[] = [];
  for (const r of result.newlyRejected)
    events.push({
      detailType: 'NodeScopeTargetRejected',
      detail: {
        cluster,
        namespace: r.namespace,
        vpa: r.vpa,
        targetRef: r.targetRef,
        reason: r.reason.slice(0, 1024),
        at: detail.at,
      },
      resources,
    });
  for (const { report, owner } of result.resizeReports) {
    const e = resizeEventDetail(report, { cluster, source: NODESCOPE, owner });
    events.push({ ...e, resources } as OutgoingEvent);
  }
  events.push({ detailType: 'NodeScopeCycleCompleted', detail, resources });
  return events;
}

export function nodescopeMetrics(result: CycleResult): [name: string, value: number][] {
  const { detail } = result;
  const counts = new Map<string, number>();
  for (const { report } of result.resizeReports) {
    const metric = resizeMetricName(report);
    counts.set(metric, (counts.get(metric) ?? 0) + 1);
  }
  return [
    ...counts,
    ['NodeScopeDaemonSets', detail.daemonSets],
    ['NodeScopeScopes', detail.scopes],
    ['NodeScopeFallbackNodes', detail.fallbackNodes],
    ['NodeScopeSamples', detail.samples],
    ['NodeScopeOoms', detail.ooms],
    ['NodeScopeApiRequests', detail.apiRequests],
    ['NodeScopeTargetsRejected', detail.rejectedTargets],
    ...(detail.metricsApi === 'absent' || detail.metricsApi === 'unavailable'
      ? ([['NodeScopeMetricsUnavailable', 1]] as [string, number][])
      : []),
    ...(detail.errors.length > 0 ? ([['NodeScopeErrors', detail.errors.length]] as [string, number][]) : []),
    ...rolloutMetrics(result),
  ];
}

/**
 * Canary and revert, for an alarm (docs/nodescope.md, production questions): reverts sent and still to
 * send this cycle, and the DaemonSets whose downsizes a revert's back-off holds now.
 */
function rolloutMetrics(result: CycleResult): [name: string, value: number][] {
  const now = Date.parse(result.detail.at);
  let reverts = 0;
  let pending = 0;
  let held = 0;
  let canaries = 0;
  for (const { rollout } of result.daemonSets) {
    if (!rollout) continue;
    reverts += rollout.reverts.length;
    pending += rollout.revertsPending;
    canaries += rollout.canariesSent;
    if (rollout.hold && rollout.hold.until > now) held++;
  }
  return [
    ['NodeScopeReverts', reverts],
    ['NodeScopeRevertsPending', pending],
    ['NodeScopeDaemonSetsHeld', held],
    ['NodeScopeCanariesSent', canaries],
  ];
}

/**
 * How much node scope grew each pod's requests in this cycle, by pod uid: the cycle's snapshot was read
 * before those resizes, and balloons must count the pods at their new per-node size.
 */
export function requestGrowth(result: CycleResult): Map<string, { cpu: number; memory: number }> {
  const out = new Map<string, { cpu: number; memory: number }>();
  const up = (after: number | undefined, before: number | undefined) =>
    Math.max(0, (after ?? 0) - (before ?? 0));
  for (const { report } of result.resizeReports) {
    if (report.kind !== 'resized' || report.outcome !== 'Requested') continue;
    let cpu = 0;
    let memory = 0;
    for (const c of report.containers) {
      cpu += up(c.after.requests?.cpu, c.before.requests?.cpu);
      memory += up(c.after.requests?.memory, c.before.requests?.memory);
    }
    if (cpu > 0 || memory > 0) out.set(report.podUid, { cpu, memory });
  }
  return out;
}
