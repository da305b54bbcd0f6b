/**
 * The operator's way out for a registered cluster whose kube-system UID changed (rebuilt behind the same
 * endpoint, or kube-system recreated: the drift check holds it as `identity-changed`, sync.ts) when it is
 * still the same cluster: its new UID is recorded, and its ID and memberships stay (KEP-2149: the ID is
 * immutable for the membership's duration). The other way out, a new cluster, is deregistering it and
 * registering it again.
 */

import type { ClaimsPorts } from './membership.js';
import { ClaimRuleError } from './rules.js';
import { type StoredIdentity, VersionConflictError } from './store.js';

const MAX_ATTEMPTS = 4;

/**
 * Records `uid` (read from the cluster by the caller) as the cluster's kube-system UID, in the registry
 * (its one-registration-per-UID guard moved) and in the claims identity, whose ID stays. Refused when
 * another registration holds that UID: two registrations of one cluster are the operator's to undo.
 */
export async function acceptKubeSystemUid(
  p: ClaimsPorts,
  cluster: string,
  uid: string,
): Promise<StoredIdentity> {
  const registered = await p.registry?.get(cluster);
  if (p.registry && !registered) throw new ClaimRuleError(`cluster "${cluster}" is not registered`);
  if (p.registry && registered?.kubeSystemUid && registered.kubeSystemUid !== uid) {
    if (!(await p.registry.replaceUid(cluster, registered.kubeSystemUid, uid)))
      throw new ClaimRuleError(
        `kube-system UID ${uid} is registered as cluster "${await p.registry.uidHolder(uid)}": one cluster, one registration; deregister one of the two first`,
      );
  }
  for (let attempt = 1; ; attempt++) {
    const identity = await p.store.getIdentity(cluster);
    if (!identity) throw new ClaimRuleError(`cluster "${cluster}" has no identity yet: nothing to accept`);
    if (identity.kubeSystemUid === uid) return identity;
    const next: StoredIdentity = {
      ...identity,
      kubeSystemUid: uid,
      version: identity.version + 1,
      updatedAt: (p.now ? p.now() : new Date()).toISOString(),
    };
    try {
      await p.store.putIdentity(next, identity.version);
      return next;
    } catch (err) {
      if (err instanceof VersionConflictError && attempt < MAX_ATTEMPTS) continue;
      throw err;
    }
  }
}
