/**
 * A cluster moves between control planes with its identity (issue 34, defect 6). `cluster adopt
 * --force` takes, as this control plane's own, the identity the cluster carries: its id.k8s.io, its
 * clusterset.k8s.io (the membership, with this control plane's uniqueness guard) and its custom claims,
 * values as they are, so the first sync here finds the cluster already as it wants it and writes
 * nothing. The control plane it came from learns it on its next claims pass, from the cluster's owner
 * Lease (`yieldCluster`): its registration says who owns the cluster now, and it gives up its own
 * membership record and guard for it, without touching the cluster.
 */
import type { KubeconfigRef } from '../k8s/kubeconfig-ref.js';
import type { ClusterClaimsApi } from './incluster.js';
import { type ClaimsPorts, joinClusterSet, leaveClusterSet, UniquenessError } from './membership.js';
import {
  CLUSTER_ID_CLAIM,
  CLUSTERSET_CLAIM,
  clusterIdProblem,
  customClaimProblem,
  ID_CLAIM,
} from './rules.js';
import { type StoredIdentity, VersionConflictError } from './store.js';

/** What a cluster carries of fleetscope's claims (the ClusterProperty objects fleetscope labelled). */
export interface CarriedIdentity {
  clusterId?: string;
  clusterSet?: string;
  custom: Record<string, string>;
}

export async function readCarried(api: ClusterClaimsApi): Promise<CarriedIdentity> {
  const carried: CarriedIdentity = { custom: {} };
  const { objects } = await api.clusterProperties(false);
  if (!objects) return carried;
  for (const o of await objects.list()) {
    if (!o.managed || o.value === undefined) continue;
    if (o.name === ID_CLAIM) carried.clusterId = o.value;
    else if (o.name === CLUSTERSET_CLAIM) carried.clusterSet = o.value;
    else if (o.name !== CLUSTER_ID_CLAIM && !customClaimProblem(o.name, o.value))
      carried.custom[o.name] = o.value;
  }
  return carried;
}

/**
 * Why this control plane cannot take the carried identity (undefined: it can): its ID is not a valid
 * one, or another of its clusters holds that ID in that ClusterSet. Checked before the owner Lease is
 * taken, so a refused adoption leaves the old control plane owning the cluster.
 */
export async function adoptionProblem(
  p: ClaimsPorts,
  cluster: string,
  carried: CarriedIdentity,
): Promise<string | undefined> {
  if (carried.clusterId && clusterIdProblem(carried.clusterId))
    return `the cluster carries id.k8s.io "${carried.clusterId}", which is not a valid ID: ${clusterIdProblem(carried.clusterId)}`;
  if (!carried.clusterSet || !carried.clusterId) return undefined;
  const guard = await p.store.getGuard(carried.clusterSet, carried.clusterId);
  if (guard && guard.cluster !== cluster && (!p.registry || (await p.registry.get(guard.cluster))))
    return `the cluster is a member of ClusterSet "${carried.clusterSet}" as ID ${carried.clusterId}, which cluster "${guard.cluster}" holds there in this control plane: one ID per ClusterSet (deregister or rename that one first)`;
  return undefined;
}

/**
 * Makes the carried identity this control plane's for `cluster` (registered here already). The ID
 * and custom claims are written as carried, the membership joined through the usual protocol (guard
 * first); a membership this control plane had recorded that the cluster does not carry is dropped.
 */
export async function adoptIdentity(
  p: ClaimsPorts,
  input: { cluster: string; kubeSystemUid: string; kubeconfig?: KubeconfigRef; carried: CarriedIdentity },
): Promise<StoredIdentity> {
  const { cluster, carried } = input;
  const clusterId = carried.clusterId ?? input.kubeSystemUid;
  const at = (p.now ? p.now() : new Date()).toISOString();
  for (let attempt = 1; ; attempt++) {
    const existing = await p.store.getIdentity(cluster);
    if (
      existing?.clusterSet &&
      (existing.clusterId !== clusterId || existing.clusterSet !== carried.clusterSet)
    )
      await leaveClusterSet(p, cluster);
    const before = await p.store.getIdentity(cluster);
    const next: StoredIdentity = {
      ...(before ?? {}),
      cluster,
      clusterId,
      idSource: clusterId === input.kubeSystemUid ? 'kube-system-uid' : 'operator',
      kubeSystemUid: input.kubeSystemUid,
      version: (before?.version ?? 0) + 1,
      updatedAt: at,
      ...(input.kubeconfig ? { kubeconfig: input.kubeconfig } : {}),
    };
    try {
      if (!before || before.clusterId !== next.clusterId || before.kubeSystemUid !== next.kubeSystemUid)
        await p.store.putIdentity(next, before?.version);
      break;
    } catch (err) {
      if (err instanceof VersionConflictError && attempt < 4) continue;
      throw err;
    }
  }
  const had = await p.store.getCustom(cluster);
  for (const [name, value] of Object.entries(carried.custom))
    if (had[name] !== value) await p.store.putCustom(cluster, name, value, at);
  for (const name of Object.keys(had))
    if (!(name in carried.custom)) await p.store.deleteCustom(cluster, name);
  if (carried.clusterSet) {
    try {
      await joinClusterSet(p, cluster, carried.clusterSet);
    } catch (err) {
      if (err instanceof UniquenessError) throw new UniquenessError(`adoption: ${err.message}`);
      throw err;
    }
  }
  return (await p.store.getIdentity(cluster))!;
}

/**
 * This control plane's pass found another one holding the cluster's owner Lease: the cluster was
 * adopted from it. Its registration records who owns the cluster now, and its membership record (and
 * so its uniqueness guard, and its ClusterSet's member list) is given up here; the cluster, which is
 * the new owner's to write, is not touched (the leave's own sync is refused by the same Lease).
 */
export async function yieldCluster(
  p: ClaimsPorts,
  cluster: string,
  holder: string,
): Promise<{ leftSet?: string }> {
  const at = (p.now ? p.now() : new Date()).toISOString();
  const registered = await p.registry?.get(cluster);
  if (registered && registered.ownedElsewhere?.holder !== holder)
    await p.registry?.recordOwnedElsewhere(cluster, holder, at);
  const identity = await p.store.getIdentity(cluster);
  if (!identity?.clusterSet && !identity?.pending) return {};
  const left = await leaveClusterSet(p, cluster);
  return left.changed && identity.clusterSet ? { leftSet: identity.clusterSet } : {};
}
