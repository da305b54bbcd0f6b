/**
 * The end of a cycle: what it did, as the NodeScopeCycleCompleted detail and the cluster record (the
 * next cycle reads the refused targets already reported and whether the server has pods/resize).
 */
import type { Detail } from '../platform/events.js';
import type { Resizer } from '../resize/index.js';
import type { MetricsState } from './collect.js';
import type { CycleRun, DsOutcome, OwnedReport } from './cycle-run.js';
import type { FoundTargets } from './find-targets.js';
import type { ClusterRecord } from './store.js';
import type { RejectedTarget } from './targets.js';
import { type UpstreamNotice, upstreamPhrase } from './upstream-vpa.js';

export interface CycleResult {
  detail: Detail<'NodeScopeCycleCompleted'>;
  daemonSets: DsOutcome[];
  rejected: RejectedTarget[];
  /** Refused targets not reported before (publish an event for each). */
  newlyRejected: RejectedTarget[];
  resizeReports: OwnedReport[];
  reads: number;
  writes: number;
  requestsByOperation: Record<string, number>;
  /** Response bytes read from the apiserver: on the wire (gzip-compressed where it was) and decoded. */
  wireBytes: number;
  decodedBytes: number;
  /** CPU ms by phase (load: read and decode states; collect: lists and their JSON; ...). */
  phases: Record<string, number>;
}

export interface CycleSoFar {
  found: FoundTargets;
  nodes: number;
  /** Nodes whose Ready condition is not True, when the cycle read the nodes. */
  notReady: number | undefined;
  outcomes: DsOutcome[];
  newlyRejected: RejectedTarget[];
  notices: UpstreamNotice[];
  resizer: Resizer;
  clusterRec: ClusterRecord | undefined;
}

export async function finishCycle(run: CycleRun, c: CycleSoFar): Promise<CycleResult> {
  const detail = cycleDetail(run, c);
  await run.store.putCluster(clusterRecord(run, c, detail));
  run.phases.mark('finish');
  const requests = run.requestStats();
  return {
    detail,
    daemonSets: c.outcomes,
    rejected: c.found.rejected,
    newlyRejected: c.newlyRejected,
    resizeReports: run.reports,
    reads: requests.requests - requests.writes,
    writes: requests.writes,
    requestsByOperation: requests.byOperation,
    wireBytes: requests.wireBytes,
    decodedBytes: requests.decodedBytes,
    phases: {
      ...run.phases.ms,
      'collect: JSON.parse': requests.parseMs,
      'collect: page handlers': requests.pageMs,
    },
  };
}

function cycleDetail(run: CycleRun, c: CycleSoFar): Detail<'NodeScopeCycleCompleted'> {
  const { outcomes } = c;
  // The metrics API as the last DaemonSet that could not use it found it.
  let metricsApi: MetricsState | 'unknown' = c.found.targets.length > 0 ? 'available' : 'unknown';
  for (const o of outcomes) if (o.metrics !== 'available') metricsApi = o.metrics;
  const sum = (f: (o: DsOutcome) => number) => outcomes.reduce((a, o) => a + f(o), 0);
  const count = (f: (r: OwnedReport['report']) => boolean) => run.reports.filter((r) => f(r.report)).length;
  return {
    cluster: run.cluster,
    cycleId: run.ctx.cycleId,
    vpaCrd: c.found.crd,
    metricsApi,
    daemonSets: outcomes.length,
    rejectedTargets: c.found.rejected.length,
    nodes: c.nodes,
    ...(c.notReady !== undefined ? { notReadyNodes: c.notReady } : {}),
    scopes: sum((o) => o.scopes),
    fallbackNodes: sum((o) => o.fallbackNodes),
    samples: sum((o) => o.samples),
    ooms: sum((o) => o.ooms),
    resizes: {
      requested: count((r) => r.kind === 'resized' && r.outcome === 'Requested'),
      completed: count((r) => r.kind === 'resized' && r.outcome === 'Completed'),
      refused: count((r) => r.kind === 'refused'),
    },
    apiRequests: run.requestStats().requests,
    errors: run.errors.slice(0, 20).map((e) => e.slice(0, 1024)),
    ...upstreamFields(c),
    at: new Date(run.now).toISOString(),
  };
}

/** What the cycle found of upstream VPA, and how many VPAs that touched (absent when it did not look). */
function upstreamFields(c: CycleSoFar): Partial<Detail<'NodeScopeCycleCompleted'>> {
  const { upstream } = c.found;
  if (upstream.state === 'not-read') return {};
  const count = (kind: UpstreamNotice['kind']) => c.notices.filter((n) => n.kind === kind).length;
  return {
    upstreamVpa: { state: upstream.state, components: [...new Set(upstream.components.map((x) => x.role))] },
    skippedVpas: count('skipped'),
    upstreamWarnings: count('warning'),
  };
}

function clusterRecord(
  run: CycleRun,
  c: CycleSoFar,
  detail: Detail<'NodeScopeCycleCompleted'>,
): ClusterRecord {
  const record: ClusterRecord = {
    cluster: run.cluster,
    lastCycle: detail,
    rejected: c.found.rejected.map((r) => ({
      namespace: r.namespace,
      vpa: r.vpa,
      uid: r.uid,
      kind: r.targetRef.kind,
      name: r.targetRef.name,
      reason: r.reason,
    })),
    ...(c.found.upstream.state !== 'not-read' ? { upstream: upstreamPhrase(c.found.upstream) } : {}),
    ...(c.notices.length > 0 ? { notices: c.notices } : {}),
  };
  if (c.resizer.unsupported) {
    const until = c.clusterRec?.resizeUnsupportedUntil;
    record.resizeUnsupported = c.resizer.unsupported;
    record.resizeUnsupportedUntil =
      until !== undefined && run.now < until ? until : run.now + run.settings.resizeUnsupportedRecheckMs;
  }
  return record;
}
