import type { InventoryAccess } from '../inventory/inventory.js';
import type { ClusterClient } from '../k8s/client.js';
import { ClusterConnector } from '../k8s/connector.js';
import { ClusterAccessError } from '../k8s/errors.js';
import type { KubeconfigRef } from '../k8s/kubeconfig-ref.js';
import { redact } from '../k8s/redact.js';
import { AssumedRoles } from '../platform/assumed-roles.js';
import { readConfig } from '../platform/config.js';
import { EksTokenMinter } from '../platform/eks-token.js';
import { createKubeconfigSource } from './secrets-kubeconfig-source.js';

let shared: ClusterConnector | undefined;
let roles: AssumedRoles | undefined;

/** The STS adapter every cluster behind a role shares: one session per role per container. */
export function assumedRoles(): AssumedRoles {
  roles ??= new AssumedRoles();
  return roles;
}

/**
 * One connector per Lambda container (or CLI process): clients and kubeconfigs cached with a TTL, EKS
 * tokens minted with the function's own credentials or, for clusters behind a role, the role's.
 */
export function clusterConnector(): ClusterConnector {
  if (!shared) {
    const { secretPrefix, kubeconfigTtlSeconds } = readConfig();
    shared = new ClusterConnector({
      source: createKubeconfigSource({ ttlSeconds: kubeconfigTtlSeconds, secretPrefix }),
      secretPrefix,
      ttlSeconds: kubeconfigTtlSeconds,
      eksTokens: () => new EksTokenMinter({ roles: assumedRoles() }),
    });
  }
  return shared;
}

export async function resetClusterConnector(): Promise<void> {
  await shared?.close();
  shared = undefined;
  roles = undefined;
}

/** A safe, one-line description of why a cluster could not be reached or used. */
export function describeAccessError(err: unknown): string {
  if (err instanceof ClusterAccessError) return err.message;
  return redact(err instanceof Error ? err.message : String(err));
}

export function clusterAccess(connector = clusterConnector()) {
  return {
    /**
     * Loads the kubeconfig (validating the context) and reads the cluster's identity: its kube-system
     * UID, and the `id.k8s.io` ClusterProperty it already carries (a cluster keeps one ID: KEP-2149).
     */
    async verify(name: string, ref: KubeconfigRef): Promise<{ kubeSystemUid: string; clusterId?: string }> {
      const client = await connector.get(name, ref);
      const kubeSystemUid = await inventoryAccess(client).kubeSystemUid();
      const clusterId = await carriedClusterId(client);
      return { kubeSystemUid, ...(clusterId ? { clusterId } : {}) };
    },
    client: (name: string, ref: KubeconfigRef) => connector.get(name, ref),
  };
}

/** The value of the cluster's `id.k8s.io` ClusterProperty; undefined without one (or without the CRD). */
async function carriedClusterId(client: ClusterClient): Promise<string | undefined> {
  try {
    const o = (await client.call(
      'get clusterproperty id.k8s.io',
      () =>
        client.custom.getClusterCustomObject({
          group: 'about.k8s.io',
          version: 'v1alpha1',
          plural: 'clusterproperties',
          name: 'id.k8s.io',
        }),
      { expected: [404] },
    )) as { spec?: { value?: string } };
    return o.spec?.value || undefined;
  } catch (err) {
    if (err instanceof ClusterAccessError && (err.status === 404 || err.status === 403)) return undefined;
    throw err;
  }
}

/** Inventory reads over the cluster access layer: four requests, whatever the cluster's size. */
export function inventoryAccess(client: ClusterClient): InventoryAccess {
  return {
    serverVersion: async () => (await client.call('get version', () => client.version.getCode())).gitVersion,
    kubeSystemUid: async () => {
      const ns = await client.call('get namespace kube-system', () =>
        client.core.readNamespace({ name: 'kube-system' }),
      );
      if (!ns.metadata?.uid) throw new Error('namespace kube-system has no uid');
      return ns.metadata.uid;
    },
    // A one-item page carries remainingItemCount, so the count costs one request, not one per page.
    countNodes: async () => {
      const page = await client.call('count nodes', () => client.core.listNode({ limit: 1 }));
      const remaining = page.metadata?.remainingItemCount;
      if (remaining !== undefined) return page.items.length + Number(remaining);
      return (await client.listAll('list nodes', (p) => client.core.listNode(p))).length;
    },
    metricsApi: async () => {
      try {
        await client.call(
          'probe metrics API',
          () =>
            client.custom.listClusterCustomObject({
              group: 'metrics.k8s.io',
              version: 'v1beta1',
              plural: 'nodes',
              limit: 1,
            }),
          { retry: { maxAttempts: 1 } },
        );
        return 'available';
      } catch (err) {
        if (err instanceof ClusterAccessError && err.status === 404) return 'absent';
        if (err instanceof ClusterAccessError && err.status === 503) return 'unavailable';
        throw err;
      }
    },
  };
}
