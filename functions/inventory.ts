import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { clusterAccess, describeAccessError, inventoryAccess } from '../shared/fleet/cluster-access.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { eventHandler } from '../shared/handlers.js';
import { inventoryCluster } from '../shared/inventory/inventory.js';

/** Event-triggered: inventory one cluster (on registration, and on each scheduled cycle). */
export const handler = eventHandler({
  functionId: 'inventory',
  detailTypes: ['ClusterWorkRequested', 'ClusterRegistered'],
  run: async (event, { deps, logger, metrics }) => {
    const registry = new DynamoRegistry(deps.db, deps.config.table);
    const cluster = await registry.get(event.detail.cluster);
    if (!cluster) {
      // Deregistered after the event was sent: nothing to do, and not an error worth a retry.
      logger.info('cluster is no longer registered; skipping');
      return { skipped: true };
    }
    const status = await inventoryCluster(
      cluster.name,
      async () => inventoryAccess(await clusterAccess().client(cluster.name, cluster.kubeconfig)),
      new Date(),
      describeAccessError,
    );
    await registry.putStatus(status);
    await deps.publisher.publish([
      { detailType: 'ClusterInventoried', detail: status, resources: [`cluster/${cluster.name}`] },
    ]);
    metrics.addMetric(status.reachable ? 'ClustersInventoried' : 'ClustersUnreachable', MetricUnit.Count, 1);
    if (status.reachable) logger.info('inventoried', { ...status });
    else logger.warn('cluster unreachable', { error: status.error });
    return status;
  },
});
