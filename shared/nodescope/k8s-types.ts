/**
 * The parts of Kubernetes objects nodescope reads, as they come off the wire (raw JSON: quantities are
 * strings, times RFC 3339 strings). Everything is optional: nothing here trusts a server.
 */
import type { NodeSelectorTerm, Taint, Toleration } from './eligibility.js';

type Quantities = { [resource: string]: string | undefined };

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
  ownerReferences?: { kind?: string; name?: string; uid?: string; controller?: boolean }[];
}

export interface ContainerSpec {
  name: string;
  resources?: { requests?: Quantities; limits?: Quantities };
}

export interface PodSpecLike {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  hostNetwork?: boolean;
  tolerations?: Toleration[];
  affinity?: {
    nodeAffinity?: {
      requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] };
    };
  };
  containers?: ContainerSpec[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface DaemonSetObject {
  metadata?: ObjectMeta;
  spec?: { selector?: LabelSelector; template?: { metadata?: ObjectMeta; spec?: PodSpecLike } };
}

export interface VpaObject {
  metadata?: ObjectMeta;
  spec?: {
    targetRef?: { apiVersion?: string; kind?: string; name?: string };
    scope?: string;
    updatePolicy?: { updateMode?: string };
    resourcePolicy?: {
      containerPolicies?: {
        containerName?: string;
        mode?: string;
        minAllowed?: Quantities;
        maxAllowed?: Quantities;
        controlledResources?: string[];
        controlledValues?: string;
      }[];
    };
    recommenders?: { name?: string }[];
  };
  status?: { conditions?: { type?: string; status?: string; message?: string; reason?: string }[] };
}

export interface NodeObject {
  metadata?: ObjectMeta;
  spec?: { taints?: Taint[]; unschedulable?: boolean };
  status?: { allocatable?: Quantities };
}

export interface ContainerStatusLike {
  name: string;
  restartCount?: number;
  lastState?: { terminated?: { reason?: string; startedAt?: string; finishedAt?: string } };
  state?: { terminated?: { reason?: string; startedAt?: string; finishedAt?: string } };
  resources?: { requests?: Quantities; limits?: Quantities };
  allocatedResources?: Quantities;
}

export interface PodObject {
  metadata?: ObjectMeta;
  spec?: PodSpecLike;
  status?: {
    phase?: string;
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
  };
}

export interface PodMetricsObject {
  metadata?: ObjectMeta;
  timestamp?: string;
  window?: string;
  containers?: { name: string; usage?: Quantities }[];
}
