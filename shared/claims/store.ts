/**
 * The claims' store, in the claims' terms (the port): identities, custom claims, the uniqueness guards
 * of (ClusterSet, ID), the last in-cluster sync and the settings. store-dynamo.ts is its DynamoDB adapter.
 */
import type { KubeconfigRef } from '../k8s/kubeconfig-ref.js';
import type { ClaimsSettings, ClusterIdentity } from './identity.js';

/** The identity as stored: plus a copy of the kubeconfig reference, to clean up after deregistration. */
export interface StoredIdentity extends ClusterIdentity {
  kubeconfig?: KubeconfigRef;
}

/** The uniqueness guard of one (ClusterSet, ID): whoever holds it may be that ID in that ClusterSet. */
export interface Guard {
  clusterSet: string;
  clusterId: string;
  cluster: string;
  /** The membership attempt that took it (the identity's pending token at the time). */
  token: string;
  acquiredAt: string;
}

/** What the last in-cluster sync found and did. */
export interface SyncStatus {
  cluster: string;
  /** identity-changed: the kube-system UID is not the registered one; nothing written (sync.ts). */
  state: 'in-sync' | 'repaired' | 'unreachable' | 'crd-missing' | 'error' | 'identity-changed';
  at: string;
  /** Digest of the desired claims that were applied (identity.desiredDigest). */
  digest?: string;
  error?: string;
  ocm?: 'mirrored' | 'absent' | 'off';
  warnings?: string[];
  /** What this sync wrote (at most 20 lines, e.g. "update id.k8s.io: "x" -> "y""). */
  writes?: string[];
}

export class VersionConflictError extends Error {
  override name = 'VersionConflictError';
}

export interface ClaimStore {
  getIdentity(cluster: string): Promise<StoredIdentity | undefined>;
  /** Every stored identity (eventually consistent: re-read with getIdentity before acting). */
  listIdentities(): Promise<StoredIdentity[]>;
  /**
   * Writes an identity. `expectedVersion` undefined: create, refused if one exists. Otherwise the stored
   * version must equal it (optimistic lock). Refused: VersionConflictError.
   */
  putIdentity(identity: StoredIdentity, expectedVersion?: number): Promise<void>;
  /** Refused (VersionConflictError) unless the stored version is `expectedVersion`. */
  deleteIdentity(cluster: string, expectedVersion: number): Promise<void>;
  /** The names of a cluster's custom claims, without reading their values. */
  customNames(cluster: string): Promise<string[]>;
  getCustom(cluster: string): Promise<Record<string, string>>;
  /** Sets one custom claim; returns the value it replaced. */
  putCustom(cluster: string, name: string, value: string, at: string): Promise<string | undefined>;
  /** Deletes one custom claim; returns the value it had (undefined: there was none). */
  deleteCustom(cluster: string, name: string): Promise<string | undefined>;
  getGuard(clusterSet: string, clusterId: string): Promise<Guard | undefined>;
  /**
   * Takes the guard of (ClusterSet, ID) for `guard.cluster`: succeeds when nobody holds it or the same
   * cluster already does (a resumed attempt); otherwise returns the holder and writes nothing.
   */
  acquireGuard(guard: Guard): Promise<{ ok: true } | { ok: false; holder?: Guard }>;
  /** Releases a guard only if still held by `cluster` (and taken with `token`, when given); false if not. */
  releaseGuard(
    clusterSet: string,
    clusterId: string,
    expect: { cluster: string; token?: string },
  ): Promise<boolean>;
  listGuards(): Promise<Guard[]>;
  /** The guards of one ClusterSet (its members' IDs, and IDs being taken by a join in progress). */
  guardsOf(clusterSet: string): Promise<Guard[]>;
  /** Many clusters' last syncs. */
  syncStatuses(clusters: string[]): Promise<Map<string, SyncStatus>>;
  getSyncStatus(cluster: string): Promise<SyncStatus | undefined>;
  /** Records a sync result unless a newer one is already stored. */
  putSyncStatus(status: SyncStatus): Promise<void>;
  /** Removes a cluster's custom claims, sync status and settings (the identity goes by deleteIdentity). */
  deleteClusterItems(cluster: string): Promise<void>;
  /** Fleet-wide settings, or one cluster's overrides; what is stored, without defaults. */
  getStoredSettings(cluster?: string): Promise<Partial<ClaimsSettings>>;
  /** Defaults, overridden by the fleet's settings, overridden by the cluster's. */
  settingsFor(cluster?: string): Promise<ClaimsSettings>;
  putSettings(settings: Partial<ClaimsSettings>, cluster?: string): Promise<void>;
}
