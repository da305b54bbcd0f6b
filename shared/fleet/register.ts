import { type KubeconfigRef, secretNameOf } from '../k8s/kubeconfig-ref.js';
import type { EventPublisher } from '../platform/publisher.js';
import { clusterNameProblem, labelProblem, type RegisteredCluster } from './cluster.js';
import type { Registry } from './registry.js';

export class RegistrationError extends Error {
  override name = 'RegistrationError';
}

/** The name is taken: carries the registration that holds it, so the caller can say what to do. */
export class AlreadyRegisteredError extends RegistrationError {
  override name = 'AlreadyRegisteredError';
  constructor(readonly existing: RegisteredCluster) {
    super(`cluster "${existing.name}" is already registered`);
  }
}

export interface RegistrationPorts {
  store: Registry;
  publisher: EventPublisher;
  /**
   * Loads the kubeconfig and reaches the cluster; throws an error that says what is wrong. Returns the
   * cluster's kube-system UID, which tells whether it is already registered under another name.
   */
  verify: (name: string, ref: KubeconfigRef) => Promise<{ kubeSystemUid: string; clusterId?: string }>;
  /** Where a failed notification is reported: the registration itself stands. */
  warn?: (message: string) => void;
  /** The control plane that will act on the cluster (recorded as its owner). */
  owner?: string;
  /**
   * Takes the cluster's owner lease for this control plane (ownership.ts); returns why not when another
   * live control plane holds it. Absent: the cluster is not asked.
   */
  holdOwner?: (name: string, ref: KubeconfigRef) => Promise<string | undefined>;
  /**
   * The registered cluster whose ID (id.k8s.io) is `id`, when it is not a kube-system UID (an
   * operator's ID): the claims store knows it, the registry does not.
   */
  idHolder?: (id: string) => Promise<string | undefined>;
  /**
   * Runs once the registration is written and before it is announced (adoption: the identity the
   * cluster carries is taken over here). A throw undoes the registration.
   */
  prepare?: (cluster: RegisteredCluster) => Promise<void>;
}

/**
 * Registers a cluster: every check runs before the single conditional write, so invalid input, an
 * unreadable kubeconfig or an unreachable cluster leave nothing behind.
 */
export async function registerCluster(
  input: { name: string; kubeconfig: KubeconfigRef; labels?: Record<string, string> },
  ports: RegistrationPorts,
  now = new Date(),
): Promise<RegisteredCluster> {
  const nameProblem = clusterNameProblem(input.name);
  if (nameProblem) throw new RegistrationError(nameProblem);
  const labels = input.labels ?? {};
  for (const [k, v] of Object.entries(labels)) {
    const problem = labelProblem(k, v);
    if (problem) throw new RegistrationError(problem);
  }
  const existing = await ports.store.get(input.name);
  if (existing) throw new AlreadyRegisteredError(existing);
  const { kubeSystemUid, clusterId } = await ports.verify(input.name, input.kubeconfig);
  await refuseSecondIdentity(ports, input.name, kubeSystemUid, clusterId);
  await refuseRebuiltBehindKubeconfig(ports.store, input.name, input.kubeconfig, kubeSystemUid);
  const refused = await ports.holdOwner?.(input.name, input.kubeconfig);
  if (refused) throw new RegistrationError(refused);
  const cluster: RegisteredCluster = {
    name: input.name,
    kubeconfig: input.kubeconfig,
    labels,
    registeredAt: now.toISOString(),
    kubeSystemUid,
    ...(ports.owner ? { owner: ports.owner } : {}),
  };
  // Guard first, then the registration: a crash between the two leaves a guard whose holder is not
  // registered, which the next registration of that cluster takes over.
  await takeUidGuard(ports.store, kubeSystemUid, input.name);
  try {
    await ports.store.add(cluster);
  } catch (err) {
    await ports.store.releaseUid(kubeSystemUid, input.name);
    throw err;
  }
  if (ports.prepare) {
    try {
      await ports.prepare(cluster);
    } catch (err) {
      await ports.store.remove(input.name);
      throw err;
    }
  }
  await notify(ports, {
    detailType: 'ClusterRegistered',
    detail: { cluster: cluster.name, labels, registeredAt: cluster.registeredAt },
    resources: [`cluster/${cluster.name}`],
  });
  return cluster;
}

