/**
 * The fleet report as data: what the HTML (or any other) renderer draws. Built by a pure function from
 * what the stores hold (gather.ts reads them), so every figure is testable without a browser.
 *
 * Amounts are numbers in the units the rest of fleetscope computes in: CPU in millicores, memory in
 * bytes. Renderers turn them into words with shared/kernel/units-format.ts.
 */
/** CPU (millicores) and memory (bytes). */
export interface Pair {
  cpu: number;
  memory: number;
}

export const ZERO_PAIR: Pair = { cpu: 0, memory: 0 };
export const addPair = (a: Pair, b: Pair): Pair => ({ cpu: a.cpu + b.cpu, memory: a.memory + b.memory });
export const subPair = (a: Pair, b: Pair): Pair => ({ cpu: a.cpu - b.cpu, memory: a.memory - b.memory });
export const scalePair = (a: Pair, k: number): Pair => ({ cpu: a.cpu * k, memory: a.memory * k });

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

export interface NodeTarget {
  node: string;
  /** node: from the node's own history; fallback: the DaemonSet-wide one (no history yet). */
  source: 'node' | 'fallback';
  target: Pair;
}

/** One node-scoped DaemonSet (KEP-4943): each node's target next to the DaemonSet-wide one. */
export interface DaemonSetReport {
  cluster: string;
  namespace: string;
  name: string;
  vpa: string;
  updateMode: string;
  /** Sum over the pod's containers, per node. Empty when no node has a recommendation yet. */
  nodes: NodeTarget[];
  /** What upstream VPA would give every pod (sum over containers). */
  dsWide: Pair;
  /** What the template requests today (sum over containers). */
  current: Pair;
  /** Totals over the nodes: per-node sizing, and the DaemonSet-wide target on each of them. */
  perNodeTotal: Pair;
  dsWideTotal: Pair;
  /** perNodeTotal - dsWideTotal: negative saves, positive adds. */
  delta: Pair;
  /** Why there is nothing to draw yet. */
  empty?: string;
}

export interface ClusterRequests {
  cluster: string;
  /** The templates' requests on every node they run on. */
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
    /** Per-node sizing over the fleet's node-scoped DaemonSets vs the DaemonSet-wide target. */
    perNodeDelta: Pair;
  };
  clusters: ClusterSummary[];
  nodescope: Section & { daemonSets: DaemonSetReport[] };
  requests: Section & { clusters: ClusterRequests[] };
  balloons: Section & { pools: PoolCapacity[]; notes: string[] };
  claims: Section & { sets: ClusterSetReport[]; rows: ClaimsRow[] };
  features: Section & { features: string[]; clusters: string[]; cells: FeatureCell[] };
}
