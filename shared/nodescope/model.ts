/**
 * The in-memory model of one node-scoped DaemonSet: per node, one recommender state per container (the
 * scopes of KEP-4943), the last OOM kill recorded per container (so a kill seen again in the next pod
 * list is not recorded twice), and the recommendation last stored.
 */
import type { ScopeState } from '../recommendation/index.js';

/** Integer amounts: millicores and bytes. A resource left out of controlledResources is absent. */
export interface Amounts {
  cpu?: number;
  memory?: number;
}

export interface ContainerRec {
  target: Amounts;
  lowerBound: Amounts;
  upperBound: Amounts;
  uncappedTarget: Amounts;
  /** RequestsAndLimits with a template limit: the limit keeping the template's limit/request ratio. */
  limits?: Amounts;
}

/**
 * Where a node's recommendation comes from, in the order tried:
 *   node      the node's own history (per-node scopes)
 *   group     its group's merged history: the nodes with the same value of the group label (label
 *             scopes always; per-node scopes for a node without history of its own)
 *   fallback  the DaemonSet-wide recommendation (every node's history merged)
 */
export type RecSource = 'node' | 'group' | 'fallback';

export interface NodeRec {
  source: RecSource;
  /** source group: the group's scope value (groups.ts). */
  group?: string;
  containers: Record<string, ContainerRec>;
}

export interface NodeRecord {
  node: string;
  /** Per container index: the state, or undefined before its first sample (or while still `raw`). */
  states: (ScopeState | undefined)[];
  /**
   * Per container index: the state as stored, not decoded yet. A cycle that does not fold decodes only
   * the nodes it has to recommend for (engine.materialize); a fold decodes all.
   */
  raw?: (Uint8Array | undefined)[];
  /** Per container index: time (ms) of the last OOM kill recorded, 0 for none. */
  lastOomAt: number[];
  /** The recommendation stored with the base (as of its fold). */
  rec?: NodeRec;
  /** The node's scope value of the group label as of the last fold (how a query rebuilds groups). */
  group?: string;
}

export interface DsModel {
  containers: string[];
  nodes: Map<string, NodeRecord>;
}

export function newNodeRecord(node: string, containers: number): NodeRecord {
  return {
    node,
    states: new Array<ScopeState | undefined>(containers).fill(undefined),
    lastOomAt: new Array<number>(containers).fill(0),
  };
}

/** One cycle's observations of one node's pod (metrics-server's window end, usage per container). */
export interface NodeSamples {
  node: string;
  /** PodMetrics timestamp (ms). */
  t: number;
  /** Per container index: millicores (undefined: not reported). */
  cpu: (number | undefined)[];
  /** Per container index: bytes. */
  memory: (number | undefined)[];
}

/** An OOM kill: finishedAt of the terminated container, and its memory request then. */
export interface OomEvent {
  node: string;
  container: number;
  t: number;
  request: number;
}

/** Everything one cycle adds to a DaemonSet's states, in the order it is applied. */
export interface LogEntry {
  /** The cycle's time (ms). */
  at: number;
  /** The base generation the node indices refer to. */
  gen: number;
  containers: string[];
  samples: NodeSamples[];
  ooms: OomEvent[];
  /**
   * The scope values (group label) the cycle read for nodes whose value the base does not hold (new or
   * relabelled since the fold): so a query's live view groups them as the cycle did.
   */
  groups?: [node: string, value: string][];
}
