import type { EventPublisher, OutgoingEvent } from '../platform/publisher.js';
import { ownedBy, type RegisteredCluster } from './cluster.js';

/**
 * One work request per registered cluster for a capability's cycle. The cycle id is stable for the
 * schedule's tick, so a retried dispatch produces the same requests and workers can dedupe on it.
 * A follow between cycles is its own detail-type (ClusterFollowRequested), with its own rule: no
 * worker, of this version or one from before the follow, can take it for a cycle.
 */
export function workRequests(
  capability: string,
  clusters: RegisteredCluster[],
  now: Date,
  follow = false,
): (OutgoingEvent<'ClusterWorkRequested'> | OutgoingEvent<'ClusterFollowRequested'>)[] {
  const requestedAt = now.toISOString();
  return clusters.map((c) => ({
    ...(follow
      ? {
          detailType: 'ClusterFollowRequested' as const,
          detail: { cluster: c.name, capability, requestedAt },
        }
      : {
          detailType: 'ClusterWorkRequested' as const,
          detail: { cluster: c.name, capability, cycleId: `${capability}/${requestedAt}`, requestedAt },
        }),
    resources: [`cluster/${c.name}`],
  }));
}

export interface DispatchResult {
  dispatched: number;
  /** Registered clusters another control plane owns (not ours to act on). */
  ownedElsewhere: number;
  pages: number;
}

/**
 * Fans a capability's cycle out page by page: each registry page's requests are published (in parallel
 * batches of 10) while the next page is read, so memory and time stay flat at thousands of clusters.
 */
export async function dispatchCycle(
  capability: string,
  registry: { pages(): AsyncIterable<RegisteredCluster[]> },
  publisher: EventPublisher,
  controlPlane: string,
  now = new Date(),
  follow = false,
): Promise<DispatchResult> {
  const result: DispatchResult = { dispatched: 0, ownedElsewhere: 0, pages: 0 };
  let publishing: Promise<void> = Promise.resolve();
  for await (const page of registry.pages()) {
    result.pages++;
    // A cluster being deregistered is left to its deregistration (cli/commands/cluster-deregister.ts).
    const live = page.filter((c) => !c.deregistering);
    const mine = live.filter((c) => ownedBy(c, controlPlane));
    result.ownedElsewhere += live.length - mine.length;
    result.dispatched += mine.length;
    await publishing;
    publishing = publisher.publish(workRequests(capability, mine, now, follow));
  }
  await publishing;
  return result;
}
