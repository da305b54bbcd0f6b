/**
 * The report model from what the stores hold: pure (no I/O, no clock), so the figures are tested on
 * plain data and the renderers only draw.
 */

import type { ClusterBalloons } from '../balloons/store.js';
import { figuresOf, monthlyValue, poolOf } from '../balloons/summary-model.js';
import type { StoredIdentity, SyncStatus } from '../claims/store.js';
import type { FeatureRecord } from '../features/model.js';
import { refKey } from '../features/model.js';
import type { ClusterStatus } from '../fleet/cluster.js';
import { daemonSetFiguresOf } from '../nodescope/figures.js';
import type { DaemonSetRecommendations } from '../nodescope/query.js';
import { type RolloutRecord, rolloutPhrase, sizeChangeWords } from '../nodescope/rollout.js';
import type { DsHead } from '../nodescope/store.js';
import {
  addPair,
  type ClaimsRow,
  type ClusterRequests,
  type ClusterSetReport,
  type ClusterSummary,
  type DaemonSetReport,
  type FeatureCell,
  type PoolCapacity,
  type ReportModel,
  type Section,
  subPair,
  ZERO_PAIR,
} from './model.js';

/** Everything the report reads, as the stores return it. */
export interface ReportInputs {
  clusters: string[];
  statuses: Map<string, ClusterStatus>;
  /** Clusters whose nodescope cycle has run at least once. */
  nodescopeCycled: Set<string>;
  daemonSets: {
    head: DsHead;
    /** The same live recommendations the CLI reads (getRecommendations). */
    recs?: Pick<DaemonSetRecommendations, 'nodes' | 'dsWide' | 'requests' | 'podRequests' | 'asOf'> &
      Partial<Pick<DaemonSetRecommendations, 'scope' | 'groups'>>;
    /** Canary wave, hold and reverts (the apply item's rollout). */
    rollout?: RolloutRecord;
  }[];
  balloons: { cluster: string; state?: ClusterBalloons; policies: number }[];
  identities: StoredIdentity[];
  customClaims: Map<string, string[]>;
  syncs: Map<string, SyncStatus>;
  features: { record: FeatureRecord; dangling: string[] }[];
}

function daemonSetReport(
  { head, recs, rollout }: ReportInputs['daemonSets'][number],
  cycled: boolean,
  now: number,
): DaemonSetReport {
  const figures = daemonSetFiguresOf(head, recs);
  return {
    ...(rollout ? { rollout: rolloutReport(rollout, now) } : {}),
    cluster: head.cluster,
    namespace: head.namespace,
    name: head.name,
    vpa: `${head.vpa.namespace}/${head.vpa.name}`,
    updateMode: head.updateMode,
    ...figures,
    change: subPair(figures.perNodeTotal, figures.requestsTotal),
    delta: subPair(figures.perNodeTotal, figures.dsWideTotal),
    ...(figures.nodes.length === 0
      ? {
          empty: cycled
            ? 'no recommendation yet: no samples so far (is the metrics API there?)'
            : 'no cycle has run for this cluster yet',
        }
      : {}),
  };
}

function requestsByCluster(daemonSets: DaemonSetReport[]): ClusterRequests[] {
  const by = new Map<string, ClusterRequests>();
  for (const ds of daemonSets) {
    if (ds.nodes.length === 0) continue;
    const row = by.get(ds.cluster) ?? {
      cluster: ds.cluster,
      current: ZERO_PAIR,
      recommended: ZERO_PAIR,
      daemonSets: 0,
    };
    by.set(ds.cluster, {
      ...row,
      current: addPair(row.current, ds.requestsTotal),
      recommended: addPair(row.recommended, ds.perNodeTotal),
      daemonSets: row.daemonSets + 1,
    });
  }
  return [...by.values()].sort((a, b) => a.cluster.localeCompare(b.cluster));
}

