import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { clusterAccess, describeAccessError } from '../shared/fleet/cluster-access.js';
import { RegistryStore } from '../shared/fleet/registry-store.js';
import { NODESCOPE } from '../shared/nodescope/capability.js';
import { nodescopeClock } from '../shared/nodescope/clock.js';
import { runCycle } from '../shared/nodescope/cycle.js';
import { settingsFromEnv } from '../shared/nodescope/settings.js';
import { NodeScopeStore } from '../shared/nodescope/store.js';
import { eventHandler } from '../shared/platform/handler.js';
import type { OutgoingEvent } from '../shared/platform/publisher.js';
import { resizeEventDetail, resizeMetricName } from '../shared/resize/index.js';

/**
 * Event-triggered: one nodescope cycle of one cluster (ClusterWorkRequested for "nodescope"). A cluster
 * that cannot be reached is recorded and reported, never thrown: the next cycle tries again, and the
 * rest of the fleet is not held up.
 */
export const handler = eventHandler({
  functionId: 'nodescope',
  detailTypes: ['ClusterWorkRequested'],
  run: async (event, { deps, logger, metrics }) => {
    const { cluster: name, capability, cycleId, requestedAt } = event.detail;
    if (capability !== NODESCOPE) return { cluster: name, skipped: `capability ${capability}` };
    const cluster = await new RegistryStore(deps.db, deps.config.table).get(name);
    if (!cluster) {
      logger.info('cluster is no longer registered; skipping');
      return { cluster: name, skipped: 'not registered' };
    }
    const store = new NodeScopeStore(deps.db, deps.config.table);
    let result: Awaited<ReturnType<typeof runCycle>>;
    try {
      const client = await clusterAccess().client(cluster.name, cluster.kubeconfig);
      result = await runCycle({
        cluster: cluster.name,
        cycleId,
        cycleKey: requestedAt,
        client,
        store,
        settings: settingsFromEnv(),
        now: nodescopeClock(),
        keepRecommendations: false,
        logger: { info: (m, f) => logger.info(m, f ?? {}), warn: (m, f) => logger.warn(m, f ?? {}) },
      });
    } catch (err) {
      const error = describeAccessError(err);
      logger.warn('nodescope cycle failed for the cluster', { error });
      metrics.addMetric('NodeScopeClustersFailed', MetricUnit.Count, 1);
      return { cluster: name, error };
    }
    const { detail } = result;
    const events: OutgoingEvent[] = [];
    for (const r of result.newlyRejected)
      events.push({
        detailType: 'NodeScopeTargetRejected',
        detail: {
          cluster: name,
          namespace: r.namespace,
          vpa: r.vpa,
          targetRef: r.targetRef,
          reason: r.reason.slice(0, 1024),
          at: detail.at,
        },
        resources: [`cluster/${name}`],
      });
    const counts = new Map<string, number>();
    for (const { report, owner } of result.resizeReports) {
      const e = resizeEventDetail(report, { cluster: name, source: NODESCOPE, owner });
      events.push({ ...e, resources: [`cluster/${name}`] } as OutgoingEvent);
      const metric = resizeMetricName(report);
      counts.set(metric, (counts.get(metric) ?? 0) + 1);
    }
    events.push({ detailType: 'NodeScopeCycleCompleted', detail, resources: [`cluster/${name}`] });
    await deps.publisher.publish(events);

    for (const [metric, n] of counts) metrics.addMetric(metric, MetricUnit.Count, n);
    metrics.addMetric('NodeScopeDaemonSets', MetricUnit.Count, detail.daemonSets);
    metrics.addMetric('NodeScopeScopes', MetricUnit.Count, detail.scopes);
    metrics.addMetric('NodeScopeFallbackNodes', MetricUnit.Count, detail.fallbackNodes);
    metrics.addMetric('NodeScopeSamples', MetricUnit.Count, detail.samples);
    metrics.addMetric('NodeScopeOoms', MetricUnit.Count, detail.ooms);
    metrics.addMetric('NodeScopeApiRequests', MetricUnit.Count, detail.apiRequests);
    metrics.addMetric('NodeScopeTargetsRejected', MetricUnit.Count, detail.rejectedTargets);
    if (detail.metricsApi === 'absent' || detail.metricsApi === 'unavailable')
      metrics.addMetric('NodeScopeMetricsUnavailable', MetricUnit.Count, 1);
    if (detail.errors.length > 0)
      metrics.addMetric('NodeScopeErrors', MetricUnit.Count, detail.errors.length);
    logger.info('nodescope cycle', {
      ...detail,
      reads: result.reads,
      writes: result.writes,
      store: { ...store.stats },
    });
    return detail;
  },
});
