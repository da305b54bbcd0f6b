/**
 * Changing claims in the source of truth (DynamoDB): the ID, ClusterSet membership (join, leave, move)
 * and custom claims. Kubernetes is never touched here: each change publishes ClusterClaimsChanged, which
 * the claims worker applies to the cluster (and the scheduled drift check catches anything missed).
 *
 * Uniqueness without transactions. A cluster may be ID x in ClusterSet s only while it holds the guard
 * item (s, x), taken with attribute_not_exists: of any number of concurrent joins with the same ID into
 * one ClusterSet exactly one takes the guard. The identity and the guard are two items, so a crash can
 * fall between the two writes; the protocol makes every such state explainable by the identity alone:
 *
 *   join s:   1. identity.pending = {join s, token}          (conditional on the identity's version)
 *             2. guard (s, id) := {cluster, token}            (attribute_not_exists, or already ours)
 *             3. identity.clusterSet = s, pending removed     (conditional on version)
 *   leave s:  1. identity.clusterSet removed                  (conditional on version)
 *             2. guard (s, id) deleted                        (conditional on being ours)
 *   move s->t: 1. identity.pending = {move t from s, token}   (still a member of s only)
 *             2. guard (t, id) taken                          (refused: pending cleared, still in s)
 *             3. identity.clusterSet = t, pending removed     (the switch: one write, one set at a time)
 *             4. guard (s, id) deleted
 *
 * A guard is legitimate when its cluster's identity is a member of its set with its ID, or has a pending
 * change to that set; the reconciler (reconcile.ts) finishes stale pending changes whose guard was taken,
 * drops those whose guard was not, deletes guards nobody explains, and re-takes the guard of a membership
 * that lost it. The identity's clusterSet is one attribute, so a cluster never claims two sets, and a
 * move that fails before the switch leaves the old membership intact.
 */
import { randomUUID } from 'node:crypto';
import type { Registry } from '../fleet/registry.js';
import { kubeconfigRefKey } from '../k8s/kubeconfig-ref.js';
import type { EventPublisher, OutgoingEvent } from '../platform/publisher.js';
import { change, claimsChangedEvents, membershipChangedEvent } from './events.js';
import {
  assertNoProblem,
  type ClusterIdentity,
  idChangeProblem,
  joinProblem,
  leaveProblem,
  moveProblem,
} from './identity.js';
import {
  CLUSTER_ID_CLAIM,
  CLUSTERSET_CLAIM,
  ClaimRuleError,
  clusterIdProblem,
  customClaimProblem,
  customClaimWarnings,
  ID_CLAIM,
} from './rules.js';
import { type ClaimStore, type StoredIdentity, VersionConflictError } from './store.js';

/** The step boundaries of the protocols above; a test hook may throw at one to simulate a crash there. */
export type MembershipStep =
  | 'join:after-pending'
  | 'join:after-guard'
  | 'leave:after-membership'
  | 'move:after-pending'
  | 'move:after-guard'
  | 'move:after-switch';

export interface ClaimsPorts {
  store: ClaimStore;
  publisher: EventPublisher;
  /** The cluster registry: claims exist only for registered clusters. */
  registry?: Registry;
  now?: () => Date;
  /** Fault injection (tests): called at each step boundary; a throw there is a crash there. */
  step?: (step: MembershipStep) => void | Promise<void>;
  /** Where warnings go (a lost event, an OCM size limit); the change itself stands. */
  warn?: (message: string) => void;
}

/** Another cluster holds the ID in the ClusterSet. */
export class UniquenessError extends ClaimRuleError {
  override name = 'UniquenessError';
}
export class NotFoundError extends ClaimRuleError {
  override name = 'NotFoundError';
}

export interface MembershipResult {
  cluster: string;
  clusterId: string;
  clusterSet?: string;
  /** False when the cluster already was where it was asked to be (nothing written). */
  changed: boolean;
}