function pools(balloons: ReportInputs['balloons']): { pools: PoolCapacity[]; notes: string[] } {
  const out = new Map<string, PoolCapacity>();
  const notes: string[] = [];
  for (const { cluster, state } of balloons) {
    if (state?.unsupported) notes.push(`${cluster}: ${state.unsupported}`);
    for (const err of state?.errors ?? []) notes.push(`${cluster}: ${err}`);
    for (const s of Object.values(state?.nodes ?? {})) {
      const pool = poolOf(s);
      const key = `${cluster}\u0000${pool}`;
      const f = figuresOf(s);
      const p = out.get(key) ?? {
        cluster,
        pool,
        nodes: 0,
        allocatable: ZERO_PAIR,
        workloads: ZERO_PAIR,
        free: ZERO_PAIR,
        balloon: ZERO_PAIR,
        blockedNodes: 0,
        balloonMonthlyUsd: 0,
        unpricedNodes: 0,
      };
      const value = monthlyValue(s);
      out.set(key, {
        ...p,
        nodes: p.nodes + 1,
        allocatable: addPair(p.allocatable, f.allocatable),
        workloads: addPair(p.workloads, f.workloads),
        free: addPair(p.free, f.free),
        balloon: addPair(p.balloon, f.balloon),
        blockedNodes: p.blockedNodes + (s.blocked ? 1 : 0),
        balloonMonthlyUsd: p.balloonMonthlyUsd + (value ?? 0),
        unpricedNodes: p.unpricedNodes + (value === undefined ? 1 : 0),
      });
    }
  }
  const sorted = [...out.values()].sort(
    (a, b) => a.cluster.localeCompare(b.cluster) || a.pool.localeCompare(b.pool),
  );
  return { pools: sorted, notes };
}

/** Why no node is managed by balloons: the first of the things balloons wait for that is missing. */
function balloonsEmpty(inputs: ReportInputs): string {
  if (inputs.balloons.every((b) => !b.state))
    return 'no balloon cycle has run yet (the balloons capability sizes nodes at each cycle)';
  if (inputs.balloons.every((b) => b.policies === 0))
    return 'no balloon policy, explicit size or shared host asks for balloons (fleetscope balloons policy set)';
  return 'no node is managed by balloons yet';
}

function claims(inputs: ReportInputs): { sets: ClusterSetReport[]; rows: ClaimsRow[] } {
  const bySet = new Map<string, ClusterSetReport>();
  const rows: ClaimsRow[] = [];
  for (const i of [...inputs.identities].sort((a, b) => a.cluster.localeCompare(b.cluster))) {
    const pending = i.pending ? `${i.pending.op} ${i.pending.set} since ${i.pending.at}` : undefined;
    const set = i.clusterSet ?? i.pending?.set;
    if (set) {
      const s = bySet.get(set) ?? { name: set, members: [] };
      s.members.push({
        cluster: i.cluster,
        clusterId: i.clusterId,
        ...(i.clusterSet === set && i.memberSince ? { since: i.memberSince } : {}),
        ...(i.clusterSet !== set && pending ? { pending } : {}),
      });
      bySet.set(set, s);
    }
    const sync = inputs.syncs.get(i.cluster);
    rows.push({
      cluster: i.cluster,
      clusterId: i.clusterId,
      ...(i.clusterSet ? { clusterSet: i.clusterSet } : {}),
      ...(pending ? { pending } : {}),
      customClaims: [...(inputs.customClaims.get(i.cluster) ?? [])].sort(),
      ...(sync ? { sync: `${sync.state}${sync.error ? `: ${sync.error}` : ''}` } : {}),
    });
  }
  return { sets: [...bySet.values()].sort((a, b) => a.name.localeCompare(b.name)), rows };
}

function featureCell({ record: r, dangling }: ReportInputs['features'][number]): FeatureCell {
  const next = r.tasks[0];
  return {
    cluster: r.cluster,
    feature: refKey(r),
    state: r.state,
    desired: r.desired ?? r.default,
    ...(r.state === 'TurningOn' || r.state === 'TurningOff'
      ? {
          moving: {
            ...(next ? { task: next.title } : {}),
            ...(next?.waitingFor ? { waitingFor: next.waitingFor } : {}),
            since: new Date(r.transition?.startedAt ?? r.updatedAt).toISOString(),
          },
        }
      : {}),
    dangling: r.state === 'Off' ? dangling : [],
  };
}

const uniqueSorted = (xs: string[]) => [...new Set(xs)].sort();

/** The report's sections, each with its rows or why it has none. */
type Sections = Pick<ReportModel, 'nodescope' | 'requests' | 'balloons' | 'claims' | 'features'>;

export function buildReportModel(inputs: ReportInputs, now: Date, scope?: string): ReportModel {
  const clusters = clusterSummaries(inputs);
  const sections = sectionsOf(inputs, now.getTime());
  return {
    generatedAt: now.toISOString(),
    ...(scope ? { scope } : {}),
    summary: summaryOf(clusters, sections),
    clusters,
    ...sections,
  };
}

