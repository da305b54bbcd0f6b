/**
 * The reconciler: repairs what a crash between two single-item writes leaves behind (see the protocol
 * in membership.ts). It reads only DynamoDB and never touches a cluster, so it runs fleet-wide on its own
 * schedule, before the per-cluster drift check.
 *
 * - a pending join/move older than the grace period: finished when its guard was taken (the membership
 *   the operator asked for), dropped when it was not;
 * - a guard that no identity explains (a leave or move interrupted after its switch): released, only if
 *   it is still the very guard that was read (same token);
 * - a membership without its guard (lost or deleted): the guard is taken again; when another cluster
 *   holds it, that is a uniqueness conflict, reported and left to the operator;
 * - the claims of a cluster that is no longer registered: forgotten (leaving its ClusterSet).
 */
import { change, claimsChangedEvents, membershipChangedEvent } from './events.js';
import { type ClaimsPorts, forgetCluster } from './membership.js';
import { CLUSTERSET_CLAIM } from './rules.js';
import { type StoredIdentity, VersionConflictError } from './store.js';

export type ReconcileKind =
  /** An interrupted join or move finished (its guard had been taken). */
  | 'completed'
  /** An interrupted join or move dropped (its guard was never taken). */
  | 'abandoned'
  /** A guard no membership explains, released (a leave or move interrupted after its switch). */
  | 'released-guard'
  /** A membership whose guard was missing got it back. */
  | 'restored-guard'
  /** Two clusters claim one ID in one ClusterSet: needs the operator. */
  | 'conflict'
  /** A deregistered cluster's claims forgotten. */
  | 'forgotten';

export interface ReconcileAction {
  kind: ReconcileKind;
  cluster: string;
  clusterId: string;
  clusterSet?: string;
  detail: string;
}

export interface ReconcileReport {
  actions: ReconcileAction[];
  /** Identities and guards examined. */
  identities: number;
  guards: number;
}

export const actionsOf = (r: ReconcileReport, kind: ReconcileKind) =>
  r.actions.filter((a) => a.kind === kind);

/** A pending change younger than this is left to the command still running it. */
export const DEFAULT_GRACE_MS = 2 * 60_000;