const MAX_ATTEMPTS = 4;
const now = (p: ClaimsPorts) => (p.now ? p.now() : new Date());

async function step(p: ClaimsPorts, s: MembershipStep) {
  await p.step?.(s);
}

async function publish(p: ClaimsPorts, events: OutgoingEvent[]): Promise<void> {
  if (events.length === 0) return;
  try {
    await p.publisher.publish(events);
  } catch (err) {
    // DynamoDB is the source of truth and the scheduled check applies it anyway.
    p.warn?.(`could not publish ${events.map((e) => e.detailType).join(', ')}: ${(err as Error).message}`);
  }
}

async function identityOf(p: ClaimsPorts, cluster: string): Promise<StoredIdentity> {
  const identity = await p.store.getIdentity(cluster);
  if (identity) return identity;
  if (p.registry && !(await p.registry.get(cluster)))
    throw new NotFoundError(`cluster "${cluster}" is not registered`);
  const uid = (await p.registry?.getStatus(cluster))?.kubeSystemUid;
  if (uid && !clusterIdProblem(uid)) {
    // Inventory saw the cluster but the claims worker has not run yet: take the ID from it.
    const created = await ensureIdentity(p, { cluster, kubeSystemUid: uid });
    return created.identity;
  }
  throw new NotFoundError(
    `cluster "${cluster}" has no ${ID_CLAIM} yet: fleetscope has not reached it since registration; run "fleetscope claims check --cluster ${cluster}"`,
  );
}

/** The well-known ID claims with a value change, under both names when the newer one is written. */
async function idChanges(p: ClaimsPorts, cluster: string, old: string | undefined, next: string | undefined) {
  const settings = await p.store.settingsFor(cluster);
  return [
    change(ID_CLAIM, old, next),
    ...(settings.writeClusterIdName ? [change(CLUSTER_ID_CLAIM, old, next)] : []),
  ];
}

/**
 * Creates the identity of a cluster fleetscope has reached (registration): id.k8s.io = the kube-system
 * UID. An existing identity is kept (an operator-given ID stands); its kube-system UID is recorded.
 */
export async function ensureIdentity(
  p: ClaimsPorts,
  input: IdentityInput,
): Promise<{ identity: StoredIdentity; created: boolean }> {
  const problem = clusterIdProblem(input.kubeSystemUid);
  if (problem) throw new ClaimRuleError(`kube-system UID of "${input.cluster}" cannot be the ID: ${problem}`);
  for (let attempt = 1; ; attempt++) {
    const existing = await p.store.getIdentity(input.cluster);
    const at = now(p).toISOString();
    try {
      if (!existing) return { identity: await createIdentity(p, input, at), created: true };
      return { identity: await refreshIdentity(p, existing, input, at), created: false };
    } catch (err) {
      if (err instanceof VersionConflictError && attempt < MAX_ATTEMPTS) continue;
      throw err;
    }
  }
}

/** What fleetscope learnt by reaching the cluster. */
interface IdentityInput {
  cluster: string;
  kubeSystemUid: string;
  kubeconfig?: StoredIdentity['kubeconfig'];
}

/** A new identity: the kube-system UID as the ID, announced as the registration's claims. */
async function createIdentity(p: ClaimsPorts, input: IdentityInput, at: string): Promise<StoredIdentity> {
  const identity: StoredIdentity = {
    cluster: input.cluster,
    clusterId: input.kubeSystemUid,
    idSource: 'kube-system-uid',
    kubeSystemUid: input.kubeSystemUid,
    version: 1,
    updatedAt: at,
    ...(input.kubeconfig ? { kubeconfig: input.kubeconfig } : {}),
  };
  await p.store.putIdentity(identity);
  await publish(
    p,
    claimsChangedEvents({
      cluster: input.cluster,
      clusterId: identity.clusterId,
      origin: 'registry',
      reason: 'registration',
      changes: await idChanges(p, input.cluster, undefined, identity.clusterId),
      at: now(p),
    }),
  );
  return identity;
}

