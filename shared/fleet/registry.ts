/**
 * The cluster registry, in the fleet's terms (the port): registrations, the one-name-per-kube-system-UID
 * guard, ownership between control planes, and each cluster's last inventory. A refused condition is the
 * port's outcome (false, ClusterExistsError, ClusterNotFoundError); registry-dynamo.ts is its DynamoDB
 * adapter.
 */
import type { ClusterStatus, RegisteredCluster } from './cluster.js';

export class ClusterExistsError extends Error {
  override name = 'ClusterExistsError';
}
export class ClusterNotFoundError extends Error {
  override name = 'ClusterNotFoundError';
}

export interface Registry {
  /** Adds a cluster; refuses (ClusterExistsError, nothing written) when the name is taken. */
  add(cluster: RegisteredCluster): Promise<void>;
  /** The name a kube-system UID is registered under, per its guard (which may be stale: check it). */
  uidHolder(uid: string): Promise<string | undefined>;
  /**
   * Takes the UID's guard for `name`. `staleHolder` is the holder seen before, whose registration is
   * gone: the guard is taken over only if it still names that holder. False when someone else holds it.
   */
  claimUid(uid: string, name: string, staleHolder?: string): Promise<boolean>;
  /** Releases the UID's guard if `name` still holds it. */
  releaseUid(uid: string, name: string): Promise<void>;
  /** Points a registration at another kubeconfig (same cluster, e.g. the simulator restarted elsewhere). */
  updateKubeconfig(name: string, kubeconfig: RegisteredCluster['kubeconfig']): Promise<void>;
  get(name: string): Promise<RegisteredCluster | undefined>;
  /** Every registered cluster, in name order. */
  list(): Promise<RegisteredCluster[]>;
  /** The registered clusters a page at a time, in name order. */
  pages(): AsyncGenerator<RegisteredCluster[]>;
  /** Hands a cluster to another control plane only while its owner is still `from`; false if not. */
  transferOwner(name: string, from: string | undefined, to: string): Promise<boolean>;
  /** Moves the kube-system UID a registration is judged by from `from` to `to`; false if refused. */
  replaceUid(name: string, from: string, to: string): Promise<boolean>;
  /** Marks the registration as being deregistered (idempotent); false if not registered. */
  markDeregistering(name: string, at: string): Promise<boolean>;
  /** Another control plane holds the cluster's owner Lease (`holder`), or (undefined) this one again. */
  recordOwnedElsewhere(name: string, holder: string | undefined, at: string): Promise<boolean>;
  /** Removes a registration (and its UID guard); ClusterNotFoundError when it is not registered. */
  remove(name: string): Promise<void>;
  /** Records an inventory only if it is newer than the stored one; false if it was not. */
  putStatus(status: ClusterStatus): Promise<boolean>;
  getStatus(name: string): Promise<ClusterStatus | undefined>;
  /** The last inventory of many clusters. */
  statuses(names: string[]): Promise<Map<string, ClusterStatus>>;
}
