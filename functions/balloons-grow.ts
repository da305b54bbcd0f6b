import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { BALLOONS, balloonEvents, balloonMetrics } from '../shared/balloons/events.js';
import { serveDemand } from '../shared/balloons/grow.js';
import { balloonSettingsFromEnv } from '../shared/balloons/settings.js';
import { DynamoBalloonStore } from '../shared/balloons/store-dynamo.js';
import { gate } from '../shared/features/gate.js';
import { workerGatePorts } from '../shared/features/gate-dynamo.js';
import { clusterAccess, describeAccessError } from '../shared/fleet/cluster-access.js';
import { ownerRefusal } from '../shared/fleet/owner-lease.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { eventHandler } from '../shared/handlers.js';
import { nodescopeClock } from '../shared/nodescope/clock.js';
import { addMetrics } from '../shared/platform/observability.js';

/**
 * Event-triggered, every minute per cluster (ClusterWorkRequested for "balloons"): grow on demand. A
 * light read finds pods Pending for resources and Deferred resizes; when there are any, the balloons
 * are sized at once (shared/balloons/grow.ts). A cluster that cannot be reached is reported, not
 * thrown: the next minute tries again.
 */
export const handler = eventHandler({
  functionId: 'balloons-grow',
  detailTypes: ['ClusterWorkRequested'],
  run: async (event, { deps, logger, metrics }) => {
    const { cluster: name, capability, requestedAt } = event.detail;
    if (capability !== BALLOONS) return { cluster: name, skipped: `capability ${capability}` };
    const cluster = await new DynamoRegistry(deps.db, deps.config.table).get(name);
    if (!cluster) return { cluster: name, skipped: 'not registered' };
    const feature = await gate(
      workerGatePorts(deps, logger.warn.bind(logger)),
      name,
      BALLOONS,
      'balloons/grow',
    );
    if (!feature.allowed) return { cluster: name, off: feature.state };
    try {
      const client = await clusterAccess().client(cluster.name, cluster.kubeconfig);
      // A cluster another control plane owns (its owner lease) is left alone, as the cycle does.
      const refused = await ownerRefusal(name, client, nodescopeClock()());
      if (refused) return { cluster: name, skipped: refused };
      const r = await serveDemand({
        cluster: name,
        client,
        store: new DynamoBalloonStore(deps.db, deps.config.table),
        settings: balloonSettingsFromEnv(),
        now: nodescopeClock(),
        passId: requestedAt,
      });
      for (const result of r.results) {
        await deps.publisher.publish(balloonEvents(result, `grow/${requestedAt}`, client.stats().requests));
        addMetrics(metrics, balloonMetrics(result));
      }
      if (r.demand) {
        metrics.addMetric('BalloonGrowPending', MetricUnit.Count, r.demand.pending.length);
        metrics.addMetric('BalloonGrowDeferred', MetricUnit.Count, r.demand.deferred.length);
      }
      logger.info('balloons grow pass', {
        configured: r.configured,
        demand: r.demand,
        served: r.results.length,
      });
      return { cluster: name, configured: r.configured, served: r.results.length };
    } catch (err) {
      const error = describeAccessError(err);
      logger.warn('balloons grow pass failed', { error });
      metrics.addMetric('BalloonGrowFailed', MetricUnit.Count, 1);
      return { cluster: name, error };
    }
  },
});
