import { rfc1123LabelProblem } from '../kernel/names.js';
import { ClaimRuleError } from './rules.js';

/** The zone multi-cluster services (KEP-1645) answer under. */
export const CLUSTERSET_ZONE = 'svc.clusterset.local';

export interface BackendAddress {
  /** The backend pod's hostname (a headless service's endpoint `hostname`). */
  hostname: string;
  /** The cluster's `id.k8s.io` claim. */
  clusterId: string;
  service: string;
  namespace: string;
}

/**
 * The multi-cluster DNS name of one backend of a headless multi-cluster service (KEP-2149 user story
 * "Multi-Cluster Services"): `<hostname>.<clusterID>.<svc>.<ns>.svc.clusterset.local`.
 * Each part must be an RFC 1123 label and the whole name at most 253 characters; throws naming the part.
 */
export function backendDnsName(a: BackendAddress): string {
  const parts: [string, string][] = [
    ['hostname', a.hostname],
    ['cluster ID', a.clusterId],
    ['service', a.service],
    ['namespace', a.namespace],
  ];
  for (const [what, value] of parts) {
    const problem = rfc1123LabelProblem(value, what);
    if (problem) throw new ClaimRuleError(problem);
  }
  const name = `${a.hostname}.${a.clusterId}.${a.service}.${a.namespace}.${CLUSTERSET_ZONE}`;
  if (name.length > 253)
    throw new ClaimRuleError(`DNS name is ${name.length} characters; a DNS name has at most 253`);
  return name;
}

/** The ClusterSet-wide name of a service (no cluster component): `<svc>.<ns>.svc.clusterset.local`. */
export function serviceDnsName(service: string, namespace: string): string {
  for (const [what, value] of [
    ['service', service],
    ['namespace', namespace],
  ] as const) {
    const problem = rfc1123LabelProblem(value, what);
    if (problem) throw new ClaimRuleError(problem);
  }
  return `${service}.${namespace}.${CLUSTERSET_ZONE}`;
}
