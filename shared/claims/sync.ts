/**
 * Bringing one cluster's in-cluster claims in line with DynamoDB: the claims worker runs it on
 * registration, after every change, and on the scheduled drift check (and `fleetscope claims check`).
 *
 * A write is "drift repair" when the cluster differs from a desired state fleetscope had already applied
 * (same digest as the last successful sync): someone edited or deleted a claim. Those repairs publish
 * ClusterClaimsChanged (origin cluster, reason drift) with the value found and the value restored.
 * Writes that apply a registry change are the expected follow-up of the event that announced it.
 *
 * A cluster that cannot be reached is recorded (sync status `unreachable`, with the reason) and retried by
 * the next check; the error is returned, not thrown, so one cluster never holds up the others.
 */
import type { RegisteredCluster } from '../fleet/cluster.js';
import { ClusterAccessError } from '../k8s/errors.js';
import { type ClaimChange, change, claimsChangedEvents } from './events.js';
import {
  type ClaimsSettings,
  describeOp,
  desiredClaims,
  desiredDigest,
  type ObservedClaim,
  planSync,
  type SyncOp,
} from './identity.js';
import type { ClaimObjects, ClusterClaimsApi, CrdState } from './incluster.js';
import { type ClaimsPorts, ensureIdentity } from './membership.js';
import { OCM_MAX_VALUE_CHARS } from './rules.js';
import type { StoredIdentity, SyncStatus } from './store.js';

export interface SyncPorts extends ClaimsPorts {
  /** A claims API for the cluster (through the connector in the handlers). */
  connect(cluster: RegisteredCluster): Promise<ClusterClaimsApi>;
}

export interface SyncResult {
  cluster: string;
  clusterId?: string;
  clusterSet?: string;
  state: SyncStatus['state'];
  /** Writes to ClusterProperty objects (planned only, with dryRun). */
  ops: SyncOp[];
  /** Writes to OCM ClusterClaim objects. */
  ocmOps: SyncOp[];
  /** The writes repaired drift (see above). */
  drift: boolean;
  crd?: CrdState;
  ocm: 'mirrored' | 'absent' | 'off';
  warnings: string[];
  error?: string;
  /** Whether the failure may pass by itself (network, timeout, 5xx) rather than need the operator. */
  retryable?: boolean;
  /** The kube-system UID was read and the identity created in this sync (registration). */
  identityCreated?: boolean;
}

const MAX_ROUNDS = 3;

function failureState(err: unknown): {
  state: 'unreachable' | 'error' | 'identity-changed';
  retryable: boolean;
} {
  if (err instanceof IdentityChangedError) return { state: 'identity-changed', retryable: false };
  if (err instanceof ClusterAccessError) {
    if (err.kind === 'http')
      return err.status !== undefined && (err.status >= 500 || err.status === 429)
        ? { state: 'unreachable', retryable: true }
        : { state: 'error', retryable: false };
    if (err.kind === 'internal' || err.kind === 'kubeconfig')
      return { state: 'error', retryable: err.retryable };
    return { state: 'unreachable', retryable: err.retryable };
  }
  return { state: 'error', retryable: false };
}

/** The claims the registry wants on the cluster, the settings they came with, and their digest. */
interface DesiredState {
  desired: Map<string, string>;
  settings: ClaimsSettings;
  digest: string;
}

async function desiredState(
  p: SyncPorts,
  identity: StoredIdentity | undefined,
  cluster: string,
): Promise<DesiredState> {
  const [custom, settings] = await Promise.all([p.store.getCustom(cluster), p.store.settingsFor(cluster)]);
  const desired = desiredClaims(identity, custom, settings);
  return { desired, settings, digest: desiredDigest(desired) };
}

/** The claims that fit OCM's ClusterClaim (values up to 1024 characters); the rest are warned about. */
function ocmDesired(desired: Map<string, string>, warnings: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of desired) {
    if (value.length > OCM_MAX_VALUE_CHARS) {
      warnings.push(
        `${name} is ${value.length} characters, over OCM ClusterClaim's ${OCM_MAX_VALUE_CHARS}: written as a ClusterProperty only`,
      );
      continue;
    }
    out.set(name, value);
  }
  return out;
}

async function applyAll(target: ClaimObjects, ops: SyncOp[], dryRun: boolean): Promise<void> {
  if (dryRun) return;
  for (const op of ops) await target.apply(op);
}

