import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { BALLOONS } from '../shared/balloons/events.js';
import { balloonSettingsFromEnv } from '../shared/balloons/settings.js';
import { DynamoBalloonStore } from '../shared/balloons/store-dynamo.js';
import { CYCLE } from '../shared/cycle/capability.js';
import { type ClusterCycleResult, keptScope, runClusterCycle } from '../shared/cycle/cluster-cycle.js';
import { followCluster, UNREAD_AFTER_MS } from '../shared/cycle/follow.js';
import { clusterPrefix, KeptLists } from '../shared/cycle/kept-lists.js';
import { gate } from '../shared/features/gate.js';
import { workerGatePorts } from '../shared/features/gate-dynamo.js';
import type { FeatureState } from '../shared/features/model.js';
import { clusterAccess, describeAccessError } from '../shared/fleet/cluster-access.js';
import { ownerRefusal } from '../shared/fleet/owner-lease.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { eventHandler } from '../shared/handlers.js';
import { RawReader } from '../shared/k8s/raw-reader.js';
import { NODESCOPE } from '../shared/nodescope/capability.js';
import { nodescopeClock } from '../shared/nodescope/clock.js';
import { DEFAULT_SETTINGS, settingsFromEnv } from '../shared/nodescope/settings.js';
import { DynamoNodeScopeStore } from '../shared/nodescope/store-dynamo.js';
import type { Deps } from '../shared/platform/deps.js';
import type { Detail } from '../shared/platform/events.js';
import { addMetrics } from '../shared/platform/observability.js';

/**
 * The clusters' large lists kept from one invocation to the next while this Lambda instance stays warm
 * (module state); a cold instance, or one that served other clusters meanwhile, lists in full.
 */
const kept = new KeptLists();

/** The phases left out of this cycle, with their feature's state. */
type PhasesOff = { nodescope?: FeatureState | 'unannounced'; balloons?: FeatureState | 'unannounced' };

/**
 * Event-triggered: one cycle of one cluster (ClusterWorkRequested for "cycle"): node scope, then
 * balloons, over one snapshot of the cluster; or a follow between cycles (ClusterFollowRequested). A cluster that cannot be reached is recorded and reported,
 * never thrown: the next cycle tries again, and the rest of the fleet is not held up.
 */
