/**
 * The owner Lease in a cluster (see ownership.ts): read it, and write it (create, renew or take over)
 * conditionally on the resourceVersion read, so two control planes racing for it cannot both win.
 */
import type { ClusterClient } from '../k8s/client.js';
import { clusterSkew } from '../k8s/cluster-clock.js';
import { ClusterAccessError } from '../k8s/errors.js';
import { readConfig } from '../platform/config.js';
import {
  OWNER_LEASE,
  type OwnerLease,
  type Ownership,
  ownedElsewhere,
  ownerLeaseObject,
  ownershipOf,
} from './ownership.js';

const is = (err: unknown, status: number) => err instanceof ClusterAccessError && err.status === status;
const LEASES = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  namespace: OWNER_LEASE.namespace,
};

/** Who this control plane is in owner Leases: FLEETSCOPE_OWNER_ID (the local runtime: its state directory), else the stack's name. */
export function controlPlaneIdentity(): string {
  return process.env.FLEETSCOPE_OWNER_ID || readConfig().controlPlane;
}

interface LeaseObject {
  metadata?: { resourceVersion?: string };
  spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
}

export async function readOwnerLease(client: ClusterClient): Promise<OwnerLease | undefined> {
  try {
    const o = (await client.call('read the owner lease', () =>
      client.custom.getNamespacedCustomObject({ ...LEASES, name: OWNER_LEASE.name }),
    )) as LeaseObject;
    return {
      holder: o.spec?.holderIdentity ?? '',
      renewedMs: Date.parse(o.spec?.renewTime ?? '') || 0,
      durationSeconds: o.spec?.leaseDurationSeconds ?? 0,
      resourceVersion: o.metadata?.resourceVersion ?? '',
    };
  } catch (err) {
    if (is(err, 404)) return undefined;
    throw err;
  }
}

/**
 * Renews the lease when this control plane holds it, takes it when it is free or expired (or held by
 * another and `force`), and otherwise leaves it: the ownership seen, and whether this one now holds it.
 * A write that loses a race (409) reads as held by the winner. Judged and written on the cluster's
 * clock: `nowMs` moved by how far the API server's Date is from this machine's wall clock (`wall`), so a
 * control plane whose clock runs ahead neither takes a live lease nor stamps one into the future.
 */
export async function holdOwnerLease(
  client: ClusterClient,
  me: string,
  callerNowMs: number,
  opts: { force?: boolean; wall?: () => number } = {},
): Promise<{ before: Ownership; held: boolean }> {
  const nowMs = callerNowMs + (await clusterSkew(client, opts.wall));
  const lease = await readOwnerLease(client);
  const before = ownershipOf(lease, me, nowMs);
  if (before.kind === 'other' && !opts.force) return { before, held: false };
  try {
    if (lease) await replace(client, me, nowMs, lease.resourceVersion);
    else await create(client, me, nowMs);
    return { before, held: true };
  } catch (err) {
    if (!is(err, 409)) throw err;
    const now = ownershipOf(await readOwnerLease(client), me, nowMs);
    return { before: now, held: now.kind === 'mine' };
  }
}

async function replace(client: ClusterClient, me: string, nowMs: number, resourceVersion: string) {
  await client.call(
    'renew the owner lease',
    () =>
      client.custom.replaceNamespacedCustomObject({
        ...LEASES,
        name: OWNER_LEASE.name,
        body: ownerLeaseObject(me, nowMs, resourceVersion),
      }),
    { expected: [409] },
  );
}

async function create(client: ClusterClient, me: string, nowMs: number) {
  const write = () =>
    client.call(
      'create the owner lease',
      () => client.custom.createNamespacedCustomObject({ ...LEASES, body: ownerLeaseObject(me, nowMs) }),
      { idempotent: false, expected: [404, 409] },
    );
  try {
    await write();
  } catch (err) {
    if (!is(err, 404)) throw err;
    // A new cluster has no fleetscope-system yet (the features' mirror creates it too).
    await client
      .call(
        'create namespace fleetscope-system',
        () =>
          client.core.createNamespace({
            body: {
              metadata: {
                name: OWNER_LEASE.namespace,
                labels: { 'app.kubernetes.io/managed-by': 'fleetscope' },
              },
            },
          }),
        { idempotent: false, expected: [409] },
      )
      .catch((e) => {
        if (!is(e, 409)) throw e;
      });
    await write();
  }
}

/**
 * Holds the cluster for this control plane, or says why it cannot: the refusal names the owner and how
 * to take it over. Registration and every cycle call it; `force` is `cluster adopt --force`.
 */
export async function ownerRefusal(
  cluster: string,
  client: ClusterClient,
  nowMs: number,
  opts: { force?: boolean; wall?: () => number } = {},
): Promise<string | undefined> {
  return (await ownerCheck(cluster, client, nowMs, opts)).refused;
}

/** ownerRefusal, with the control plane that holds the cluster when it is another one (a live lease). */
export async function ownerCheck(
  cluster: string,
  client: ClusterClient,
  nowMs: number,
  opts: { force?: boolean; wall?: () => number } = {},
): Promise<{ refused?: string; holder?: string }> {
  const r = await holdOwnerLease(client, controlPlaneIdentity(), nowMs, opts);
  if (r.held) return {};
  return r.before.kind === 'other'
    ? { refused: ownedElsewhere(cluster, r.before), holder: r.before.holder }
    : { refused: `cluster "${cluster}": the owner lease changed meanwhile` };
}

/**
 * Gives the cluster up (deregistration): the owner Lease deleted while this control plane holds it, its
 * resourceVersion as read the precondition, so a lease another one took meanwhile is never removed.
 * Other control planes may then register the cluster at once instead of waiting for it to expire.
 */
export async function releaseOwnerLease(
  client: ClusterClient,
  me: string,
): Promise<'released' | 'absent' | { heldBy: string }> {
  for (let attempt = 1; ; attempt++) {
    const lease = await readOwnerLease(client);
    if (!lease) return 'absent';
    if (lease.holder !== me) return { heldBy: lease.holder };
    try {
      await client.call(
        'release the owner lease',
        () =>
          client.custom.deleteNamespacedCustomObject({
            ...LEASES,
            name: OWNER_LEASE.name,
            body: { preconditions: { resourceVersion: lease.resourceVersion } },
          }),
        { expected: [404, 409] },
      );
      return 'released';
    } catch (err) {
      if (is(err, 404)) return 'absent';
      if (!is(err, 409) || attempt >= 3) throw err;
    }
  }
}
