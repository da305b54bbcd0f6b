import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { UnknownFeatureError } from '../shared/features/catalog.js';
import { DynamoClusterPass } from '../shared/features/members-dynamo.js';
import { reconcileCluster } from '../shared/features/reconciler.js';
import { advanceRollout } from '../shared/features/rollout-runner.js';
import { serverPorts } from '../shared/features/runtime.js';
import { DynamoFeatureStore } from '../shared/features/store-dynamo.js';
import { ownedBy } from '../shared/fleet/cluster.js';
import { clusterAccess } from '../shared/fleet/cluster-access.js';
import { ownerRefusal } from '../shared/fleet/owner-lease.js';
import { eventHandler } from '../shared/handlers.js';

/**
 * Event-triggered: a desired value changed or a component reported a new value during a transition
 * (reconcile that feature of that cluster now, rather than at the next scheduled pass), a cluster registered (announce every feature to it) or deregistered (forget
 * its features), a rollout started or resumed (start its wave now). Races with the scheduled reconciler
 * are settled by the records' conditional writes.
 */
export const handler = eventHandler({
  functionId: 'features',
  detailTypes: [
    'FeatureDesiredChanged',
    'FeatureUseReported',
    'ClusterRegistered',
    'ClusterDeregistered',
    'FeatureRolloutChanged',
  ],
  clusterOf: (e) => (e.detail as { cluster?: string }).cluster,
  run: async (event, { deps, logger, metrics }) => {
    const count = (m: string, n: number) => metrics.addMetric(m, MetricUnit.Count, n);
    const t = { warn: (m: string, f: Record<string, unknown>) => logger.warn(m, f), count };
    switch (event['detail-type']) {
      case 'ClusterDeregistered': {
        const d = event.detail as { cluster: string };
        const forgotten = await new DynamoFeatureStore(deps.db, deps.config.table).forgetCluster(d.cluster);
        return { cluster: d.cluster, forgotten };
      }
      case 'FeatureRolloutChanged': {
        const d = event.detail as { rollout: string };
        const { rollouts } = await serverPorts(deps, 'features', t);
        const { rollout, last } = await advanceRollout(rollouts, d.rollout);
        return { rollout: d.rollout, status: rollout?.status ?? 'gone', last };
      }
      default: {
        const d = event.detail as { cluster: string; namespace?: string; feature?: string };
        const { reconciler, registry } = await serverPorts(deps, 'features', t);
        const registered = await registry.get(d.cluster);
        if (!registered) return { cluster: d.cluster, skipped: 'not registered' };
        if (registered.deregistering) return { cluster: d.cluster, skipped: 'being deregistered' };
        if (!ownedBy(registered, deps.config.controlPlane))
          return { cluster: d.cluster, skipped: `owned by ${registered.owner}` };
        // Renews this control plane's owner lease; a cluster another one owns is not written to.
        const refused = await ownerRefusal(
          d.cluster,
          await clusterAccess().client(d.cluster, registered.kubeconfig),
          reconciler.now(),
        );
        if (refused) return { cluster: d.cluster, skipped: refused };
        const only = d.feature ? { namespace: d.namespace!, name: d.feature } : undefined;
        // Respects the ring: a pass over the cluster under way (its owner's, or another event's) is left
        // to finish; it, or the owner's next pass, sees what this event announced.
        const pass = new DynamoClusterPass(deps.db, deps.config.table, reconciler.now);
        try {
          const outcomes = await pass.run(d.cluster, reconciler.id, () =>
            reconcileCluster(reconciler, d.cluster, only),
          );
          if (!outcomes) {
            count('FeatureEventsDeferred', 1);
            return { cluster: d.cluster, skipped: 'a pass over the cluster is under way' };
          }
          return { cluster: d.cluster, features: outcomes.map((o) => `${o.feature}: ${o.state}`) };
        } catch (err) {
          if (err instanceof UnknownFeatureError) return { cluster: d.cluster, skipped: err.message };
          throw err;
        }
      }
    }
  },
});