export const handler = eventHandler({
  functionId: CYCLE,
  detailTypes: ['ClusterWorkRequested', 'ClusterFollowRequested'],
  run: async (event, { deps, logger, metrics }) => {
    const { cluster: name, capability } = event.detail;
    if (capability !== CYCLE) return { cluster: name, skipped: `capability ${capability}` };
    if (event['detail-type'] === 'ClusterFollowRequested') return follow(name, deps, logger);
    // BusEvent does not narrow its detail by detail-type: the follow's went above.
    const { cycleId, requestedAt } = event.detail as Detail<'ClusterWorkRequested'>;
    const cluster = await new DynamoRegistry(deps.db, deps.config.table).get(name);
    if (!cluster) {
      logger.info('cluster is no longer registered; skipping');
      kept.forget(clusterPrefix(name));
      return { cluster: name, skipped: 'not registered' };
    }
    const nodescopeSettings = { ...DEFAULT_SETTINGS, ...settingsFromEnv() };
    // The client flow (KEP-3920): each capability acts only as its feature's state allows, and says so.
    const ports = workerGatePorts(deps, logger.warn.bind(logger));
    const [nsGate, blGate] = await Promise.all([
      gate(ports, name, NODESCOPE, 'cycle/nodescope'),
      gate(ports, name, BALLOONS, 'cycle/balloons'),
    ]);
    const off: PhasesOff = {
      ...(nsGate.allowed ? {} : { nodescope: nsGate.state }),
      ...(blGate.allowed ? {} : { balloons: blGate.state }),
    };
    if (!nsGate.allowed && !blGate.allowed) {
      // No phase reads the cluster: nothing to keep for it, so nothing for a follow to take up.
      kept.forget(clusterPrefix(name));
      return { cluster: name, off };
    }
    try {
      const client = await clusterAccess().client(cluster.name, cluster.kubeconfig);
      // Each cycle renews this control plane's owner lease; a cluster another one owns is left alone.
      const refused = await ownerRefusal(name, client, nodescopeClock()());
      if (refused) {
        kept.forget(clusterPrefix(name));
        logger.warn('cluster owned by another control plane: nothing written', { refused });
        return { cluster: name, skipped: refused };
      }
      const cycle = await runClusterCycle({
        cluster: name,
        cycleId,
        cycleKey: requestedAt,
        client,
        nodescopeStore: new DynamoNodeScopeStore(deps.db, deps.config.table),
        balloonStore: new DynamoBalloonStore(deps.db, deps.config.table),
        pageSize: nodescopeSettings.pageSize,
        ...(nsGate.allowed ? { nodescope: nodescopeSettings } : {}),
        ...(blGate.allowed ? { balloons: balloonSettingsFromEnv() } : {}),
        now: nodescopeClock(),
        kept,
        logger: { info: (m, f) => logger.info(m, f ?? {}), warn: (m, f) => logger.warn(m, f ?? {}) },
      });
      await deps.publisher.publish(cycle.events);
      addMetrics(metrics, cycle.metrics);
      return reportCycle(logger, name, cycle, off);
    } catch (err) {
      const error = describeAccessError(err);
      logger.warn('cluster cycle failed', { error });
      metrics.addMetric('ClusterCyclesFailed', MetricUnit.Count, 1);
      return { cluster: name, error };
    }
  },
});

/**
 * A follow between cycles (shared/cycle/follow.ts): the lists this instance keeps for the cluster taken
 * up, nothing written anywhere. An instance that keeps none (cold, or the cluster's cycles ran on
 * another: Lambda does not route a cluster to the same instance) reads nothing at all, not even the
 * registry. A follow that fails leaves the lists to the next cycle, which reads them as it can.
 */
async function follow(name: string, deps: Deps, logger: Logger) {
  if (kept.keys(clusterPrefix(name)).length === 0) {
    logger.info('cluster follow: nothing kept here');
    return { cluster: name, follow: 'nothing kept' };
  }
  const cluster = await new DynamoRegistry(deps.db, deps.config.table).get(name);
  if (!cluster) {
    kept.forget(clusterPrefix(name));
    return { cluster: name, skipped: 'not registered' };
  }
  try {
    const client = await clusterAccess().client(cluster.name, cluster.kubeconfig);
    const unread = { now: nodescopeClock()(), afterMs: UNREAD_AFTER_MS };
    const r = await followCluster(new RawReader(client), kept, keptScope(client), unread);
    logger.info('cluster follow', { lists: r.lists, kept: r.kept });
    return { cluster: name, follow: `${r.kept} of ${Object.keys(r.lists).length} list(s) kept` };
  } catch (err) {
    const error = describeAccessError(err);
    logger.warn('cluster follow failed', { error });
    return { cluster: name, error };
  }
}

/** The log line and the idempotency record of one cycle; a phase that did not run says why (its feature's state). */
function reportCycle(logger: Logger, cluster: string, cycle: ClusterCycleResult, off: PhasesOff) {
  const { nodescope: ns, balloons } = cycle;
  logger.info('cluster cycle', {
    nodescope: ns?.detail ?? `off (${off.nodescope})`,
    balloons: balloons?.summary ?? `off (${off.balloons})`,
    balloonErrors: balloons?.errors ?? [],
    reads: cycle.reads,
  });
  return {
    cluster,
    ...(ns ? { nodescope: ns.detail } : {}),
    ...(balloons ? { balloons: balloons.summary } : {}),
    ...(Object.keys(off).length ? { off } : {}),
  };
}
