/**
 * What a balloon cycle tells the world: bus events (every resize through the shared resize reports,
 * every revert, every newly blocked reclaim, every capacity change from below, and the cycle's totals)
 * and the EMF metrics that go with them.
 */
import type { OutgoingEvent } from '../platform/publisher.js';
import { resizeEventDetail, resizeMetricName } from '../resize/index.js';
import { capacityOf, quantitiesOf } from './amounts.js';
import type { NodeDecision } from './decide.js';
import type { BalloonCycleResult, Revert } from './ledger.js';
import { BALLOON_NAME } from './manifests.js';

export const BALLOONS = 'balloons';

const iso = (ms: number) => new Date(ms).toISOString();

export function balloonEvents(r: BalloonCycleResult, cycleId: string, apiRequests: number): OutgoingEvent[] {
  const at = iso(r.at);
  const owner = { cluster: r.cluster, source: BALLOONS, owner: { kind: 'DaemonSet', name: BALLOON_NAME } };
  const events: Unrouted[] = [
    ...r.reports.map((report) => resizeEventDetail(report, owner) as Unrouted),
    ...r.reverts.map((v) => revertEvent(r.cluster, v, at)),
    ...r.decisions.flatMap((d) => nodeEvents(r.cluster, d, at)),
    ...(r.managed ? [completedEvent(r, cycleId, apiRequests)] : []),
  ];
  const resources = [`cluster/${r.cluster}`];
  return events.map((e) => ({ ...e, resources }));
}

type Unrouted = Omit<OutgoingEvent, 'resources'>;

function completedEvent(r: BalloonCycleResult, cycleId: string, apiRequests: number): Unrouted {
  return { detailType: 'BalloonCycleCompleted', detail: cycleDetail(r, cycleId, apiRequests) };
}

function revertEvent(cluster: string, v: Revert, at: string): Unrouted {
  return {
    detailType: 'BalloonResizeReverted',
    detail: {
      cluster,
      node: v.node,
      pod: v.pod,
      podUid: v.podUid,
      from: capacityOf(v.from),
      to: capacityOf(v.to),
      message: v.message.slice(0, 1024),
      at,
    },
  };
}

/** What a node's decision tells: a reclaim newly blocked (and by whom), a capacity changed from below. */
function nodeEvents(cluster: string, d: NodeDecision, at: string): Unrouted[] {
  const out: Unrouted[] = [];
  if (d.newlyBlocked && d.state.blocked)
    out.push({
      detailType: 'BalloonReclaimBlocked',
      detail: {
        cluster,
        node: d.node,
        missing: capacityOf(d.state.blocked.missing),
        podsInTheWay: d.state.blocked.pods.map((p) => ({
          namespace: p.namespace,
          name: p.name,
          ...quantitiesOf(p.requests),
        })),
        at,
      },
    });
  if (d.capacityChanged)
    out.push({
      detailType: 'NodeCapacityChanged',
      detail: {
        cluster,
        node: d.node,
        from: capacityOf(d.capacityChanged.from),
        to: capacityOf(d.capacityChanged.to),
        at,
      },
    });
  return out;
}

function cycleDetail(r: BalloonCycleResult, cycleId: string, apiRequests: number) {
  const s = r.summary;
  const count = (f: (x: BalloonCycleResult['reports'][number]) => boolean) => r.reports.filter(f).length;
  return {
    cluster: r.cluster,
    cycleId,
    nodes: s.nodes,
    allocatable: capacityOf(s.allocatable),
    balloon: capacityOf(s.balloon),
    workloads: capacityOf(s.workloads),
    ...(s.used ? { used: capacityOf(s.used) } : {}),
    free: capacityOf(s.free),
    blockedNodes: s.blockedNodes,
    resizes: {
      requested: count((x) => x.kind === 'resized' && x.outcome === 'Requested'),
      completed: count((x) => x.kind === 'resized' && x.outcome === 'Completed'),
      refused: count((x) => x.kind === 'refused'),
      reverted: r.reverts.length,
    },
    apiRequests,
    errors: r.errors.slice(0, 20).map((e) => e.slice(0, 1024)),
    at: iso(r.at),
  };
}

/** EMF metrics of a cycle: counts, and the capacity that doesn't exist (for a dashboard of the fleet). */
export function balloonMetrics(
  r: BalloonCycleResult,
): [name: string, unit: 'Count' | 'None', value: number][] {
  if (!r.managed) return [];
  const counts = new Map<string, number>();
  for (const report of r.reports) {
    const name = `Balloon${resizeMetricName(report)}`;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const s = r.summary;
  return [
    ...[...counts].map(([n, v]) => [n, 'Count', v] as [string, 'Count', number]),
    ['BalloonNodes', 'Count', s.nodes],
    ['BalloonReverts', 'Count', r.reverts.length],
    ['BalloonReclaimsBlocked', 'Count', s.blockedNodes],
    ['BalloonCapacityMillicores', 'None', s.balloon.cpu],
    ['BalloonCapacityBytes', 'None', s.balloon.memory],
    ['BalloonFreeMillicores', 'None', s.free.cpu],
    ['BalloonErrors', 'Count', r.errors.length],
    ['BalloonImpostors', 'Count', r.impostors.length],
    ['BalloonObjectRepairs', 'Count', r.repairs.length],
    // The monthly value of the ballooned capacity at the nodes' prices (USD; nodes with no price count 0).
    ['BalloonMonthlyValueUsd', 'None', Math.round(s.monthlyUsd * 100) / 100],
  ];
}
