import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { BALLOONS, balloonMetrics } from '../shared/balloons/events.js';
import { parseResizeRequest, ResizeRequestError } from '../shared/balloons/requests.js';
import { serveResizeRequest } from '../shared/balloons/serve-request.js';
import { balloonSettingsFromEnv } from '../shared/balloons/settings.js';
import { DynamoBalloonStore } from '../shared/balloons/store-dynamo.js';
import { gate } from '../shared/features/gate.js';
import { workerGatePorts } from '../shared/features/gate-dynamo.js';
import { clusterAccess, describeAccessError } from '../shared/fleet/cluster-access.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { eventHandler } from '../shared/handlers.js';
import { nodescopeClock } from '../shared/nodescope/clock.js';
import { addMetrics } from '../shared/platform/observability.js';

/**
 * Event-triggered: an explicit node size (NodeResizeRequested). Checked against the node (it exists, the
 * size is within its allocatable) before anything is stored; then that node's balloon is resized at
 * once, reading only that node and its pods. A refused request writes nothing and says why.
 */
export const handler = eventHandler({
  functionId: 'balloons',
  detailTypes: ['NodeResizeRequested'],
  run: async (event, { deps, logger, metrics }) => {
    const d = event.detail;
    const cluster = await new DynamoRegistry(deps.db, deps.config.table).get(d.cluster);
    const refuse = (why: string) => {
      logger.warn('node resize request refused', { node: d.node, why });
      metrics.addMetric('BalloonRequestsRefused', MetricUnit.Count, 1);
      return { cluster: d.cluster, node: d.node, refused: why };
    };
    if (!cluster) return refuse(`cluster "${d.cluster}" is not registered`);
    const feature = await gate(
      workerGatePorts(deps, logger.warn.bind(logger)),
      cluster.name,
      BALLOONS,
      'balloons/request',
    );
    if (!feature.allowed)
      return refuse(`balloons are ${feature.state} in cluster "${cluster.name}" (fleetscope features get)`);
    try {
      const { node, size } = parseResizeRequest(d);
      const { result, events } = await serveResizeRequest({
        cluster: cluster.name,
        node,
        size,
        ...(d.requestedBy ? { requestedBy: d.requestedBy } : {}),
        requestedAt: d.requestedAt,
        client: await clusterAccess().client(cluster.name, cluster.kubeconfig),
        store: new DynamoBalloonStore(deps.db, deps.config.table),
        settings: balloonSettingsFromEnv(),
        now: nodescopeClock(),
      });
      await deps.publisher.publish(events);
      addMetrics(metrics, balloonMetrics(result));
      const decision = result.decisions.find((x) => x.node === node);
      logger.info('node resize request served', {
        node,
        resizeTo: decision?.resizeTo,
        blocked: decision?.state.blocked?.missing,
      });
      return { cluster: cluster.name, node, served: true, errors: result.errors };
    } catch (err) {
      if (err instanceof ResizeRequestError) return refuse(err.message);
      const error = describeAccessError(err);
      logger.warn('node resize request failed', { node: d.node, error });
      metrics.addMetric('BalloonRequestsFailed', MetricUnit.Count, 1);
      // Thrown so the bus retries it and, in the end, dead-letters it: a request must not vanish.
      throw err;
    }
  },
});
