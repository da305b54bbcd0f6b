/**
 * The fleet report as data: what the HTML (or any other) renderer draws. Built by a pure function from
 * what the stores hold (gather.ts reads them), so every figure is testable without a browser.
 *
 * Amounts are numbers in the units the rest of fleetscope computes in: CPU in millicores, memory in
 * bytes. Renderers turn them into words with shared/kernel/units-format.ts.
 */
import type { DaemonSetFigures, NodeFigures, Pair } from '../nodescope/figures.js';

export { addPair, type Pair, scalePair, subPair, ZERO_PAIR } from '../nodescope/figures.js';

/** A section with nothing to show says why ("no cycle has run yet", ...). */
export interface Section {
  empty?: string;
}

export interface ClusterSummary {
  name: string;
  reachable?: boolean;
  version?: string;
  nodes?: number;
  metricsApi?: string;
  clusterSet?: string;
}

export type NodeTarget = NodeFigures;

/**
 * One node-scoped DaemonSet (KEP-4943): each node's target next to the DaemonSet-wide one and to what
 * its pod requests today. The figures are shared/nodescope/figures.ts's, the same as the CLI's.
 */
export interface DaemonSetReport extends DaemonSetFigures {
  cluster: string;
  namespace: string;
  name: string;
  vpa: string;
  updateMode: string;
  /** perNodeTotal - requestsTotal: what per-node sizing changes against what the pods request today. */
  change: Pair;
  /** perNodeTotal - dsWideTotal: against a DaemonSet-wide VPA giving every pod the same target. */
  delta: Pair;
  /** Why there is nothing to draw yet. */
  empty?: string;
  /** Canary and revert (issue 30): the rollout in words and the reverts with why. */
  rollout?: {
    phrase: string;
    reverts: { node: string; at: string; reason: string; detail: string; sizeChange: string }[];
  };
}

export interface ClusterRequests {
  cluster: string;
  /** What the DaemonSets' pods request today, on the nodes with a recommendation. */
  current: Pair;
  /** The per-node recommendations summed. */
  recommended: Pair;
  daemonSets: number;
}

/** Capacity of one node pool of one cluster (KEP-5620 balloons). */
export interface PoolCapacity {
  cluster: string;
  pool: string;
  nodes: number;
  allocatable: Pair;
  workloads: Pair;
  free: Pair;
  /** Held by balloons: capacity that doesn't exist (the VM is smaller than the node says). */
  balloon: Pair;
  blockedNodes: number;
  /** Monthly value of the ballooned capacity at the nodes' prices (USD), and the nodes with no price. */
  balloonMonthlyUsd: number;
  unpricedNodes: number;
}

export interface ClusterSetReport {
  name: string;
  members: { cluster: string; clusterId: string; since?: string; pending?: string }[];
}

export interface ClaimsRow {
  cluster: string;
  clusterId?: string;
  clusterSet?: string;
  pending?: string;
  customClaims: string[];
  sync?: string;
}

export interface FeatureCell {
  cluster: string;
  feature: string;
  state: 'On' | 'Off' | 'TurningOn' | 'TurningOff';
  desired: 'on' | 'off';
  /** A transition in progress: its next task and what it waits for. */
  moving?: { task?: string; waitingFor?: string; since: string };
  /** What an Off feature still leaves behind. */
  dangling: string[];
}

export interface ReportModel {
  generatedAt: string;
  /** The one cluster the report is about (`--cluster`), or the whole fleet. */
  scope?: string;
  summary: {
    clusters: number;
    reachable: number;
    clusterSets: number;
    nodeScopedDaemonSets: number;
    balloonNodes: number;
    featuresMoving: number;
    featuresDangling: number;
    /** Requests today and per-node targets, summed over the fleet's node-scoped DaemonSets. */
    requestsToday: Pair;
    recommended: Pair;
    /** recommended - requestsToday: what applying the per-node targets changes (negative saves). */
    change: Pair;
    /** Per-node sizing vs a DaemonSet-wide VPA's target on every node (negative saves). */
    perNodeDelta: Pair;
  };
  clusters: ClusterSummary[];
  nodescope: Section & { daemonSets: DaemonSetReport[] };
  requests: Section & { clusters: ClusterRequests[] };
  balloons: Section & { pools: PoolCapacity[]; notes: string[] };
  claims: Section & { sets: ClusterSetReport[]; rows: ClaimsRow[] };
  features: Section & { features: string[]; clusters: string[]; cells: FeatureCell[] };
}
