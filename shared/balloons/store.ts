/**
 * What balloons keep about a cluster, and the port they keep it through ({@link BalloonStore}): the
 * operator's input (node pools' policies, explicit sizes per node) and the state every managed node was
 * left in by the last cycle. In domain terms only: a write that lost to another cycle says so
 * ('lost-race'), never how a store found out. Adapters: ./store-dynamo.ts (the fleetscope table),
 * ./store-memory.ts (in process, for unit tests), held to the same contract by
 * test/balloons/store-contract.test.ts.
 */
import type { ResizeRecord } from '../resize/index.js';
import type { Amounts } from './amounts.js';
import type { ExplicitRequest, SizeSource } from './desired.js';
import type { BalloonPolicy } from './policy.js';
import type { NodePrice } from './prices.js';
import type { PodInTheWay } from './sizing.js';

export interface BlockedReclaim {
  /** What the balloon could not take back. */
  missing: Amounts;
  pods: PodInTheWay[];
  since: number;
}

/** One managed node after a cycle. Amounts are integers (millicores, bytes). */
export interface NodeState {
  allocatable: Amounts;
  capacity: Amounts;
  /** Requests of the node's other pods; used (metrics API) when available. */
  workloads: Amounts;
  used?: Amounts;
  desired?: Amounts;
  source?: SizeSource;
  /** The balloon's spec now, and what it should be. */
  balloon: Amounts;
  target: Amounts;
  podUid?: string;
  blocked?: BlockedReclaim;
  resize?: ResizeRecord;
  /** The effective size fleetscope settled on, and when it last shrank the node (the cool-down). */
  size?: Amounts;
  lastShrinkAt?: number;
  /** The node autoscaler that manages the node, from its labels (./autoscalers.ts). */
  autoscaler?: string;
  /**
   * What the node's pods and balloon hold beyond its allocatable (the VM shrank under them, a hot-unplug):
   * the balloon deflates and waits for the kubelet; nothing is evicted.
   */
  overcommitted?: Amounts;
  /** How far usage (metrics.k8s.io) beside the balloon goes beyond allocatable, where more than requests do. */
  overcommittedByUsage?: Amounts;
  /** What the node's pods use, with headroom, where it kept the node from shrinking further. */
  usageFloor?: Amounts;
  /** Why the node's balloon pod is not sound (./integrity.ts): it is held at the floor. */
  unsound?: string[];
  /** The node's price (instance type, USD per hour), to value its ballooned capacity; absent if unknown. */
  price?: NodePrice;
  /** KEP-5836 (1.37+): the node's opt-out from resize preemption; absent where the server has none. */
  resizePreemption?: ResizePreemptionState;
}

/** fleetscope's key in the node's disableResizePreemption, and what the kubelet does with it. */
export interface ResizePreemptionState {
  /** fleetscope.io/balloons is in spec.podPreemptionPolicy.disableResizePreemption. */
  optedOut: boolean;
  /** Why it could not be added (the list is full), naming the node. */
  problem?: string;
  /** Pods ("ns/name") whose Deferred resize the kubelet holds without preemption (PodResizePreemptionDisabled). */
  held?: string[];
}

/** What an OpenAPI v3 document of core/v1 said of the KEP-5836 node field. */
export interface FieldDetection {
  /** Its serverRelativeURL in the OpenAPI index (with the content hash): a new one is read again. */
  document: string;
  served: boolean;
}

/** A pod labelled as a balloon that fleetscope does not own (a workload; never written). */
export interface Impostor {
  namespace: string;
  name: string;
  uid: string;
  node: string;
}

export interface ClusterBalloons {
  cluster: string;
  at: number;
  cycleId: string;
  nodes: Record<string, NodeState>;
  /** Why nothing is resized: the cluster has no pods/resize. Asked again after `unsupportedUntil`. */
  unsupported?: string;
  unsupportedUntil?: number;
  /** KEP-5836: the server dropped the node field (its gate is off); no key is added before this time. */
  resizePreemptionOffUntil?: number;
  /** KEP-5836: whether core/v1's OpenAPI (this document, its URL carrying its hash) has the node field. */
  resizePreemptionField?: FieldDetection;
  /** Errors of the last cycle (per node or cluster-wide). */
  errors: string[];
  /** Pods labelled as balloons that fleetscope does not own, seen by the last cycle. */
  impostors?: Impostor[];
  version: number;
}

export interface BalloonItems {
  policies: BalloonPolicy[];
  requests: ExplicitRequest[];
  state?: ClusterBalloons;
}

/** How a conditional write of a cycle's state came out: stored, or another cycle stored first (nothing written). */
export type StateWrite = 'saved' | 'lost-race';
/** How a removal by name came out: removed, or there was nothing by that name. */
export type Removal = 'removed' | 'absent';
/** Removing the explicit size read at one time: removed, or it is gone or was set again since (kept). */
export type RequestRemoval = 'removed' | 'superseded';

/** The balloons' store. Every read is consistent: a cycle sees what the one before it stored. */
export interface BalloonStore {
  /** Everything balloons keep about a cluster: policies by name, explicit sizes by node, the state. */
  load(cluster: string): Promise<BalloonItems>;
  state(cluster: string): Promise<ClusterBalloons | undefined>;
  /**
   * Stores a cycle's state if nobody else stored one since the version `previous` was read (undefined:
   * none was stored), as version `previous + 1`.
   */
  saveState(state: Omit<ClusterBalloons, 'version'>, previous: number | undefined): Promise<StateWrite>;
  /** Creates or replaces the policy of that name. */
  putPolicy(cluster: string, policy: BalloonPolicy): Promise<void>;
  deletePolicy(cluster: string, name: string): Promise<Removal>;
  /** Creates or replaces the node's explicit size. */
  putRequest(cluster: string, request: ExplicitRequest): Promise<void>;
  /** Removes the node's explicit size only if it is still the one asked for at `requestedAt`. */
  deleteRequestIf(cluster: string, node: string, requestedAt: number): Promise<RequestRemoval>;
  deleteRequest(cluster: string, node: string): Promise<Removal>;
  /** Removes everything balloons keep about a cluster; how many records that was. */
  clear(cluster: string): Promise<number>;
}
