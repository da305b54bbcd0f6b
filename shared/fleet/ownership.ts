/**
 * A cluster belongs to one control plane, and says so itself: a coordination.k8s.io Lease in
 * fleetscope-system whose holder is the control plane that acts on it (a stack, or a local state
 * directory), renewed by every cycle on the cluster's clock (its API server's Date: ../k8s/cluster-clock.ts). Two control planes with separate
 * registries (two stacks, two state directories) see each other there, so the second one is refused
 * instead of fighting the first over the cluster's claims and balloons. Pure: no Kubernetes client.
 */

export const OWNER_LEASE = { namespace: 'fleetscope-system', name: 'fleetscope-owner' } as const;
/** Three cycle periods (5 min): a holder that missed three cycles in a row has stopped. */
export const OWNER_LEASE_SECONDS = 15 * 60;

/** The owner Lease as read from the cluster. */
export interface OwnerLease {
  holder: string;
  /** When the holder last renewed it, on its clock (ms since the epoch). */
  renewedMs: number;
  durationSeconds: number;
  /** For the conditional write that renews or takes it over. */
  resourceVersion: string;
}

export type Ownership =
  | { kind: 'mine' }
  | { kind: 'free' }
  | { kind: 'expired'; holder: string }
  | { kind: 'other'; holder: string; renewedAt: string };

/** Who holds the cluster, as `me` sees it at `nowMs` (the cluster's time): an expired lease is anyone's to take. */
export function ownershipOf(lease: OwnerLease | undefined, me: string, nowMs: number): Ownership {
  if (!lease?.holder) return { kind: 'free' };
  if (lease.holder === me) return { kind: 'mine' };
  if (nowMs > lease.renewedMs + lease.durationSeconds * 1000)
    return { kind: 'expired', holder: lease.holder };
  return { kind: 'other', holder: lease.holder, renewedAt: new Date(lease.renewedMs).toISOString() };
}

/** Why this control plane leaves the cluster alone, with the way to take it over. */
export function ownedElsewhere(cluster: string, o: Extract<Ownership, { kind: 'other' }>): string {
  return (
    `cluster "${cluster}" is owned by control plane "${o.holder}" (its lease in ${OWNER_LEASE.namespace} ` +
    `was renewed at ${o.renewedAt}); fleetscope cluster adopt --name ${cluster} --force takes it over`
  );
}

/** The Lease object that records `holder` as the owner at `nowMs`. */
export function ownerLeaseObject(holder: string, nowMs: number, resourceVersion?: string) {
  const time = new Date(nowMs).toISOString().replace('Z', '000Z'); // MicroTime: microseconds
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: OWNER_LEASE.name,
      namespace: OWNER_LEASE.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'fleetscope' },
      ...(resourceVersion ? { resourceVersion } : {}),
    },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: OWNER_LEASE_SECONDS,
      renewTime: time,
    },
  };
}
