import type { KubeconfigRef } from '../k8s/kubeconfig-ref.js';
import { rfc1123LabelProblem, rfc1123SubdomainProblem } from '../kernel/names.js';

/** A cluster in fleetscope's registry: a name and where its kubeconfig lives. No credentials are stored. */
export interface RegisteredCluster {
  name: string;
  kubeconfig: KubeconfigRef;
  labels: Record<string, string>;
  registeredAt: string;
  /** The kube-system namespace UID seen at registration: one physical cluster, one registration. */
  kubeSystemUid?: string;
  /**
   * The control plane that acts on the cluster (FLEETSCOPE_CONTROL_PLANE of the one that registered
   * it); changed only by a conditional write (`cluster adopt`). Unset on older registrations: any.
   */
  owner?: string;
  /** Since when it is being deregistered (cluster deregister, killed halfway: run it again). */
  deregistering?: string;
  /**
   * Another control plane holds the cluster's owner Lease (it was adopted with --force): seen by this
   * one's last pass, which left the cluster alone and gave up its ClusterSet membership here.
   */
  ownedElsewhere?: { holder: string; seenAt: string };
}

/** Whether `controlPlane` acts on the cluster: its owner, or any control plane for an unowned one. */
export const ownedBy = (cluster: Pick<RegisteredCluster, 'owner'>, controlPlane: string): boolean =>
  cluster.owner === undefined || cluster.owner === controlPlane;

/** What the last inventory saw of a cluster. */
export interface ClusterStatus {
  cluster: string;
  reachable: boolean;
  serverVersion?: string;
  kubeSystemUid?: string;
  nodeCount?: number;
  metricsApi: 'available' | 'absent' | 'unavailable' | 'unknown';
  error?: string;
  observedAt: string;
}

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Kubernetes label rules: optional DNS-subdomain prefix + '/' + name (63 chars), value up to 63 chars. */
export function labelProblem(key: string, value: string): string | null {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined) {
    const p = rfc1123SubdomainProblem(prefix, `label prefix of "${key}"`);
    if (p) return p;
  }
  if (name.length === 0 || name.length > 63 || !LABEL_VALUE.test(name))
    return `label key "${key}" is invalid: the name part must be 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric`;
  if (value.length > 63 || !LABEL_VALUE.test(value))
    return `label value "${value}" for "${key}" is invalid: at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric`;
  return null;
}

export function clusterNameProblem(name: string): string | null {
  return rfc1123LabelProblem(name, 'cluster name');
}

/** Parse `k=v` command-line labels into a record, refusing invalid ones with the rule broken. */
export function parseLabels(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`label "${pair}" must be key=value`);
    const key = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    const problem = labelProblem(key, value);
    if (problem) throw new Error(problem);
    if (key in out) throw new Error(`label "${key}" is given twice`);
    out[key] = value;
  }
  return out;
}
