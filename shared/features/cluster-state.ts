/**
 * What capabilities keep about a cluster under a key prefix (node scope's windows, balloons' state ...),
 * as a feature's clear-state task removes it and the dangling check finds it left. A port: the features
 * know the prefixes their declarations name, never how a store keeps the items. Adapters:
 * ./cluster-state-dynamo.ts (the fleetscope table), ./cluster-state-memory.ts (in process, unit tests).
 */
export interface ClusterState {
  /** How many of the cluster's items under `prefix` are left (those kept on request not counted). */
  left(cluster: string, prefix: string): Promise<number>;
  /**
   * Deletes the cluster's items under `prefix`; with `keepUntil`, keeps those not kept yet until then
   * instead (removed by the store after it). Calls `wrote` once per item written.
   */
  clear(cluster: string, prefix: string, keepUntil: number | undefined, wrote: () => void): Promise<void>;
}