function opChanges(ops: SyncOp[], object: 'ClusterProperty' | 'ClusterClaim'): ClaimChange[] {
  return ops.map((op) => ({
    ...change(
      op.name,
      op.kind === 'create' ? undefined : op.old,
      op.kind === 'delete' ? undefined : op.value,
    ),
    object,
  }));
}

/** Reads, compares and (unless dryRun) writes one cluster's claims; never throws for cluster failures. */
export async function syncCluster(
  p: SyncPorts,
  cluster: RegisteredCluster,
  opts: { dryRun?: boolean } = {},
): Promise<SyncResult> {
  const dryRun = opts.dryRun ?? false;
  const previous = await p.store.getSyncStatus(cluster.name);
  const stored = await p.store.getIdentity(cluster.name);
  const result: SyncResult = {
    cluster: cluster.name,
    ...(stored ? { clusterId: stored.clusterId } : {}),
    ...(stored?.clusterSet ? { clusterSet: stored.clusterSet } : {}),
    state: 'in-sync',
    ops: [],
    ocmOps: [],
    drift: false,
    ocm: 'off',
    warnings: [],
  };
  let digest: string | undefined;
  try {
    const api = await p.connect(cluster);
    const identity = await identityOf(p, api, cluster, stored, dryRun, result);
    digest = await converge(p, api, cluster.name, identity, dryRun, result);
    const wrote = result.ops.length + result.ocmOps.length > 0;
    result.drift = wrote && previous?.digest === digest && result.state !== 'crd-missing';
    if (result.state === 'in-sync' && result.drift) result.state = 'repaired';
  } catch (err) {
    const f = failureState(err);
    result.state = f.state;
    result.retryable = f.retryable;
    result.error = err instanceof Error ? err.message : String(err);
  }
  if (!dryRun) await recordSync(p, result, digest, previous);
  return result;
}

/**
 * The kube-system UID read from the cluster is not the one its identity was made from: the cluster was
 * rebuilt behind the same endpoint, or its kube-system recreated. Writing the registered ID into it
 * would give a new cluster an old identity; writing a new one would change an ID KEP-2149 wants
 * immutable. Nothing is written until an operator decides.
 */
export class IdentityChangedError extends Error {
  override name = 'IdentityChangedError';
  constructor(cluster: string, stored: StoredIdentity, uid: string) {
    super(
      `kube-system UID is now ${uid}, registered ${stored.kubeSystemUid} (ID ${stored.clusterId}${stored.clusterSet ? `, member of ClusterSet "${stored.clusterSet}"` : ''}): the cluster was rebuilt or its kube-system recreated, and nothing is written until you decide. The same cluster: fleetscope claims accept-uid --cluster ${cluster} (keeps its ID and memberships). A new cluster: fleetscope cluster deregister --name ${cluster}, then register it (a new ID)`,
    );
  }
}

/**
 * The cluster's identity, created from its kube-system UID on first contact (or when the stored one
 * lacks the UID or kubeconfig). The UID is read at every check, and one that is not the identity's
 * stops the check (IdentityChangedError). A dry run of a new cluster only pretends, and writes nothing.
 */
async function identityOf(
  p: SyncPorts,
  api: ClusterClaimsApi,
  cluster: RegisteredCluster,
  stored: StoredIdentity | undefined,
  dryRun: boolean,
  result: SyncResult,
): Promise<StoredIdentity> {
  const uid = await api.kubeSystemUid();
  if (stored?.kubeSystemUid && stored.kubeSystemUid !== uid)
    throw new IdentityChangedError(cluster.name, stored, uid);
  if (stored?.kubeSystemUid && stored.kubeconfig) return stored;
  let identity: StoredIdentity;
  if (!dryRun || stored) {
    const ensured = await ensureIdentity(p, {
      cluster: cluster.name,
      kubeSystemUid: uid,
      kubeconfig: cluster.kubeconfig,
    });
    result.identityCreated = ensured.created;
    identity = ensured.identity;
  } else {
    identity = {
      cluster: cluster.name,
      clusterId: uid,
      idSource: 'kube-system-uid',
      kubeSystemUid: uid,
      version: 0,
      updatedAt: (p.now ? p.now() : new Date()).toISOString(),
    };
  }
  result.clusterId = identity.clusterId;
  return identity;
}

/**
 * Applies the desired claims; if the registry changed while we wrote, applies the newer state too (up to
 * MAX_ROUNDS). Returns the digest of the last state applied.
 */
