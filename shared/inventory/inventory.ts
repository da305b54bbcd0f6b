import type { ClusterStatus } from '../fleet/cluster.js';

/** What inventory needs of a cluster: four reads, each one API request (nodes: one per list page). */
export interface InventoryAccess {
  serverVersion(): Promise<string>;
  kubeSystemUid(): Promise<string>;
  countNodes(): Promise<number>;
  metricsApi(): Promise<'available' | 'absent' | 'unavailable'>;
}

/**
 * Inventories one cluster. An unreachable cluster is a result, not a failure: it is recorded as such
 * (with the reason) so the fleet summary shows it and the other clusters go on.
 */
export async function inventoryCluster(
  cluster: string,
  /** Opens the cluster; inside the try, so a bad kubeconfig is recorded like an unreachable cluster. */
  open: () => Promise<InventoryAccess>,
  now: Date,
  describeError: (err: unknown) => string,
): Promise<ClusterStatus> {
  const observedAt = now.toISOString();
  try {
    const access = await open();
    const serverVersion = await access.serverVersion();
    const [kubeSystemUid, nodeCount, metricsApi] = await Promise.all([
      access.kubeSystemUid(),
      access.countNodes(),
      access.metricsApi(),
    ]);
    return { cluster, reachable: true, serverVersion, kubeSystemUid, nodeCount, metricsApi, observedAt };
  } catch (err) {
    return { cluster, reachable: false, metricsApi: 'unknown', error: describeError(err), observedAt };
  }
}