export async function reconcileClaims(p: ClaimsPorts & { graceMs?: number }): Promise<ReconcileReport> {
  const grace = p.graceMs ?? DEFAULT_GRACE_MS;
  const nowMs = () => (p.now ? p.now() : new Date()).getTime();
  const at = () => new Date(nowMs()).toISOString();
  // Guards are listed before identities are read: a join records its pending change before taking the
  // guard, so any guard seen here that belongs to a join in progress is explained by the identity read after.
  const guards = await p.store.listGuards();
  const listed = await p.store.listIdentities();
  const report: ReconcileReport = { actions: [], identities: listed.length, guards: guards.length };
  const act = (
    kind: ReconcileKind,
    cluster: string,
    clusterId: string,
    clusterSet: string | undefined,
    detail: string,
  ) => report.actions.push({ kind, cluster, clusterId, ...(clusterSet ? { clusterSet } : {}), detail });

  for (const seen of listed) {
    const i = await p.store.getIdentity(seen.cluster);
    if (!i) continue;
    if (p.registry && !(await p.registry.get(i.cluster))) {
      if (nowMs() - Date.parse(i.updatedAt) >= grace) {
        await forgetCluster(p, i.cluster);
        act('forgotten', i.cluster, i.clusterId, i.clusterSet, 'the cluster is no longer registered');
      }
      continue;
    }
    if (!i.pending || nowMs() - Date.parse(i.pending.at) < grace) continue;
    const pending = i.pending;
    const guard = await p.store.getGuard(pending.set, i.clusterId);
    const { pending: _p, ...rest } = i;
    try {
      if (guard && guard.cluster === i.cluster) {
        const member: StoredIdentity = {
          ...rest,
          clusterSet: pending.set,
          memberSince: at(),
          version: i.version + 1,
          updatedAt: at(),
        };
        await p.store.putIdentity(member, i.version);
        const from = pending.op === 'move' ? (pending.from ?? i.clusterSet) : undefined;
        if (from && from !== pending.set)
          await p.store.releaseGuard(from, i.clusterId, { cluster: i.cluster });
        act(
          'completed',
          i.cluster,
          i.clusterId,
          pending.set,
          `interrupted ${pending.op} of ${pending.set} finished`,
        );
        await announce(p, member, pending.op, from, pending.set);
      } else {
        await p.store.putIdentity({ ...rest, version: i.version + 1, updatedAt: at() }, i.version);
        act(
          'abandoned',
          i.cluster,
          i.clusterId,
          i.clusterSet,
          `interrupted ${pending.op} of ${pending.set} dropped (its guard was not taken)`,
        );
      }
    } catch (err) {
      if (!(err instanceof VersionConflictError)) throw err; // changed meanwhile: the next pass looks again
    }
  }

  for (const g of guards) {
    const i = await p.store.getIdentity(g.cluster);
    const explained =
      i !== undefined &&
      i.clusterId === g.clusterId &&
      (i.clusterSet === g.clusterSet || i.pending?.set === g.clusterSet);
    if (explained) continue;
    if (await p.store.releaseGuard(g.clusterSet, g.clusterId, { cluster: g.cluster, token: g.token }))
      act(
        'released-guard',
        g.cluster,
        g.clusterId,
        g.clusterSet,
        `guard ${g.clusterSet}/${g.clusterId} released: no membership explains it`,
      );
  }

  for (const seen of listed) {
    const i = await p.store.getIdentity(seen.cluster);
    if (!i?.clusterSet || i.pending) continue;
    const g = await p.store.getGuard(i.clusterSet, i.clusterId);
    if (g?.cluster === i.cluster) continue;
    const conflict = (holder: string | undefined) =>
      act(
        'conflict',
        i.cluster,
        i.clusterId,
        i.clusterSet,
        `is a member of ${i.clusterSet} but cluster "${holder}" holds ID ${i.clusterId} there`,
      );
    if (g) {
      conflict(g.cluster);
      continue;
    }
    const taken = await p.store.acquireGuard({
      clusterSet: i.clusterSet,
      clusterId: i.clusterId,
      cluster: i.cluster,
      token: `reconciler-${at()}`,
      acquiredAt: at(),
    });
    if (!taken.ok) {
      conflict(taken.holder?.cluster);
      continue;
    }
    // If the cluster left in the meantime, the guard just taken is an orphan: give it back.
    const after = await p.store.getIdentity(i.cluster);
    if (after?.clusterSet !== i.clusterSet || after.clusterId !== i.clusterId) {
      await p.store.releaseGuard(i.clusterSet, i.clusterId, { cluster: i.cluster });
      continue;
    }
    act(
      'restored-guard',
      i.cluster,
      i.clusterId,
      i.clusterSet,
      `guard ${i.clusterSet}/${i.clusterId} taken again for the membership`,
    );
  }
  return report;
}

async function announce(
  p: ClaimsPorts,
  i: StoredIdentity,
  op: 'join' | 'move',
  from: string | undefined,
  to: string,
): Promise<void> {
  const when = p.now ? p.now() : new Date();
  try {
    await p.publisher.publish([
      membershipChangedEvent({
        cluster: i.cluster,
        clusterId: i.clusterId,
        change: op,
        from,
        to,
        reason: 'reconcile',
        at: when,
      }),
      ...claimsChangedEvents({
        cluster: i.cluster,
        clusterId: i.clusterId,
        clusterSet: to,
        origin: 'registry',
        reason: 'reconcile',
        changes: [change(CLUSTERSET_CLAIM, from, to)],
        at: when,
      }),
    ]);
  } catch (err) {
    p.warn?.(`could not publish the reconciled membership of ${i.cluster}: ${(err as Error).message}`);
  }
}

export function reportLines(r: ReconcileReport): string[] {
  return r.actions.map(
    (a) =>
      `${a.kind}: ${a.cluster} (id ${a.clusterId}${a.clusterSet ? `, ClusterSet ${a.clusterSet}` : ''}): ${a.detail}`,
  );
}