/** An existing identity keeps its ID; only a changed kube-system UID or kubeconfig reference is recorded. */
async function refreshIdentity(
  p: ClaimsPorts,
  existing: StoredIdentity,
  input: IdentityInput,
  at: string,
): Promise<StoredIdentity> {
  const stale =
    existing.kubeSystemUid !== input.kubeSystemUid ||
    (input.kubeconfig &&
      (!existing.kubeconfig || kubeconfigRefKey(existing.kubeconfig) !== kubeconfigRefKey(input.kubeconfig)));
  if (!stale) return existing;
  const next: StoredIdentity = {
    ...existing,
    kubeSystemUid: input.kubeSystemUid,
    ...(input.kubeconfig ? { kubeconfig: input.kubeconfig } : {}),
    version: existing.version + 1,
    updatedAt: at,
  };
  await p.store.putIdentity(next, existing.version);
  return next;
}

/**
 * Sets id.k8s.io. `value: undefined` resets it to the kube-system UID. Refused (nothing written) when
 * the value is not an RFC 1123 label or the cluster is a member of a ClusterSet.
 */
export async function setClusterId(p: ClaimsPorts, cluster: string, value: string | undefined) {
  for (let attempt = 1; ; attempt++) {
    const identity = await identityOf(p, cluster);
    const next = value ?? identity.kubeSystemUid;
    if (!next)
      throw new ClaimRuleError(
        `the kube-system UID of "${cluster}" is not known yet; give a value for ${ID_CLAIM}`,
      );
    assertNoProblem(idChangeProblem(identity, next));
    if (next === identity.clusterId) {
      return {
        cluster,
        clusterId: next,
        changed: false,
        ...(identity.clusterSet ? { clusterSet: identity.clusterSet } : {}),
      };
    }
    const updated: StoredIdentity = {
      ...identity,
      clusterId: next,
      idSource: value === undefined ? 'kube-system-uid' : 'operator',
      version: identity.version + 1,
      updatedAt: now(p).toISOString(),
    };
    try {
      // Conditional on the version read: a join that started since would have changed it.
      await p.store.putIdentity(updated, identity.version);
    } catch (err) {
      if (err instanceof VersionConflictError && attempt < MAX_ATTEMPTS) continue;
      throw err;
    }
    await publish(
      p,
      claimsChangedEvents({
        cluster,
        clusterId: next,
        origin: 'registry',
        reason: 'set',
        changes: await idChanges(p, cluster, identity.clusterId, next),
        at: now(p),
      }),
    );
    return { cluster, clusterId: next, changed: true };
  }
}

function pendingToken(): string {
  return randomUUID();
}

function withoutPending(i: StoredIdentity): StoredIdentity {
  const { pending: _p, ...rest } = i;
  return rest;
}

function memberOf(i: StoredIdentity, set: string, at: string): StoredIdentity {
  return { ...withoutPending(i), clusterSet: set, memberSince: at, version: i.version + 1, updatedAt: at };
}

/** Drops a pending change after its guard was refused (best effort: the reconciler drops it otherwise). */
async function dropPending(p: ClaimsPorts, i: StoredIdentity): Promise<void> {
  try {
    await p.store.putIdentity(
      { ...withoutPending(i), version: i.version + 1, updatedAt: now(p).toISOString() },
      i.version,
    );
  } catch (err) {
    if (!(err instanceof VersionConflictError)) throw err;
  }
}

function refusal(set: string, clusterId: string, holder: string | undefined): UniquenessError {
  return new UniquenessError(
    `ID "${clusterId}" is already held in ClusterSet "${set}" by cluster "${holder ?? 'another cluster'}": ${ID_CLAIM} must be unique within a ClusterSet (KEP-2149). Give this cluster another ID (fleetscope claims set --name ${ID_CLAIM}) or join another ClusterSet`,
  );
}