/**
 * A cluster rebuilt behind the same endpoint, or whose kube-system was recreated, has a new kube-system
 * UID but still carries the `id.k8s.io` of its registration: registering it again would give it a
 * second identity (two registrations writing two IDs in turn, KEP-2149's immutable ID flipping). The
 * operator decides which registration the cluster is.
 */
async function refuseSecondIdentity(
  ports: Pick<RegistrationPorts, 'store' | 'idHolder'>,
  name: string,
  uid: string,
  carried: string | undefined,
): Promise<void> {
  if (!carried || carried === uid) return;
  const { store } = ports;
  const holder = (await store.uidHolder(carried)) ?? (await ports.idHolder?.(carried));
  if (!holder || holder === name || !(await store.get(holder))) return;
  throw new RegistrationError(
    `this cluster carries id.k8s.io ${carried}, the ID of cluster "${holder}" as registered, but its kube-system UID is now ${uid} (kube-system recreated, or the cluster rebuilt behind the same endpoint): one cluster keeps one identity. If it is still "${holder}", keep that registration (fleetscope claims accept-uid --cluster ${holder}: its ID stays ${carried}); if it is a new cluster, deregister "${holder}" first (fleetscope cluster deregister --name ${holder}), then register it`,
  );
}

/**
 * A cluster rebuilt from scratch behind the same endpoint (a new etcd: a new kube-system UID, and no
 * id.k8s.io left in it for refuseSecondIdentity to find) is still what the kubeconfig of its
 * registration reaches: a second registration through that same kubeconfig would give the one cluster
 * two identities. The operator decides which registration it is, as above. (The same UID is the UID
 * guard's to refuse, with its own message.)
 */
async function refuseRebuiltBehindKubeconfig(
  store: Registry,
  name: string,
  ref: KubeconfigRef,
  uid: string,
): Promise<void> {
  const holder = (await store.list()).find(
    (c) => c.name !== name && c.kubeSystemUid !== uid && sameKubeconfig(c.kubeconfig, ref),
  );
  if (!holder) return;
  throw new RegistrationError(
    `this kubeconfig is the one cluster "${holder.name}" is registered with, but the cluster it reaches has kube-system UID ${uid}, registered ${holder.kubeSystemUid ?? 'unknown'} (the cluster rebuilt behind the same endpoint): one cluster keeps one identity. If it is still "${holder.name}", keep that registration (fleetscope claims accept-uid --cluster ${holder.name}: its ID stays); if it is a new cluster, deregister "${holder.name}" first (fleetscope cluster deregister --name ${holder.name}), then register it`,
  );
}

/** The same kubeconfig and context (the role fleetscope assumes does not change which cluster it is). */
function sameKubeconfig(a: KubeconfigRef, b: KubeconfigRef): boolean {
  if (a.context !== b.context) return false;
  if (a.kind === 'file' && b.kind === 'file') return a.path === b.path;
  if (a.kind === 'secret' && b.kind === 'secret')
    return secretNameOf(a.secretId) === secretNameOf(b.secretId);
  return false;
}

async function takeUidGuard(store: Registry, uid: string, name: string): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const holder = await store.uidHolder(uid);
    if (holder && holder !== name && (await store.get(holder))) {
      throw new RegistrationError(
        `this kubeconfig reaches the cluster already registered as "${holder}" (same kube-system UID ${uid}); one cluster is registered once`,
      );
    }
    const stale = holder && holder !== name ? holder : undefined;
    if (await store.claimUid(uid, name, stale)) return;
  }
  throw new RegistrationError(
    `cluster with kube-system UID ${uid} is being registered concurrently; try again`,
  );
}

export async function deregisterCluster(
  name: string,
  ports: Omit<RegistrationPorts, 'verify'>,
  now = new Date(),
) {
  await ports.store.remove(name);
  await notify(ports, {
    detailType: 'ClusterDeregistered',
    detail: { cluster: name, deregisteredAt: now.toISOString() },
    resources: [`cluster/${name}`],
  });
}

// The registry is the source of truth and the next scheduled cycle picks the cluster up anyway, so a
// lost notification is reported rather than undoing a registration that succeeded.
async function notify(
  ports: Omit<RegistrationPorts, 'verify'>,
  event: Parameters<EventPublisher['publish']>[0][0],
) {
  try {
    await ports.publisher.publish([event]);
  } catch (err) {
    ports.warn?.(
      `could not publish ${event.detailType}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
