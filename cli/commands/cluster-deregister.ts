/**
 * `cluster deregister`: the cluster leaves the fleet, and fleetscope takes out of it what it created
 * there, and only that (issue 34, defect 11), in an order that leaves nothing half-done for good:
 *
 * 1. the registration is marked deregistering (no schedule, rollout or event acts on it from then on);
 * 2. its feature records and its balloons' policies, requests and state are forgotten (a new cluster
 *    under the name starts from the defaults);
 * 3. in the cluster, fenced by its owner Lease (held by this control plane, or nothing is touched):
 *    the clusterset.k8s.io claim, the mirrored Feature objects, the Feature CRD (only when nothing
 *    that is not fleetscope's uses it), then the owner Lease is released (other control planes need
 *    not wait 15 minutes), then fleetscope-system is deleted when fleetscope created it and nothing in
 *    it is anyone else's (judged before the release);
 * 4. the registration is removed and ClusterDeregistered announced (the claims worker forgets the
 *    cluster's claims and guards).
 * Killed anywhere, the registration is still there (marked): running the command again finishes the
 * job, each step finding what is already done and writing nothing for it. id.k8s.io stays (KEP-2149:
 * the ID outlives fleetscope's management), and so do the objects a feature's steps created (its Off
 * steps are not run): they carry features.fleetscope.io/owner.
 */
import { ClusterClaimsApi } from '../../shared/claims/incluster.js';
import { DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import { removeMembershipClaim } from '../../shared/claims/sync.js';
import { removeFeatureMirror } from '../../shared/features/leave.js';
import { ObjectsApi } from '../../shared/features/objects.js';
import type { RegisteredCluster } from '../../shared/fleet/cluster.js';
import { clusterAccess } from '../../shared/fleet/cluster-access.js';
import { controlPlaneIdentity, holdOwnerLease, releaseOwnerLease } from '../../shared/fleet/owner-lease.js';
import { deregisterCluster } from '../../shared/fleet/register.js';
import { deleteSystemNamespace, judgeSystemNamespace } from '../../shared/fleet/system-namespace.js';
import type { ClusterClient } from '../../shared/k8s/client.js';
import { ClusterAccessError } from '../../shared/k8s/errors.js';
import type { CliContext } from '../context.js';

/**
 * What fleetscope keeps about a cluster by its name, forgotten so that a new cluster registered under
 * it inherits nothing: its feature records, and its balloons' policies, requests and state (kept, a
 * cluster registered again after a killed deregistration left its balloons at the floor its turn-off
 * had set, under the old policy).
 */
export async function forgetClusterRecords(ctx: CliContext, name: string): Promise<void> {
  const { DynamoFeatureStore } = await import('../../shared/features/store-dynamo.js');
  const { DynamoBalloonStore } = await import('../../shared/balloons/store-dynamo.js');
  await new DynamoFeatureStore(ctx.db, ctx.table).forgetCluster(name);
  await new DynamoBalloonStore(ctx.db, ctx.table).clear(name);
}

/** The step boundaries above; a test hook may throw at one to simulate a kill there. */
export type DeregistrationStep =
  | 'marked'
  | 'forgotten'
  | 'claim-removed'
  | 'mirror-removed'
  | 'lease-released';
type Step = (s: DeregistrationStep) => void | Promise<void>;

/** Deregisters `name` (steps above); prints what was removed and what was kept, and why. */
export async function deregisterNamed(
  ctx: CliContext,
  name: string,
  opts: { step?: Step } = {},
): Promise<number> {
  const step: Step = opts.step ?? (() => {});
  const cluster = await ctx.registry.get(name);
  if (!cluster) throw new Error(`cluster "${name}" is not registered`);
  await ctx.registry.markDeregistering(name, new Date().toISOString());
  await step('marked');
  await forgetClusterRecords(ctx, name);
  await step('forgotten');
  const lines = await leaveCluster(ctx, cluster, step);
  await deregisterCluster(name, {
    store: ctx.registry,
    publisher: ctx.publisher,
    warn: (m) => console.error(`warning: ${m}`),
  });
  for (const line of lines) console.log(`  ${line}`);
  console.log(`deregistered cluster ${name}`);
  return 0;
}

/**
 * Step 3. A cluster that cannot be reached is left as it is, with a warning naming what stays there
 * (the registration goes all the same: the cluster may be gone for good); one that answers with a
 * refusal (RBAC) stops the deregistration, the registration kept for a run that can finish it.
 */
async function leaveCluster(ctx: CliContext, cluster: RegisteredCluster, step: Step): Promise<string[]> {
  let client: ClusterClient;
  try {
    client = await clusterAccess().client(cluster.name, cluster.kubeconfig);
  } catch (err) {
    return unreachable(cluster.name, err);
  }
  try {
    return await clean(ctx, cluster.name, client, step);
  } catch (err) {
    if (err instanceof ClusterAccessError && err.kind !== 'http') return unreachable(cluster.name, err);
    throw new Error(
      `cluster "${cluster.name}": ${(err as Error).message}; it is still registered, marked deregistering: run cluster deregister --name ${cluster.name} again once that is fixed`,
    );
  }
}

function unreachable(name: string, err: unknown): string[] {
  console.error(
    `warning: cluster "${name}" could not be reached (${(err as Error).message}): what fleetscope created in it stays there (the owner lease in fleetscope-system, which expires 15 minutes after its last renewal; Feature objects; the features.fleetscope.io CRD; clusterset.k8s.io). Remove them with kubectl: see docs/claims.md#deregistration`,
  );
  return [];
}

async function clean(ctx: CliContext, name: string, client: ClusterClient, step: Step): Promise<string[]> {
  const me = controlPlaneIdentity();
  const fence = await holdOwnerLease(client, me, Date.now());
  if (!fence.held)
    return [
      `left the cluster as it is: ${fence.before.kind === 'other' ? `control plane "${fence.before.holder}" owns it` : 'its owner lease changed meanwhile'}`,
    ];
  const out: string[] = [];
  const identity = await new DynamoClaimStore(ctx.db, ctx.table).getIdentity(name);
  if (identity?.clusterSet) {
    const removed = await removeMembershipClaim(new ClusterClaimsApi(client));
    if (removed.length) out.push(`removed clusterset.k8s.io (ClusterSet ${identity.clusterSet})`);
  }
  await step('claim-removed');
  const mirror = await removeFeatureMirror(new ObjectsApi(client));
  if (mirror.deleted) out.push(`removed ${mirror.deleted} Feature object(s)`);
  if (mirror.crd === 'deleted') out.push('removed CRD features.fleetscope.io');
  else if (mirror.crd !== 'absent') out.push(`kept CRD features.fleetscope.io: ${mirror.crd.kept}`);
  await step('mirror-removed');
  const ns = await judgeSystemNamespace(client);
  const lease = await releaseOwnerLease(client, me);
  if (lease === 'released') out.push('released the owner lease');
  else if (lease !== 'absent') out.push(`left the owner lease to control plane "${lease.heldBy}"`);
  await step('lease-released');
  if (ns.kind === 'kept') out.push(`kept namespace fleetscope-system: ${ns.why}`);
  else if (ns.kind === 'removable' && (await deleteSystemNamespace(client, ns.uid)))
    out.push('removed namespace fleetscope-system');
  return out;
}