async function membershipEvents(
  p: ClaimsPorts,
  i: StoredIdentity,
  kind: 'join' | 'leave' | 'move',
  from: string | undefined,
  to: string | undefined,
  reason: 'operator' | 'reconcile' | 'deregistration',
) {
  const at = now(p);
  await publish(p, [
    membershipChangedEvent({
      cluster: i.cluster,
      clusterId: i.clusterId,
      change: kind,
      from,
      to,
      reason,
      at,
    }),
    ...claimsChangedEvents({
      cluster: i.cluster,
      clusterId: i.clusterId,
      ...(to ? { clusterSet: to } : {}),
      origin: 'registry',
      reason: reason === 'operator' ? kind : reason === 'reconcile' ? 'reconcile' : 'deregistration',
      changes: [change(CLUSTERSET_CLAIM, from, to)],
      at,
    }),
  ]);
}

/** Joins a ClusterSet; exactly one of several clusters joining with the same ID succeeds. */
export async function joinClusterSet(
  p: ClaimsPorts,
  cluster: string,
  set: string,
): Promise<MembershipResult> {
  for (let attempt = 1; ; attempt++) {
    const identity = await identityOf(p, cluster);
    assertNoProblem(joinProblem(identity, set));
    const clusterId = identity.clusterId;
    if (identity.clusterSet === set && !identity.pending) {
      await checkMemberGuard(p, identity, set);
      return { cluster, clusterId, clusterSet: set, changed: false };
    }
    try {
      const pending = await recordPending(p, identity, { op: 'join', set });
      await step(p, 'join:after-pending');
      await takeGuard(p, pending, set);
      await step(p, 'join:after-guard');
      const member = memberOf(pending, set, now(p).toISOString());
      await p.store.putIdentity(member, pending.version);
      await membershipEvents(p, member, 'join', undefined, set, 'operator');
      return { cluster, clusterId, clusterSet: set, changed: true };
    } catch (err) {
      if (!(err instanceof VersionConflictError)) throw err;
      // Someone else changed the identity: the reconciler may have finished this very join.
      if (await finishedMeanwhile(p, cluster, set))
        return { cluster, clusterId, clusterSet: set, changed: true };
      if (attempt >= MAX_ATTEMPTS) throw err;
    }
  }
}

/** Already a member: makes sure the guard is there (repairs a lost one on the spot), warns when another holds it. */
async function checkMemberGuard(p: ClaimsPorts, identity: StoredIdentity, set: string): Promise<void> {
  const { cluster, clusterId } = identity;
  const g = await p.store.getGuard(set, clusterId);
  if (!g) {
    const taken = await p.store.acquireGuard({
      clusterSet: set,
      clusterId,
      cluster,
      token: pendingToken(),
      acquiredAt: now(p).toISOString(),
    });
    if (!taken.ok) p.warn?.(refusal(set, clusterId, taken.holder?.cluster).message);
  } else if (g.cluster !== cluster) p.warn?.(refusal(set, clusterId, g.cluster).message);
}

type PendingChange = NonNullable<StoredIdentity['pending']>;

/**
 * Records the change about to be made, so that the reconciler can finish or drop it after a crash. A
 * change already recorded (a retry) is kept, with its token.
 */
async function recordPending(
  p: ClaimsPorts,
  identity: StoredIdentity,
  change: Omit<PendingChange, 'token' | 'at'>,
): Promise<StoredIdentity> {
  if (identity.pending) return identity;
  const at = now(p).toISOString();
  const pending: StoredIdentity = {
    ...identity,
    pending: { ...change, token: pendingToken(), at },
    version: identity.version + 1,
    updatedAt: at,
  };
  await p.store.putIdentity(pending, identity.version);
  return pending;
}

