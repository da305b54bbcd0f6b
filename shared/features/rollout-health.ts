/**
 * A cluster's health as a rollout judges it, from what fleetscope already stores about it: the
 * inventory's last status (none: not healthy) and node scope's last cycle (its errors, refused resizes,
 * and the nodes not Ready among those the cycle listed anyway: no extra read of the cluster). Read per
 * cluster of the current wave on each pass; a wave fails when a signal rises above what it was when
 * the wave started (./rollout.ts, unhealthy).
 */
import type { ClusterStatus } from '../fleet/cluster.js';
import type { ClusterRecord } from '../nodescope/store.js';
import type { Health } from './rollout.js';

export interface HealthSources {
  getStatus(cluster: string): Promise<ClusterStatus | undefined>;
  /** Node scope's per-cluster record (its last cycle), when the capability runs there. */
  getCluster(cluster: string): Promise<Pick<ClusterRecord, 'lastCycle'> | undefined>;
}

export function clusterHealth(sources: HealthSources): (cluster: string) => Promise<Health> {
  return async (cluster) => {
    const [status, nodescope] = await Promise.all([sources.getStatus(cluster), sources.getCluster(cluster)]);
    const cycle = nodescope?.lastCycle;
    return {
      inventory: status !== undefined,
      reachable: status?.reachable ?? false,
      ...(cycle ? { cycleErrors: cycle.errors.length, refusedResizes: cycle.resizes.refused } : {}),
      ...(cycle?.notReadyNodes !== undefined ? { notReadyNodes: cycle.notReadyNodes } : {}),
    };
  };
}
