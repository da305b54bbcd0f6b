/**
 * What the balloon cycle reads of a cluster, in its own terms: the nodes and the pods it counts, and the
 * reads that give them (the invocation's snapshot, ./read.ts; a fresh read after an inflate,
 * ./fresh-read.ts). Types only, below every step of the cycle.
 */
import type { NodeSelectorTerm } from '../cycle/wire.js';
import type { Taint, Toleration } from '../kernel/taints.js';
import type { PodLike } from '../resize/index.js';
import type { Amounts } from './amounts.js';

export interface BalloonNode {
  name: string;
  labels: Readonly<Record<string, string>>;
  capacity: Amounts;
  allocatable: Amounts;
  /** As read; fences the KEP-5836 node patch (./opt-out.ts). */
  resourceVersion?: string;
  /** The node object's identity (an explicit size belongs to it) and creation time. */
  uid?: string;
  createdAt?: number;
  /** spec.podPreemptionPolicy.disableResizePreemption (KEP-5836, 1.37+), when not empty. */
  optOut?: readonly string[];
  /** What keeps a waiting pod off the node (./pending.ts): its taints, and whether it is cordoned. */
  taints?: readonly Taint[];
  unschedulable?: boolean;
}

/** A pod as the balloon cycle counts it. */
export interface CountedPod {
  namespace: string;
  name: string;
  uid: string;
  node: string;
  balloon: boolean;
  /** What the scheduler counts for it: max of spec (unless Infeasible), allocated and actual requests. */
  requests: Amounts;
  /** Not scheduled yet ('' node): the nodes it asks for, so a pool's policy can grow to take it. */
  nodeSelector?: Readonly<Record<string, string>>;
  /** Not scheduled yet: its tolerations, so a pool is grown only where its taints let the pod in. */
  tolerations?: readonly Toleration[];
  /** Not scheduled yet: its required node affinity terms (ORed), where it may land. */
  terms?: readonly NodeSelectorTerm[];
  /** A balloon's controller (the DaemonSet's uid): only the DaemonSet fleetscope made owns balloons. */
  ownerUid?: string;
  /** A balloon that is not what a balloon must be (./integrity.ts): deflated, never inflated. */
  problems?: readonly string[];
  /** Not bound yet, but nominated to this node by the scheduler's preemption: it holds room there. */
  nominated?: string;
  /** Labelled as a balloon but not fleetscope's: counted as a workload, never written, reported. */
  impostor?: boolean;
  /** Its Deferred resize is held without preemption: PodResizePreemptionDisabled=True (KEP-5836). */
  resizePreemptionDisabled?: true;
}

/** The node a pod holds room on: where it is bound, else where the scheduler nominated it ('' none). */
export const heldNode = (p: CountedPod): string => p.node || p.nominated || '';

export interface BalloonPod extends CountedPod {
  /** The pod as the resize mechanism reads it. */
  like: PodLike;
  /** What the kubelet allocated to the balloon container (the size a Deferred inflate is reverted to). */
  allocated?: Amounts;
}

/** What the cycle reads from the cluster; the shared snapshot of the invocation provides it. */
export interface ClusterRead {
  nodes(): Promise<BalloonNode[]>;
  /** Every pod bound to a node and not finished. */
  pods(): Promise<BalloonPod[]>;
}

/** A fresh read of one node's pods: bound to it, or nominated to it and not bound yet. */
export interface FreshPods {
  podsOn(node: string): Promise<BalloonPod[]>;
}
