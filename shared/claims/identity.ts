/**
 * A cluster's identity as fleetscope keeps it (the source of truth, in DynamoDB) and the pure rules for
 * changing it: the ID is immutable while the cluster is a member of a ClusterSet, membership changes go
 * through join, leave and move, and only one membership change runs at a time.
 */
import { createHash } from 'node:crypto';
import {
  CLUSTER_ID_CLAIM,
  CLUSTERSET_CLAIM,
  ClaimRuleError,
  clusterIdProblem,
  clusterSetProblem,
  ID_CLAIM,
} from './rules.js';

/** Where the ID came from: the kube-system namespace UID (the KEP's recommendation) or the operator. */
export type IdSource = 'kube-system-uid' | 'operator';

/**
 * A membership change in progress, written to the identity before the uniqueness guard is taken so a
 * guard is never without an owner that explains it (see membership.ts for the protocol).
 */
export interface PendingMembership {
  op: 'join' | 'move';
  /** The ClusterSet being joined or moved to. */
  set: string;
  /** For a move: the ClusterSet being left (still the membership until the switch). */
  from?: string;
  /** Unique per attempt; the guard taken for this attempt carries the same token. */
  token: string;
  at: string;
}

export interface ClusterIdentity {
  cluster: string;
  /** The value of `id.k8s.io` (and of `cluster.clusterset.k8s.io`). */
  clusterId: string;
  idSource: IdSource;
  kubeSystemUid?: string;
  /** The value of `clusterset.k8s.io`: present exactly while the cluster is a member. */
  clusterSet?: string;
  memberSince?: string;
  pending?: PendingMembership;
  /** Optimistic lock: every write of the identity is conditional on it and increments it. */
  version: number;
  updatedAt: string;
}

/** How claims are written into clusters; fleet-wide, with optional per-cluster overrides. */
export interface ClaimsSettings {
  /** Also write the ID under its newer name `cluster.clusterset.k8s.io` (same value). */
  writeClusterIdName: boolean;
  /** Create the about.k8s.io ClusterProperty CRD in a cluster that does not have it. */
  createCrd: boolean;
  /** Mirror the claims to OCM ClusterClaim objects: 'auto' when the cluster serves that CRD, 'off' never. */
  ocm: 'auto' | 'off';
}

export const DEFAULT_SETTINGS: ClaimsSettings = { writeClusterIdName: true, createCrd: true, ocm: 'auto' };

const member = (i: ClusterIdentity) => (i.clusterSet ? `a member of ClusterSet "${i.clusterSet}"` : '');

function pendingProblem(i: ClusterIdentity): string | null {
  if (!i.pending) return null;
  const what = i.pending.op === 'join' ? `joining "${i.pending.set}"` : `moving to "${i.pending.set}"`;
  return `cluster "${i.cluster}" is ${what} (since ${i.pending.at}); wait for it to finish, or for the reconciler to complete it, then try again`;
}

/** Why the ID may not change to `next` now; null when it may. */
export function idChangeProblem(i: ClusterIdentity, next: string): string | null {
  const invalid = clusterIdProblem(next);
  if (invalid) return invalid;
  if (i.clusterSet && next !== i.clusterId)
    return `cluster "${i.cluster}" is ${member(i)}: ${ID_CLAIM} must not change during a membership (KEP-2149). To rename it, leave, change, rejoin: "fleetscope clusterset leave --cluster ${i.cluster}", "fleetscope claims set --cluster ${i.cluster} --name ${ID_CLAIM} --value ${next}", "fleetscope clusterset join --cluster ${i.cluster} --set ${i.clusterSet}"`;
  return pendingProblem(i);
}

/** Why the cluster may not join `set` now; null when it may (or already is a member of it). */
export function joinProblem(i: ClusterIdentity, set: string): string | null {
  const invalid = clusterSetProblem(set);
  if (invalid) return invalid;
  if (i.pending && !(i.pending.op === 'join' && i.pending.set === set)) return pendingProblem(i);
  if (i.clusterSet && i.clusterSet !== set)
    return `cluster "${i.cluster}" is already ${member(i)}; a cluster belongs to one ClusterSet at a time: use "fleetscope clusterset move --cluster ${i.cluster} --to ${set}"`;
  return null;
}

