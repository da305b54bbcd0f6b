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

function failureState(err: unknown): { state: 'unreachable' | 'error'; retryable: boolean } {
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

async function desiredState(p: SyncPorts, identity: StoredIdentity | undefined, cluster: string) {
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
  const now = () => (p.now ? p.now() : new Date());
  const dryRun = opts.dryRun ?? false;
  const warnings: string[] = [];
  const previous = await p.store.getSyncStatus(cluster.name);
  let identity = await p.store.getIdentity(cluster.name);
  const result: SyncResult = {
    cluster: cluster.name,
    ...(identity ? { clusterId: identity.clusterId } : {}),
    ...(identity?.clusterSet ? { clusterSet: identity.clusterSet } : {}),
    state: 'in-sync',
    ops: [],
    ocmOps: [],
    drift: false,
    ocm: 'off',
    warnings,
  };
  let settings: ClaimsSettings | undefined;
  let digest: string | undefined;
  try {
    const api = await p.connect(cluster);
    if (!identity?.kubeSystemUid || !identity.kubeconfig) {
      const priorUid = identity?.kubeSystemUid;
      const uid = await api.kubeSystemUid();
      if (!dryRun || identity) {
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
          updatedAt: now().toISOString(),
        };
      }
      result.clusterId = identity.clusterId;
      if (priorUid && priorUid !== uid)
        warnings.push(
          `kube-system UID is now ${uid}, was ${priorUid} (ID ${identity.clusterId}): is this still the same cluster?`,
        );
    }
    let state = await desiredState(p, identity, cluster.name);
    for (let round = 1; ; round++) {
      settings = state.settings;
      digest = state.digest;
      result.clusterId = identity?.clusterId;
      if (identity?.clusterSet) result.clusterSet = identity.clusterSet;
      else delete result.clusterSet;

      const props = await api.clusterProperties(settings.createCrd);
      result.crd = props.crd;
      if (!props.objects) {
        result.state = 'crd-missing';
        result.error = `the ClusterProperty CRD (clusterproperties.about.k8s.io) is not installed and creating it is not allowed (claims config --create-crd on)`;
        break;
      }
      const observed: ObservedClaim[] = await props.objects.list();
      const ops = planSync(state.desired, observed);
      await applyAll(props.objects, ops, dryRun);
      result.ops.push(...ops);

      if (settings.ocm === 'auto') {
        const ocm = await api.ocmClusterClaims();
        result.ocm = ocm ? 'mirrored' : 'absent';
        if (ocm) {
          const ocmOps = planSync(ocmDesired(state.desired, warnings), await ocm.list());
          await applyAll(ocm, ocmOps, dryRun);
          result.ocmOps.push(...ocmOps);
        }
      } else result.ocm = 'off';

      // Converge: if the registry changed while we wrote, apply the newer state too.
      if (dryRun) break;
      identity = await p.store.getIdentity(cluster.name);
      const after = await desiredState(p, identity, cluster.name);
      if (after.digest === digest || round >= MAX_ROUNDS) break;
      state = after;
    }
    const wrote = result.ops.length + result.ocmOps.length > 0;
    result.drift = wrote && previous?.digest === digest && result.state !== 'crd-missing';
    if (result.state === 'in-sync' && result.drift) result.state = 'repaired';
  } catch (err) {
    const f = failureState(err);
    result.state = f.state;
    result.retryable = f.retryable;
    result.error = err instanceof Error ? err.message : String(err);
  }

  if (!dryRun) {
    const ok = result.state === 'in-sync' || result.state === 'repaired';
    await p.store.putSyncStatus({
      cluster: cluster.name,
      state: result.state,
      at: now().toISOString(),
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
    if (result.drift) {
      await publishDrift(p, result, now());
    }
  }
  return result;
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
