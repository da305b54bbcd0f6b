import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { yieldCluster } from '../shared/claims/adoption.js';
import { CLAIMS } from '../shared/claims/capability.js';
import { ClusterClaimsApi } from '../shared/claims/incluster.js';
import { forgetIdentityKeys, tagIdentity } from '../shared/claims/observability.js';
import { DynamoClaimStore } from '../shared/claims/store-dynamo.js';
import type { SyncResult } from '../shared/claims/sync.js';
import { type ClaimsWorkerPorts, forgetDeregistered, writeClaims } from '../shared/claims/worker.js';
import { gate } from '../shared/features/gate.js';
import { workerGatePorts } from '../shared/features/gate-dynamo.js';
import { clusterConnector } from '../shared/fleet/cluster-access.js';
import { ownerCheck } from '../shared/fleet/owner-lease.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { eventHandler } from '../shared/handlers.js';
import { nodescopeClock } from '../shared/nodescope/clock.js';

/**
 * Writes one cluster's claims into it: on ClusterRegistered (creating id.k8s.io from the kube-system UID),
 * on every registry change (ClusterClaimsChanged, origin registry), and on the scheduled drift check
 * (ClusterWorkRequested for "claims"). On ClusterDeregistered it removes the cluster's ClusterSet claim and
 * forgets its claims. An unreachable cluster is recorded and retried by the next check, never thrown.
 */
export const handler = eventHandler({
  functionId: 'claims',
  detailTypes: ['ClusterWorkRequested', 'ClusterRegistered', 'ClusterDeregistered', 'ClusterClaimsChanged'],
  run: async (event, { deps, logger, metrics }) => {
    metrics.addMetric('ClaimsEvents', MetricUnit.Count, 1);
    const name = event.detail.cluster;
    const capability = (event.detail as { capability?: string }).capability;
    if (event['detail-type'] === 'ClusterWorkRequested' && capability !== CLAIMS) {
      return { cluster: name, skipped: `capability ${capability}` };
    }
    const c = clusterConnector();
    const ports: ClaimsWorkerPorts = {
      store: new DynamoClaimStore(deps.db, deps.config.table),
      registry: new DynamoRegistry(deps.db, deps.config.table),
      publisher: deps.publisher,
      warn: (message) => logger.warn(message),
      claimsApi: async (cluster, kubeconfig) => new ClusterClaimsApi(await c.get(cluster, kubeconfig)),
      feature: (cluster) => gate(workerGatePorts(deps, logger.warn.bind(logger)), cluster, CLAIMS, 'claims'),
    };

    if (event['detail-type'] === 'ClusterDeregistered') {
      const out = await forgetDeregistered(ports, name);
      if (out.removeError)
        logger.warn('could not remove the ClusterSet claim from the deregistered cluster', {
          error: out.removeError,
        });
      forgetIdentityKeys(name);
      logger.info('claims forgotten after deregistration', {
        removedInCluster: out.removedInCluster,
        // Adopted away: the ClusterSet claim is the new owner's, left in the cluster.
        ...(out.ownedBy ? { ownedBy: out.ownedBy } : {}),
      });
      return { cluster: name, forgotten: out.forgotten };
    }

    // Another control plane owns the cluster (its owner lease): its claims are that one's to write, and
    // this one gives up its membership record of it (adopted from here: shared/claims/adoption.ts).
    const registered = await ports.registry.get(name);
    const owner =
      registered && !registered.deregistering
        ? await ownerCheck(name, await c.get(name, registered.kubeconfig), nodescopeClock()()).catch(
            () => ({}) as { refused?: string; holder?: string },
          )
        : {};
    if (owner.refused) {
      const yielded = owner.holder ? await yieldCluster(ports, name, owner.holder) : {};
      logger.warn('cluster owned by another control plane: claims not written', {
        refused: owner.refused,
        ...yielded,
      });
      return { cluster: name, skipped: owner.refused };
    }
    if (registered?.ownedElsewhere)
      await ports.registry.recordOwnedElsewhere(name, undefined, new Date().toISOString());
    const out = await writeClaims(ports, name);
    if (out.kind === 'not-registered') {
      logger.info('cluster is not registered: nothing to write');
      return { cluster: name, skipped: 'not registered' };
    }
    if (out.kind === 'off') {
      logger.info('claims are off for this cluster: nothing else written', {
        state: out.state,
        removed: out.removed,
      });
      return { cluster: name, skipped: `claims ${out.state}`, removed: out.removed };
    }
    return reportSync(out.result, event['detail-type'], logger, metrics);
  },
});

/** Metrics, a log line, and the idempotency record of one sync. */
function reportSync(result: SyncResult, trigger: string, logger: Logger, metrics: Metrics) {
  // The sync may have changed the ID or ClusterSet: drop the cached keys, tag the fresh ones.
  forgetIdentityKeys(result.cluster);
  tagIdentity(logger, metrics, { clusterId: result.clusterId, clusterSet: result.clusterSet });
  const writes = result.ops.length + result.ocmOps.length;
  const count = (metric: string, n: number) => metrics.addMetric(metric, MetricUnit.Count, n);
  count('ClaimsChecked', 1);
  count('ClaimsWritten', writes);
  count('ClaimsDriftRepaired', result.drift ? 1 : 0);
  count('ClustersUnreachable', result.state === 'unreachable' ? 1 : 0);
  count('ClaimsSyncErrors', result.state === 'error' || result.state === 'crd-missing' ? 1 : 0);
  // A rebuilt cluster waits for an operator's decision (claims accept-uid, or deregister): alarm on it.
  count('ClaimsIdentityChanged', result.state === 'identity-changed' ? 1 : 0);
  const fields = {
    trigger,
    state: result.state,
    writes,
    crd: result.crd,
    ocm: result.ocm,
    ...(result.error ? { error: result.error } : {}),
    ...(result.warnings.length ? { warnings: result.warnings } : {}),
  };
  if (result.state === 'in-sync' || result.state === 'repaired') logger.info('claims synced', fields);
  else logger.warn('claims not synced; the next check retries', fields);
  // The result is stored as the idempotency record: no undefined attributes.
  return {
    cluster: result.cluster,
    state: result.state,
    ...(result.clusterId ? { clusterId: result.clusterId } : {}),
    ...(result.clusterSet ? { clusterSet: result.clusterSet } : {}),
    writes,
    drift: result.drift,
  };
}
