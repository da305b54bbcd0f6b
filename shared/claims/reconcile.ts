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
import { type Guard, type StoredIdentity, VersionConflictError } from './store.js';

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

/** What each pass shares: the ports, the clock, the grace period and the report it adds to. */
interface Pass {
  p: ClaimsPorts;
  grace: number;
  nowMs: () => number;
  at: () => string;
  act: (
    kind: ReconcileKind,
    cluster: string,
    clusterId: string,
    clusterSet: string | undefined,
    detail: string,
  ) => void;
}

export async function reconcileClaims(p: ClaimsPorts & { graceMs?: number }): Promise<ReconcileReport> {
  // Guards are listed before identities are read: a join records its pending change before taking the
  // guard, so any guard seen here that belongs to a join in progress is explained by the identity read after.
  const guards = await p.store.listGuards();
  const listed = await p.store.listIdentities();
  const report: ReconcileReport = { actions: [], identities: listed.length, guards: guards.length };
  const nowMs = () => (p.now ? p.now() : new Date()).getTime();
  const pass: Pass = {
    p,
    grace: p.graceMs ?? DEFAULT_GRACE_MS,
    nowMs,
    at: () => new Date(nowMs()).toISOString(),
    act: (kind, cluster, clusterId, clusterSet, detail) =>
      report.actions.push({ kind, cluster, clusterId, ...(clusterSet ? { clusterSet } : {}), detail }),
  };
  // Each pass re-reads what it acts on: an earlier pass (or a command running meanwhile) may have changed it.
  for (const seen of listed) await settleIdentity(pass, seen.cluster);
  for (const g of guards) await releaseIfUnexplained(pass, g);
  for (const seen of listed) await restoreGuard(pass, seen.cluster);
  return report;
}

/** Forgets a deregistered cluster, or settles its pending join/move once the grace period is over. */
async function settleIdentity(pass: Pass, cluster: string): Promise<void> {
  const { p, grace, nowMs } = pass;
  const i = await p.store.getIdentity(cluster);
  if (!i) return;
  if (p.registry && !(await p.registry.get(i.cluster))) {
    if (nowMs() - Date.parse(i.updatedAt) >= grace) {
      await forgetCluster(p, i.cluster);
      pass.act('forgotten', i.cluster, i.clusterId, i.clusterSet, 'the cluster is no longer registered');
    }
    return;
  }
  if (!i.pending || nowMs() - Date.parse(i.pending.at) < grace) return;
  const guard = await p.store.getGuard(i.pending.set, i.clusterId);
  try {
    if (guard && guard.cluster === i.cluster) await finishPending(pass, i, i.pending);
    else await dropPending(pass, i, i.pending);
  } catch (err) {
    if (!(err instanceof VersionConflictError)) throw err; // changed meanwhile: the next pass looks again
  }
}

type Pending = NonNullable<StoredIdentity['pending']>;

/** The guard was taken: the membership the operator asked for is made, and the old guard of a move given back. */
async function finishPending(pass: Pass, i: StoredIdentity, pending: Pending): Promise<void> {
  const { p, at } = pass;
  const { pending: _p, ...rest } = i;
  const member: StoredIdentity = {
    ...rest,
    clusterSet: pending.set,
    memberSince: at(),
    version: i.version + 1,
    updatedAt: at(),
  };
  await p.store.putIdentity(member, i.version);
  const from = pending.op === 'move' ? (pending.from ?? i.clusterSet) : undefined;
  if (from && from !== pending.set) await p.store.releaseGuard(from, i.clusterId, { cluster: i.cluster });
  pass.act(
    'completed',
    i.cluster,
    i.clusterId,
    pending.set,
    `interrupted ${pending.op} of ${pending.set} finished`,
  );
  await announce(p, member, pending.op, from, pending.set);
}

/** The guard was never taken: the change is dropped and the cluster stays where it was. */
async function dropPending(pass: Pass, i: StoredIdentity, pending: Pending): Promise<void> {
  const { pending: _p, ...rest } = i;
  await pass.p.store.putIdentity({ ...rest, version: i.version + 1, updatedAt: pass.at() }, i.version);
  pass.act(
    'abandoned',
    i.cluster,
    i.clusterId,
    i.clusterSet,
    `interrupted ${pending.op} of ${pending.set} dropped (its guard was not taken)`,
  );
}

/** A guard that neither the membership nor the pending change of its cluster explains is released. */
async function releaseIfUnexplained(pass: Pass, g: Guard): Promise<void> {
  const { p } = pass;
  const i = await p.store.getIdentity(g.cluster);
  const explained =
    i !== undefined &&
    i.clusterId === g.clusterId &&
    (i.clusterSet === g.clusterSet || i.pending?.set === g.clusterSet);
  if (explained) return;
  // Only the very guard that was read (same token): one taken again since is not ours to release.
  if (await p.store.releaseGuard(g.clusterSet, g.clusterId, { cluster: g.cluster, token: g.token }))
    pass.act(
      'released-guard',
      g.cluster,
      g.clusterId,
      g.clusterSet,
      `guard ${g.clusterSet}/${g.clusterId} released: no membership explains it`,
    );
}

/** A settled membership without its guard takes it again; another holder is a conflict for the operator. */
async function restoreGuard(pass: Pass, cluster: string): Promise<void> {
  const { p, at } = pass;
  const i = await p.store.getIdentity(cluster);
  if (!i?.clusterSet || i.pending) return;
  const set = i.clusterSet;
  const g = await p.store.getGuard(set, i.clusterId);
  if (g?.cluster === i.cluster) return;
  const conflict = (holder: string | undefined) =>
    pass.act(
      'conflict',
      i.cluster,
      i.clusterId,
      set,
      `is a member of ${set} but cluster "${holder}" holds ID ${i.clusterId} there`,
    );
  if (g) return conflict(g.cluster);
  const taken = await p.store.acquireGuard({
    clusterSet: set,
    clusterId: i.clusterId,
    cluster: i.cluster,
    token: `reconciler-${at()}`,
    acquiredAt: at(),
  });
  if (!taken.ok) return conflict(taken.holder?.cluster);
  // If the cluster left in the meantime, the guard just taken is an orphan: give it back.
  const after = await p.store.getIdentity(i.cluster);
  if (after?.clusterSet !== set || after.clusterId !== i.clusterId) {
    await p.store.releaseGuard(set, i.clusterId, { cluster: i.cluster });
    return;
  }
  pass.act(
    'restored-guard',
    i.cluster,
    i.clusterId,
    set,
    `guard ${set}/${i.clusterId} taken again for the membership`,
  );
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
