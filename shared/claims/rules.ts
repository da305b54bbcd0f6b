/**
 * The rules of cluster claims (KEP-2149, sig-multicluster), as pure functions: no AWS, no Kubernetes.
 * Every validator returns null when the input is valid, else a message that names the rule broken, so
 * the CLI, the handlers and the tests refuse with the same words.
 */
import { rfc1123LabelProblem, rfc1123SubdomainProblem } from '../kernel/names.js';

/** The cluster's ID, as KEP-2149 first named it (and as OCM still names it). */
export const ID_CLAIM = 'id.k8s.io';
/** The same ID under the name upstream uses since Sep 2022 (KEP-2149 commit 3b005bd1d). */
export const CLUSTER_ID_CLAIM = 'cluster.clusterset.k8s.io';
/** ClusterSet membership: present exactly while the cluster is a member. */
export const CLUSTERSET_CLAIM = 'clusterset.k8s.io';

export const WELL_KNOWN_CLAIMS = [ID_CLAIM, CLUSTER_ID_CLAIM, CLUSTERSET_CLAIM] as const;
export type WellKnownClaim = (typeof WELL_KNOWN_CLAIMS)[number];

/** KEP-2149: a claim value holds up to 128 KiB; measured here in UTF-8 bytes (what is stored and sent). */
export const MAX_CLAIM_VALUE_BYTES = 128 * 1024;
/** OCM's ClusterClaim caps `spec.value` at 1024 characters: longer claims cannot be mirrored there. */
export const OCM_MAX_VALUE_CHARS = 1024;

/** Claim names OCM's registration agent sets itself (`ReservedClusterClaimNames`, minus id.k8s.io). */
export const OCM_RESERVED_NAMES = [
  'kubeversion.open-cluster-management.io',
  'platform.open-cluster-management.io',
  'product.open-cluster-management.io',
] as const;

/** Domains KEP-2149 reserves for Kubernetes and related projects (`*.k8s.io`, `*.kubernetes.io`, `sigs.k8s.io`). */
const RESERVED_DOMAINS = ['k8s.io', 'kubernetes.io'] as const;

/** The reserved domain a name falls in, if any. */
export function reservedDomainOf(name: string): string | undefined {
  for (const domain of RESERVED_DOMAINS) {
    if (name === domain || name.endsWith(`.${domain}`))
      return name === 'sigs.k8s.io' ? 'sigs.k8s.io' : `*.${domain}`;
  }
  return undefined;
}

/**
 * The cluster ID (`id.k8s.io`): an RFC 1123 DNS label. KEP-2149 now allows a subdomain, but fleetscope
 * keeps the stricter label rule so the ID always fits as one component of an MCS DNS name
 * (`<hostname>.<clusterID>.<svc>.<ns>.svc.clusterset.local`). A kube-system UID is a valid label.
 */
export function clusterIdProblem(value: string): string | null {
  return rfc1123LabelProblem(value, `${ID_CLAIM} value`);
}

/** A ClusterSet's name (the value of `clusterset.k8s.io`): an RFC 1123 DNS label, like cluster names. */
export function clusterSetProblem(value: string): string | null {
  return rfc1123LabelProblem(value, `ClusterSet name (${CLUSTERSET_CLAIM} value)`);
}

/**
 * A custom claim's name: an RFC 1123 subdomain (it becomes a ClusterProperty's object name) with a domain
 * suffix of the operator's own (KEP-2149: "custom properties must use a suffix", e.g.
 * `fingerprint.example.com`), outside the reserved domains and not one of OCM's reserved names.
 */
export function customClaimNameProblem(name: string): string | null {
  const subdomain = rfc1123SubdomainProblem(name, 'claim name');
  if (subdomain) return subdomain;
  const reserved = reservedDomainOf(name);
  if (reserved) {
    if ((WELL_KNOWN_CLAIMS as readonly string[]).includes(name))
      return `claim "${name}" is a well-known claim fleetscope manages itself: ${wellKnownHint(name as WellKnownClaim)}`;
    return `claim name "${name}" is in the reserved domain ${reserved} (KEP-2149 reserves *.k8s.io, *.kubernetes.io and sigs.k8s.io for Kubernetes projects); use a domain of your own, e.g. "${name.split('.')[0]}.example.com"`;
  }
  if ((OCM_RESERVED_NAMES as readonly string[]).includes(name))
    return `claim name "${name}" is reserved by Open Cluster Management (its registration agent sets it)`;
  if (!name.includes('.'))
    return `claim name "${name}" has no domain suffix: custom claims must be named under a domain you own (KEP-2149), e.g. "${name}.example.com"`;
  return null;
}

function wellKnownHint(name: WellKnownClaim): string {
  switch (name) {
    case ID_CLAIM:
      return `set it with "fleetscope claims set --cluster NAME --name ${ID_CLAIM} --value ID"`;
    case CLUSTER_ID_CLAIM:
      return `it mirrors ${ID_CLAIM}; set ${ID_CLAIM} instead`;
    case CLUSTERSET_CLAIM:
      return 'it follows membership: use "fleetscope clusterset join|leave|move"';
  }
}

/** UTF-8 size of a string, in bytes. */
export function utf8Bytes(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/** A claim value: a non-empty string of at most 128 KiB (UTF-8). */
export function claimValueProblem(value: string, name = 'claim'): string | null {
  if (typeof value !== 'string') return `value of ${name} must be a string`;
  if (value.length === 0) return `value of ${name} must not be empty (ClusterProperty requires minLength 1)`;
  const bytes = utf8Bytes(value);
  if (bytes > MAX_CLAIM_VALUE_BYTES)
    return `value of ${name} is ${bytes} bytes; a claim value holds at most ${MAX_CLAIM_VALUE_BYTES} bytes (128 KiB, KEP-2149)`;
  return null;
}

/** Warnings (not refusals) for a custom claim: what will not fit the optional OCM ClusterClaim target. */
export function customClaimWarnings(name: string, value: string): string[] {
  const warnings: string[] = [];
  if (value.length > OCM_MAX_VALUE_CHARS)
    warnings.push(
      `value of ${name} is ${value.length} characters: OCM ClusterClaim holds at most ${OCM_MAX_VALUE_CHARS}, so it will be written as a ClusterProperty only, not mirrored to OCM`,
    );
  return warnings;
}

/** Refuses a custom claim (name and value), naming the rule; null when it may be written. */
export function customClaimProblem(name: string, value: string): string | null {
  return customClaimNameProblem(name) ?? claimValueProblem(value, `claim "${name}"`);
}

/** Thrown for input that breaks a claim rule; nothing has been written when it is thrown. */
export class ClaimRuleError extends Error {
  override name = 'ClaimRuleError';
}