/** Takes the set's guard of the ID with the pending change's token; another holder refuses the change (dropped). */
async function takeGuard(p: ClaimsPorts, identity: StoredIdentity, set: string): Promise<void> {
  const { cluster, clusterId } = identity;
  const taken = await p.store.acquireGuard({
    clusterSet: set,
    clusterId,
    cluster,
    token: identity.pending!.token,
    acquiredAt: now(p).toISOString(),
  });
  if (!taken.ok) {
    await dropPending(p, identity);
    throw refusal(set, clusterId, taken.holder?.cluster);
  }
}

/** After a version conflict: whether the change was made meanwhile (by the reconciler, or a retry). */
async function finishedMeanwhile(p: ClaimsPorts, cluster: string, set: string): Promise<boolean> {
  const again = await p.store.getIdentity(cluster);
  return again?.clusterSet === set && !again.pending;
}

/** Leaves the ClusterSet (`set`, when given, must be the current one). */
export async function leaveClusterSet(
  p: ClaimsPorts,
  cluster: string,
  set?: string,
): Promise<MembershipResult> {
  for (let attempt = 1; ; attempt++) {
    const identity = await identityOf(p, cluster);
    if (!identity.clusterSet && !identity.pending && set === undefined)
      return { cluster, clusterId: identity.clusterId, changed: false };
    assertNoProblem(leaveProblem(identity, set));
    const from = identity.clusterSet!;
    const at = now(p).toISOString();
    const { clusterSet: _s, memberSince: _m, ...rest } = identity;
    const left: StoredIdentity = { ...rest, version: identity.version + 1, updatedAt: at };
    try {
      await p.store.putIdentity(left, identity.version);
    } catch (err) {
      if (err instanceof VersionConflictError && attempt < MAX_ATTEMPTS) continue;
      throw err;
    }
    await step(p, 'leave:after-membership');
    await p.store.releaseGuard(from, identity.clusterId, { cluster });
    await membershipEvents(p, left, 'leave', from, undefined, 'operator');
    return { cluster, clusterId: identity.clusterId, changed: true };
  }
}

/** Moves to another ClusterSet: a member of exactly one set at every instant; a failure keeps the old one. */
export async function moveClusterSet(p: ClaimsPorts, cluster: string, to: string): Promise<MembershipResult> {
  for (let attempt = 1; ; attempt++) {
    const identity = await identityOf(p, cluster);
    assertNoProblem(moveProblem(identity, to));
    const clusterId = identity.clusterId;
    try {
      const pending = await recordPending(p, identity, { op: 'move', set: to, from: identity.clusterSet! });
      await step(p, 'move:after-pending');
      const from = pending.pending!.from ?? pending.clusterSet;
      await takeGuard(p, pending, to);
      await step(p, 'move:after-guard');
      const moved = memberOf(pending, to, now(p).toISOString());
      await p.store.putIdentity(moved, pending.version);
      await step(p, 'move:after-switch');
      if (from && from !== to) await p.store.releaseGuard(from, clusterId, { cluster });
      await membershipEvents(p, moved, 'move', from, to, 'operator');
      return { cluster, clusterId, clusterSet: to, changed: true };
    } catch (err) {
      if (!(err instanceof VersionConflictError)) throw err;
      if (await finishedMeanwhile(p, cluster, to))
        return { cluster, clusterId, clusterSet: to, changed: true };
      if (attempt >= MAX_ATTEMPTS) throw err;
    }
  }
}

async function assertRegistered(p: ClaimsPorts, cluster: string): Promise<void> {
  if (p.registry && !(await p.registry.get(cluster)))
    throw new NotFoundError(`cluster "${cluster}" is not registered`);
}

/**
 * Sets a custom claim; returns warnings (e.g. too long for OCM). Refused, with nothing written, for a
 * reserved or invalid name or a value over 128 KiB.
 */
