/**
 * The server flow's ports as a Lambda (or the local runtime) builds them from its adapters: the table,
 * the bus, the clusters through the connector (kubeconfigs from the registry), the catalog with the
 * registered third-party features, metrics and log lines.
 */
import { randomUUID } from 'node:crypto';
import { clusterAccess } from '../fleet/cluster-access.js';
import type { Registry } from '../fleet/registry.js';
import { DynamoRegistry } from '../fleet/registry-dynamo.js';
import { clusterSkew } from '../k8s/cluster-clock.js';
import { DynamoNodeScopeStore } from '../nodescope/store-dynamo.js';
import type { Deps } from '../platform/deps.js';
import { loadCatalog } from './catalog.js';
import { featureNow } from './clock.js';
import type { FeatureMetric, ReconcilerPorts } from './reconciler.js';
import { clusterHealth } from './rollout-health.js';
import type { RolloutPorts } from './rollout-runner.js';
import { DynamoRolloutStore } from './rollout-store-dynamo.js';
import { DynamoFeatureStore } from './store-dynamo.js';
import { dynamoTaskStores } from './task-stores-dynamo.js';

export interface Telemetry {
  warn(message: string, fields: Record<string, unknown>): void;
  count(metric: FeatureMetric | string, n: number): void;
}

export class ClusterGoneError extends Error {
  override name = 'ClusterGoneError';
}

export async function serverPorts(
  deps: Deps,
  who: string,
  t: Telemetry,
): Promise<{ reconciler: ReconcilerPorts; rollouts: RolloutPorts; registry: Registry }> {
  const store = new DynamoFeatureStore(deps.db, deps.config.table);
  const registry = new DynamoRegistry(deps.db, deps.config.table);
  const catalog = await loadCatalog(store);
  const publish = (events: Parameters<Deps['publisher']['publish']>[0]) => deps.publisher.publish(events);
  const reconciler: ReconcilerPorts = {
    store,
    catalog,
    tasks: dynamoTaskStores(deps.db, deps.config.table),
    id: `${who}/${randomUUID().slice(0, 8)}`,
    now: featureNow,
    publish,
    warn: t.warn,
    count: t.count,
    connect: async (cluster) => {
      const c = await registry.get(cluster);
      if (!c) throw new ClusterGoneError(`cluster "${cluster}" is not registered`);
      return clusterAccess().client(c.name, c.kubeconfig);
    },
  };
  const rollouts: RolloutPorts = {
    rollouts: new DynamoRolloutStore(deps.db, deps.config.table),
    store,
    catalog,
    registry,
    publish,
    health: clusterHealth({
      getStatus: (c) => registry.getStatus(c),
      getCluster: (c) => new DynamoNodeScopeStore(deps.db, deps.config.table).getCluster(c),
    }),
    clusterSkew: async (c) => clusterSkew(await reconciler.connect(c)),
    now: featureNow,
  };
  return { reconciler, rollouts, registry };
}
