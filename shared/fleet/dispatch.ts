import type { OutgoingEvent } from '../platform/publisher.js';
import type { RegisteredCluster } from './cluster.js';

/**
 * One work request per registered cluster for a capability's cycle. The cycle id is stable for the
 * schedule's tick, so a retried dispatch produces the same requests and workers can dedupe on it.
 */
export function workRequests(
  capability: string,
  clusters: RegisteredCluster[],
  now: Date,
): OutgoingEvent<'ClusterWorkRequested'>[] {
  const requestedAt = now.toISOString();
  const cycleId = `${capability}/${requestedAt}`;
  return clusters.map((c) => ({
    detailType: 'ClusterWorkRequested' as const,
    detail: { cluster: c.name, capability, cycleId, requestedAt },
    resources: [`cluster/${c.name}`],
  }));
}