async function converge(
  p: SyncPorts,
  api: ClusterClaimsApi,
  cluster: string,
  identity: StoredIdentity | undefined,
  dryRun: boolean,
  result: SyncResult,
): Promise<string> {
  let state = await desiredState(p, identity, cluster);
  for (let round = 1; ; round++) {
    result.clusterId = identity?.clusterId;
    if (identity?.clusterSet) result.clusterSet = identity.clusterSet;
    else delete result.clusterSet;
    const applied = await applyDesired(api, state, dryRun, result);
    if (!applied || dryRun) return state.digest;
    identity = await p.store.getIdentity(cluster);
    const after = await desiredState(p, identity, cluster);
    if (after.digest === state.digest || round >= MAX_ROUNDS) return state.digest;
    state = after;
  }
}

/** One round: ClusterProperty objects, then OCM ClusterClaims when mirrored. False when the CRD is missing. */
async function applyDesired(
  api: ClusterClaimsApi,
  { desired, settings }: DesiredState,
  dryRun: boolean,
  result: SyncResult,
): Promise<boolean> {
  const props = await api.clusterProperties(settings.createCrd);
  result.crd = props.crd;
  if (!props.objects) {
    result.state = 'crd-missing';
    result.error = `the ClusterProperty CRD (clusterproperties.about.k8s.io) is not installed and creating it is not allowed (claims config --create-crd on)`;
    return false;
  }
  const observed: ObservedClaim[] = await props.objects.list();
  const ops = planSync(desired, observed);
  await applyAll(props.objects, ops, dryRun);
  result.ops.push(...ops);

  if (settings.ocm !== 'auto') {
    result.ocm = 'off';
    return true;
  }
  const ocm = await api.ocmClusterClaims();
  result.ocm = ocm ? 'mirrored' : 'absent';
  if (ocm) {
    const ocmOps = planSync(ocmDesired(desired, result.warnings), await ocm.list());
    await applyAll(ocm, ocmOps, dryRun);
    result.ocmOps.push(...ocmOps);
  }
  return true;
}

/** The sync status for `claims status` and the next drift check, and the drift event when claims were repaired. */
async function recordSync(
  p: SyncPorts,
  result: SyncResult,
  digest: string | undefined,
  previous: SyncStatus | undefined,
): Promise<void> {
  const now = p.now ? p.now() : new Date();
  const ok = result.state === 'in-sync' || result.state === 'repaired';
  const { warnings } = result;
  await p.store.putSyncStatus({
    cluster: result.cluster,
    state: result.state,
    at: now.toISOString(),
    // The digest records what was last applied: kept from before when this sync did not apply.
    ...(ok && digest ? { digest } : previous?.digest ? { digest: previous.digest } : {}),
    ...(result.error ? { error: result.error } : {}),
    ocm: result.ocm,
    ...(warnings.length ? { warnings } : {}),
    ...(result.ops.length + result.ocmOps.length
      ? {
          writes: [
            ...result.ops.map(describeOp),
            ...result.ocmOps.map((o) => `${describeOp(o)} (OCM ClusterClaim)`),
          ].slice(0, 20),
        }
      : {}),
  });
  if (result.drift) await publishDrift(p, result, now);
}

async function publishDrift(p: SyncPorts, r: SyncResult, at: Date): Promise<void> {
  const changes = [...opChanges(r.ops, 'ClusterProperty'), ...opChanges(r.ocmOps, 'ClusterClaim')];
  try {
    await p.publisher.publish(
      claimsChangedEvents({
        cluster: r.cluster,
        ...(r.clusterId ? { clusterId: r.clusterId } : {}),
        ...(r.clusterSet ? { clusterSet: r.clusterSet } : {}),
        origin: 'cluster',
        reason: 'drift',
        changes,
        at,
      }),
    );
  } catch (err) {
    p.warn?.(`could not publish the drift repair of ${r.cluster}: ${(err as Error).message}`);
  }
}

/**
 * Removes what must not outlive a membership from a cluster that is being deregistered: its
 * clusterset.k8s.io claim (ClusterProperty and OCM ClusterClaim). The ID claims stay: KEP-2149 wants the
 * ID to exist for the cluster's whole life, with or without fleetscope.
 */
export async function removeMembershipClaim(api: ClusterClaimsApi): Promise<SyncOp[]> {
  const done: SyncOp[] = [];
  const props = await api.clusterProperties(false);
  const targets = [props.objects, await api.ocmClusterClaims()].filter((t): t is ClaimObjects => !!t);
  for (const t of targets) {
    const ops = planSync(
      new Map(),
      (await t.list()).filter((o) => o.name === 'clusterset.k8s.io'),
    );
    await applyAll(t, ops, false);
    done.push(...ops);
  }
  return done;
}
