/**
 * The claims feature's own tasks (KEP-3920 hooks). Turning claims off is refused while the cluster is a
 * member of a ClusterSet (KEP-2149: the membership claim must exist exactly as long as the membership),
 * as a wait that names the membership; then every claim fleetscope wrote goes except id.k8s.io, which
 * KEP-2149 wants for the cluster's whole life. Loaded only when a transition performs them.
 */
import type { LeftoverContext, TaskContext, TaskOutcome } from '../features/spec.js';
import type { ClusterClient } from '../k8s/client.js';
import type { ObservedClaim } from './identity.js';
import { type ClaimObjects, ClusterClaimsApi } from './incluster.js';
import { ID_CLAIM } from './rules.js';

export async function notInClusterSet(ctx: TaskContext): Promise<TaskOutcome> {
  const identity = await ctx.claims.getIdentity(ctx.cluster);
  if (!identity?.clusterSet) return { done: true };
  return {
    done: false,
    waitingFor: `cluster "${ctx.cluster}" is a member of ClusterSet "${identity.clusterSet}": claims cannot be turned off during a membership (leave it first: fleetscope clusterset leave --cluster ${ctx.cluster})`,
    pollMs: 60_000,
  };
}

const removable = (c: ObservedClaim) => c.managed && c.name !== ID_CLAIM;

/** Where fleetscope writes claims in this cluster: ClusterProperty objects and OCM's ClusterClaims. */
async function targets(client: ClusterClient): Promise<ClaimObjects[]> {
  const api = new ClusterClaimsApi(client);
  const props = await api.clusterProperties(false);
  return [props.objects, await api.ocmClusterClaims()].filter((t): t is ClaimObjects => !!t);
}

export async function removeWrittenClaims(ctx: TaskContext): Promise<TaskOutcome> {
  for (const target of await targets(await ctx.client())) {
    for (const claim of (await target.list()).filter(removable)) {
      await target.apply({ kind: 'delete', name: claim.name, old: claim.value }); // counted by the fence
    }
  }
  return { done: true };
}

export async function claimsLeftovers(ctx: LeftoverContext): Promise<string[]> {
  const out: string[] = [];
  for (const target of await targets(await ctx.client())) {
    const left = (await target.list()).filter(removable);
    if (left.length)
      out.push(
        `${left.length} ${target.resource.kind}(s) fleetscope wrote: ${left.map((c) => c.name).join(', ')}`,
      );
  }
  return out;
}