export async function setCustomClaim(
  p: ClaimsPorts,
  cluster: string,
  name: string,
  value: string,
): Promise<{ changed: boolean; warnings: string[] }> {
  const problem = customClaimProblem(name, value);
  if (problem) throw new ClaimRuleError(problem);
  await assertRegistered(p, cluster);
  const warnings = customClaimWarnings(name, value);
  const old = await p.store.putCustom(cluster, name, value, now(p).toISOString());
  if (old === value) return { changed: false, warnings };
  await publishCustomChange(p, cluster, 'set', change(name, old, value));
  return { changed: true, warnings };
}

/** Tells the fleet that a custom claim changed (with the cluster's ID and ClusterSet, when it has them). */
async function publishCustomChange(
  p: ClaimsPorts,
  cluster: string,
  reason: 'set' | 'delete',
  claimChange: ReturnType<typeof change>,
): Promise<void> {
  const identity = await p.store.getIdentity(cluster);
  await publish(
    p,
    claimsChangedEvents({
      cluster,
      ...(identity ? { clusterId: identity.clusterId } : {}),
      ...(identity?.clusterSet ? { clusterSet: identity.clusterSet } : {}),
      origin: 'registry',
      reason,
      changes: [claimChange],
      at: now(p),
    }),
  );
}

/** Deletes a custom claim. The well-known claims cannot be deleted this way (each says what to do). */
export async function deleteCustomClaim(
  p: ClaimsPorts,
  cluster: string,
  name: string,
): Promise<{ changed: boolean }> {
  if (name === ID_CLAIM || name === CLUSTER_ID_CLAIM)
    throw new ClaimRuleError(
      `${name} exists for as long as the cluster is registered (KEP-2149); change it with "fleetscope claims set --cluster ${cluster} --name ${ID_CLAIM} --value ID" (or --default for the kube-system UID)`,
    );
  if (name === CLUSTERSET_CLAIM)
    throw new ClaimRuleError(
      `${CLUSTERSET_CLAIM} follows membership: use "fleetscope clusterset leave --cluster ${cluster}"`,
    );
  await assertRegistered(p, cluster);
  const old = await p.store.deleteCustom(cluster, name);
  if (old === undefined) return { changed: false };
  await publishCustomChange(p, cluster, 'delete', change(name, old, undefined));
  return { changed: true };
}

/** Sets any claim by name: id.k8s.io, or a custom claim; the membership claims are refused. */
export async function setClaim(p: ClaimsPorts, cluster: string, name: string, value: string | undefined) {
  if (name === ID_CLAIM) {
    const r = await setClusterId(p, cluster, value);
    return { changed: r.changed, warnings: [] as string[] };
  }
  if (value === undefined) throw new ClaimRuleError(`--default only applies to ${ID_CLAIM}`);
  return setCustomClaim(p, cluster, name, value);
}

export type { ClusterIdentity };

/**
 * Forgets a deregistered cluster's claims: leaves its ClusterSet (releasing the guard) and deletes its
 * items. Returns the identity it had (the caller may still clean the cluster itself).
 */
export async function forgetCluster(p: ClaimsPorts, cluster: string): Promise<StoredIdentity | undefined> {
  for (let attempt = 1; ; attempt++) {
    const identity = await p.store.getIdentity(cluster);
    await p.store.deleteClusterItems(cluster);
    if (!identity) return undefined;
    try {
      await p.store.deleteIdentity(cluster, identity.version);
    } catch (err) {
      if (err instanceof VersionConflictError && attempt < MAX_ATTEMPTS) continue;
      throw err;
    }
    for (const set of new Set([identity.clusterSet, identity.pending?.set].filter((s): s is string => !!s))) {
      await p.store.releaseGuard(set, identity.clusterId, { cluster });
    }
    if (identity.clusterSet)
      await membershipEvents(p, identity, 'leave', identity.clusterSet, undefined, 'deregistration');
    return identity;
  }
}
