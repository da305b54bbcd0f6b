/**
 * The parts of nodes and pods a cycle reads, as they come off the wire (raw JSON: quantities are
 * strings, times RFC 3339 strings). Everything is optional: nothing here trusts a server.
 */
import type { Taint, Toleration } from '../kernel/taints.js';

export type Quantities = { [resource: string]: string | undefined };

export interface OwnerReference {
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  ownerReferences?: OwnerReference[];
}

export type { Taint, Toleration };

export interface NodeObject {
  metadata?: ObjectMeta;
  spec?: {
    taints?: Taint[];
    unschedulable?: boolean;
    /** KEP-5836 (1.37+): owners that opted the node out of preemption for in-place resizes. */
    podPreemptionPolicy?: { disableResizePreemption?: string[] };
  };
  status?: {
    allocatable?: Quantities;
    capacity?: Quantities;
    conditions?: { type?: string; status?: string }[];
  };
}

export interface ContainerSpec {
  name: string;
  /** "Always" on an init container: a sidecar (KEP-753). */
  restartPolicy?: string;
  resources?: { requests?: Quantities; limits?: Quantities };
}

export interface ContainerStatusLike {
  name: string;
  restartCount?: number;
  lastState?: { terminated?: { reason?: string; startedAt?: string; finishedAt?: string } };
  state?: { terminated?: { reason?: string; startedAt?: string; finishedAt?: string } };
  /** What the runtime enacted (actual); present once the node reports resources. */
  resources?: { requests?: Quantities; limits?: Quantities };
  /** What the kubelet admitted (allocated). */
  allocatedResources?: Quantities;
}

/** A node selector requirement of a required node affinity term (matchExpressions, matchFields). */
export interface NodeSelectorRequirement {
  key?: string;
  operator?: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface PodObject {
  metadata?: ObjectMeta;
  spec?: {
    nodeName?: string;
    priority?: number;
    /** Set from the PriorityClass at admission: Never keeps the pod from preempting. */
    preemptionPolicy?: string;
    /** The scheduler that places the pod ('default-scheduler' when defaulted). */
    schedulerName?: string;
    /** While any gate remains, no scheduler considers the pod (KEP-3521). */
    schedulingGates?: { name?: string }[];
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] };
      };
    };
    nodeSelector?: Record<string, string>;
    tolerations?: Toleration[];
    containers?: ContainerSpec[];
    initContainers?: ContainerSpec[];
    /** A RuntimeClass's per-pod overhead. */
    overhead?: Quantities;
    /** Pod-level resources (KEP-2837, 1.34+). */
    resources?: { requests?: Quantities; limits?: Quantities };
  };
  status?: {
    phase?: string;
    /** Set by the scheduler's preemption: the node the pod waits to be bound to. */
    nominatedNodeName?: string;
    startTime?: string;
    qosClass?: string;
    resize?: string;
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      observedGeneration?: number;
    }[];
    containerStatuses?: ContainerStatusLike[];
    initContainerStatuses?: ContainerStatusLike[];
    /** Pod-level resources as the kubelet admitted and enacted them (1.35+, pod-level resize). */
    resources?: { requests?: Quantities; limits?: Quantities };
    allocatedResources?: Quantities;
  };
}