function clusterSummaries(inputs: ReportInputs): ClusterSummary[] {
  const setOf = new Map(inputs.identities.map((i) => [i.cluster, i.clusterSet]));
  return inputs.clusters.map((name) => {
    const s = inputs.statuses.get(name);
    const set = setOf.get(name);
    return {
      name,
      ...(s ? { reachable: s.reachable, metricsApi: s.metricsApi } : {}),
      ...(s?.serverVersion ? { version: s.serverVersion } : {}),
      ...(s?.nodeCount !== undefined ? { nodes: s.nodeCount } : {}),
      ...(set ? { clusterSet: set } : {}),
    };
  });
}

/** What canary and revert did to the DaemonSet, in words (the same phrase as `recommendations list`). */
function rolloutReport(r: RolloutRecord, now: number): NonNullable<DaemonSetReport['rollout']> {
  return {
    phrase: rolloutPhrase(r, now),
    reverts: r.reverts.map((e) => ({
      node: e.node,
      at: new Date(e.at).toISOString(),
      reason: e.reason,
      detail: e.detail,
      sizeChange: sizeChangeWords(e.from, e.to),
    })),
  };
}

function sectionsOf(inputs: ReportInputs, now: number): Sections {
  // A fleet with no cluster registered says so in every section, rather than why each is empty.
  const noClusters =
    inputs.clusters.length === 0 ? 'no cluster is registered (fleetscope cluster register)' : undefined;
  const whyEmpty = (rows: number, why: () => string): Section =>
    rows === 0 ? { empty: noClusters ?? why() } : {};

  const daemonSets = inputs.daemonSets.map((d) =>
    daemonSetReport(d, inputs.nodescopeCycled.has(d.head.cluster), now),
  );
  const requests = requestsByCluster(daemonSets);
  const { pools: poolRows, notes } = pools(inputs.balloons);
  const claimRows = claims(inputs);
  const cells = inputs.features.map(featureCell);
  return {
    nodescope: {
      daemonSets,
      ...whyEmpty(daemonSets.length, () =>
        inputs.nodescopeCycled.size === 0
          ? 'no nodescope cycle has run yet'
          : 'no VerticalPodAutoscaler asks for node scope (annotation fleetscope.io/scope: node on a DaemonSet VPA)',
      ),
    },
    requests: {
      clusters: requests,
      ...whyEmpty(requests.length, () => 'no recommendation yet: no node-scoped DaemonSet has samples'),
    },
    balloons: { pools: poolRows, notes, ...whyEmpty(poolRows.length, () => balloonsEmpty(inputs)) },
    claims: {
      ...claimRows,
      ...whyEmpty(
        claimRows.rows.length,
        () => 'no cluster has an ID yet: none has been reached since registration',
      ),
    },
    features: {
      features: uniqueSorted(cells.map((c) => c.feature)),
      clusters: uniqueSorted(cells.map((c) => c.cluster)),
      cells,
      ...whyEmpty(cells.length, () => 'no feature announced yet: the features reconciler has not run'),
    },
  };
}

function summaryOf(clusters: ClusterSummary[], sections: Sections): ReportModel['summary'] {
  const { daemonSets } = sections.nodescope;
  const { cells } = sections.features;
  return {
    clusters: clusters.length,
    reachable: clusters.filter((c) => c.reachable).length,
    clusterSets: sections.claims.sets.length,
    nodeScopedDaemonSets: daemonSets.length,
    balloonNodes: sections.balloons.pools.reduce((n, p) => n + p.nodes, 0),
    featuresMoving: cells.filter((c) => c.moving).length,
    featuresDangling: cells.filter((c) => c.dangling.length > 0).length,
    ...fleetChange(sections.requests.clusters),
    perNodeDelta: daemonSets.reduce((s, d) => addPair(s, d.delta), ZERO_PAIR),
  };
}

/** What applying the per-node targets changes against what the pods request today, fleet-wide. */
function fleetChange(rows: ClusterRequests[]) {
  const requestsToday = rows.reduce((s, r) => addPair(s, r.current), ZERO_PAIR);
  const recommended = rows.reduce((s, r) => addPair(s, r.recommended), ZERO_PAIR);
  return { requestsToday, recommended, change: subPair(recommended, requestsToday) };
}