export function leaveProblem(i: ClusterIdentity, set?: string): string | null {
  if (i.pending) return pendingProblem(i);
  if (!i.clusterSet) return `cluster "${i.cluster}" is not a member of any ClusterSet`;
  if (set && set !== i.clusterSet)
    return `cluster "${i.cluster}" is a member of ClusterSet "${i.clusterSet}", not "${set}"`;
  return null;
}

export function moveProblem(i: ClusterIdentity, to: string): string | null {
  const invalid = clusterSetProblem(to);
  if (invalid) return invalid;
  if (i.pending && !(i.pending.op === 'move' && i.pending.set === to)) return pendingProblem(i);
  if (!i.clusterSet && !i.pending)
    return `cluster "${i.cluster}" is not a member of any ClusterSet: use "fleetscope clusterset join"`;
  if (i.clusterSet === to && !i.pending)
    return `cluster "${i.cluster}" is already a member of ClusterSet "${to}"`;
  return null;
}

export function assertNoProblem(problem: string | null): void {
  if (problem) throw new ClaimRuleError(problem);
}

/**
 * The claims a cluster must carry, by name: the ID (under both names unless configured otherwise), the
 * ClusterSet exactly while it is a member, and the operator's custom claims.
 */
export function desiredClaims(
  identity: ClusterIdentity | undefined,
  custom: Record<string, string>,
  settings: ClaimsSettings,
): Map<string, string> {
  const out = new Map<string, string>();
  if (identity) {
    out.set(ID_CLAIM, identity.clusterId);
    if (settings.writeClusterIdName) out.set(CLUSTER_ID_CLAIM, identity.clusterId);
    if (identity.clusterSet) out.set(CLUSTERSET_CLAIM, identity.clusterSet);
  }
  for (const name of Object.keys(custom).sort()) out.set(name, custom[name]!);
  return out;
}

/** A stable digest of a desired state (the sync loop re-reads and compares it to converge). */
export function desiredDigest(desired: Map<string, string>): string {
  const h = createHash('sha256');
  for (const [k, v] of [...desired.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    h.update(`${k}\u0000${v}\u0000`);
  return h.digest('hex');
}

/** An object found in a cluster. `managed` means fleetscope created it (its managed-by label). */
export interface ObservedClaim {
  name: string;
  value: string | undefined;
  managed: boolean;
}

export type SyncOp =
  | { kind: 'create'; name: string; value: string }
  | { kind: 'update'; name: string; old: string | undefined; value: string; adopt: boolean }
  | { kind: 'delete'; name: string; old: string | undefined };

/**
 * What to write so a cluster's claims equal the desired ones. Deleted: `clusterset.k8s.io` whenever it is
 * not desired (whoever wrote it: fleetscope is the source of truth for membership), and any other object
 * fleetscope created that is no longer desired. Objects other tools created under other names are left alone.
 */
export function planSync(desired: Map<string, string>, observed: ObservedClaim[]): SyncOp[] {
  const ops: SyncOp[] = [];
  const seen = new Map(observed.map((o) => [o.name, o]));
  for (const [name, value] of desired) {
    const o = seen.get(name);
    if (!o) ops.push({ kind: 'create', name, value });
    else if (o.value !== value || !o.managed)
      ops.push({ kind: 'update', name, old: o.value, value, adopt: !o.managed });
  }
  for (const o of observed) {
    if (desired.has(o.name)) continue;
    if (o.managed || o.name === CLUSTERSET_CLAIM) ops.push({ kind: 'delete', name: o.name, old: o.value });
  }
  return ops;
}

/** Human-readable lines of a planned or applied sync (CLI `claims check`). */
export function describeOp(op: SyncOp): string {
  const short = (v: string | undefined) =>
    v === undefined ? '(none)' : v.length > 60 ? `${JSON.stringify(v.slice(0, 57))}...` : JSON.stringify(v);
  switch (op.kind) {
    case 'create':
      return `create ${op.name} = ${short(op.value)}`;
    case 'update':
      return `update ${op.name}: ${short(op.old)} -> ${short(op.value)}${op.adopt ? ' (adopted)' : ''}`;
    case 'delete':
      return `delete ${op.name} (was ${short(op.old)})`;
  }
}
