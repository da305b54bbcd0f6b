/**
 * What the claims worker does with one cluster, once its event is parsed: forget a deregistered
 * cluster, or write a registered one's claims as its claims feature allows. The handler supplies the
 * adapters (cluster access, the feature gate) and reports the outcome.
 */
import type { GateDecision } from '../features/gate.js';
import { controlPlaneIdentity, readOwnerLease } from '../fleet/owner-lease.js';
import { ownershipOf } from '../fleet/ownership.js';
import type { Registry } from '../fleet/registry.js';
import { clusterSkew } from '../k8s/cluster-clock.js';
import type { KubeconfigRef } from '../k8s/kubeconfig-ref.js';
import type { ClusterClaimsApi } from './incluster.js';
import { type ClaimsPorts, forgetCluster } from './membership.js';
import { removeMembershipClaim, type SyncResult, syncCluster } from './sync.js';

export interface ClaimsWorkerPorts extends ClaimsPorts {
  registry: Registry;
  /** The claims API of a cluster, through its kubeconfig. */
  claimsApi(cluster: string, kubeconfig: KubeconfigRef): Promise<ClusterClaimsApi>;
  /** The claims feature as the cluster has it, this worker's use reported. */
  feature(cluster: string): Promise<Pick<GateDecision, 'allowed' | 'state'>>;
}

export interface ForgetOutcome {
  /** Claims were known for the cluster. */
  forgotten: boolean;
  /** ClusterSet claims removed from the cluster itself. */
  removedInCluster: number;
  /** Why they could not be removed (the cluster may be gone already); forgetting goes on regardless. */
  removeError?: string;
  /** The control plane whose live owner Lease the cluster carries: its claims are that one's, left alone. */
  ownedBy?: string;
}

/**
 * Takes the ClusterSet claim off a deregistered cluster when it can still be reached and no other
 * control plane holds it (a cluster adopted away before this one's claims pass noticed: the claim is
 * the new owner's membership), then forgets its claims.
 */
export async function forgetDeregistered(p: ClaimsWorkerPorts, cluster: string): Promise<ForgetOutcome> {
  const known = await p.store.getIdentity(cluster);
  let removedInCluster = 0;
  let removeError: string | undefined;
  let ownedBy: string | undefined;
  if (known?.clusterSet && known.kubeconfig) {
    try {
      const api = await p.claimsApi(cluster, known.kubeconfig);
      ownedBy = await otherOwner(api);
      if (!ownedBy) removedInCluster = (await removeMembershipClaim(api)).length;
    } catch (err) {
      removeError = (err as Error).message;
    }
  }
  await forgetCluster(p, cluster);
  return {
    forgotten: Boolean(known),
    removedInCluster,
    ...(removeError ? { removeError } : {}),
    ...(ownedBy ? { ownedBy } : {}),
  };
}

/** Another control plane holding the cluster's owner Lease, live on the cluster's clock; else undefined. */
async function otherOwner(api: ClusterClaimsApi): Promise<string | undefined> {
  const client = api.client;
  if (!client) return undefined;
  const lease = await readOwnerLease(client);
  if (!lease) return undefined;
  const o = ownershipOf(lease, controlPlaneIdentity(), Date.now() + (await clusterSkew(client)));
  return o.kind === 'other' ? o.holder : undefined;
}

export type WriteOutcome =
  | { kind: 'not-registered' }
  /** The claims feature is not on: at most the ClusterSet claim was removed. */
  | { kind: 'off'; state: GateDecision['state']; removed: number }
  | { kind: 'synced'; result: SyncResult };

/** Brings a registered cluster's claims in line with DynamoDB, when its claims feature is on. */
export async function writeClaims(p: ClaimsWorkerPorts, cluster: string): Promise<WriteOutcome> {
  const registered = await p.registry.get(cluster);
  // Being deregistered: its claims are the deregistration's to take out, not to write again.
  if (!registered || registered.deregistering) return { kind: 'not-registered' };
  const feature = await p.feature(cluster);
  if (!feature.allowed) {
    // While claims turn off, a ClusterSet left meanwhile still loses its claim at once (KEP-2149: it
    // exists exactly as long as the membership); nothing else is written.
    let removed = 0;
    if (feature.state === 'TurningOff' && !(await p.store.getIdentity(cluster))?.clusterSet)
      removed = (await removeMembershipClaim(await p.claimsApi(cluster, registered.kubeconfig))).length;
    return { kind: 'off', state: feature.state, removed };
  }
  const result = await syncCluster(
    { ...p, connect: (rc) => p.claimsApi(rc.name, rc.kubeconfig) },
    registered,
  );
  return { kind: 'synced', result };
}
