/**
 * The parts of Kubernetes objects nodescope reads, as they come off the wire (raw JSON: quantities are
 * strings, times RFC 3339 strings). Everything is optional: nothing here trusts a server. Nodes and pods,
 * which other capabilities read too, are in shared/cycle/wire.ts.
 */
import type { ContainerSpec, ObjectMeta, Quantities } from '../cycle/wire.js';
import type { Toleration } from '../kernel/taints.js';

export type { ContainerSpec, ObjectMeta };

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
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
  status?: {
    conditions?: { type?: string; status?: string; message?: string; reason?: string }[];
    /** AEP-10031's groups as the VPA carries them: as it stands, and the Deckhouse fork's older field. */
    recommendationGroups?: unknown[];
    groups?: unknown[];
    recommendation?: unknown;
  };
}

export interface PodMetricsObject {
  metadata?: ObjectMeta;
  timestamp?: string;
  window?: string;
  containers?: { name: string; usage?: Quantities }[];
}
