/**
 * Types of the shared in-place resize mechanism (KEP-1287 `pods/resize`). Node-scoped recommendations
 * resize DaemonSet pods through it; balloon pods (KEP-5620) will resize through it too.
 *
 * Amounts are integers: CPU in millicores, memory in bytes. Only cpu and memory are ever touched.
 */

/** Integer amounts of the two resizable resources. */
export interface ResourcePair {
  /** Millicores. */
  cpu?: number;
  /** Bytes. */
  memory?: number;
}

/** What one container should get. Absent keys are left as they are; limits are never added or removed. */
export interface ContainerDesired {
  requests?: ResourcePair;
  limits?: ResourcePair;
}

/** Desired resources by container name. Containers not listed are never touched. */
export type DesiredResources = Record<string, ContainerDesired>;

type Quantities = { [resource: string]: string | undefined };

export interface ContainerResourcesLike {
  requests?: Quantities;
  limits?: Quantities;
}

export interface PodConditionLike {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

/**
 * The parts of a Pod the resize mechanism reads. Raw API JSON and client-node's V1Pod both fit (every
 * field used is a string, a number or a plain object in both).
 */
export interface PodLike {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
  };
  spec?: {
    nodeName?: string;
    containers?: { name: string; resources?: ContainerResourcesLike }[];
  };
  status?: {
    phase?: string;
    qosClass?: string;
    /** Up to 1.32: Proposed, InProgress, Deferred, Infeasible (deprecated from 1.33). */
    resize?: string;
    conditions?: PodConditionLike[];
    containerStatuses?: {
      name: string;
      resources?: ContainerResourcesLike;
      allocatedResources?: Quantities;
    }[];
  };
}

/** A container's change as requested: the values before and after (cpu/memory requests and limits). */
export interface ContainerChange {
  name: string;
  before: ContainerDesired;
  after: ContainerDesired;
}

/** Where a pod's resize stands, as its status says. */
export type ResizeState =
  /** Nothing pending: the spec is what runs. */
  | 'none'
  /** Accepted by the kubelet (or not yet looked at) and being actuated. */
  | 'in-progress'
  /** PodResizePending/Deferred: fits the node in theory, not now; the kubelet retries by itself. */
  | 'deferred'
  /** PodResizePending/Infeasible: can never fit the node; the kubelet will not retry. */
  | 'infeasible'
  /** PodResizeInProgress/Error: actuation failed. */
  | 'error';

export interface ResizeObservation {
  state: ResizeState;
  reason?: string;
  message?: string;
}

/** Why a resize was refused, by the apiserver, the kubelet, or this mechanism before sending. */
export type RefusalKind =
  | 'Deferred'
  | 'Infeasible'
  | 'ActuationError'
  /** 422 from the apiserver, or predicted locally (QoS class change, request above limit). */
  | 'Invalid'
  /** 403: RBAC without pods/resize, or a ResourceQuota (1.36's NodeCapacity refusal is Infeasible). */
  | 'Forbidden'
  /** The server has no pods/resize subresource (before 1.32 or the gate is off). */
  | 'Unsupported'
  /** 409 still after re-reading and retrying. */
  | 'Conflict'
  /** The pod no longer exists. */
  | 'Gone'
  /** Anything else: timeouts, 5xx after retries. */
  | 'Error';

/** One event of the mechanism: a resize requested or completed, or a refusal. */
export type ResizeReport =
  | {
      kind: 'resized';
      outcome: 'Requested' | 'Completed';
      namespace: string;
      pod: string;
      podUid: string;
      node?: string;
      containers: ContainerChange[];
      at: number;
    }
  | {
      kind: 'refused';
      refusal: RefusalKind;
      message: string;
      namespace: string;
      pod: string;
      podUid: string;
      node?: string;
      containers: ContainerChange[];
      /** When the mechanism will try again at the earliest (ms since the epoch). */
      retryAfter?: number;
      at: number;
    };

/**
 * What the caller keeps between invocations for one resize target (a pod slot such as "this DaemonSet's
 * pod on this node"), so that refusals are not retried every cycle. Small and JSON-serialisable.
 */
export interface ResizeRecord {
  /** The pod the record is about; a recreated pod starts afresh. */
  podUid: string;
  /** Digest of the desired resources last requested. */
  desired: string;
  state: 'requested' | 'deferred' | 'infeasible' | 'rejected' | 'error';
  /** When the state was entered (ms). */
  since: number;
  /** Consecutive refusals of this target. */
  attempts: number;
  /** No new request before this time (ms). */
  nextAttemptAt?: number;
  message?: string;
}
