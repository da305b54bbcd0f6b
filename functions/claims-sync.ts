import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { CLAIMS } from '../shared/claims/capability.js';
import { ClusterClaimsApi } from '../shared/claims/incluster.js';
import { type ClaimsPorts, forgetCluster } from '../shared/claims/membership.js';
import { forgetIdentityKeys, tagIdentity } from '../shared/claims/observability.js';
import { ClaimsStore } from '../shared/claims/store.js';
import { removeMembershipClaim, syncCluster } from '../shared/claims/sync.js';
import { gate } from '../shared/features/gate.js';
import { clusterConnector } from '../shared/fleet/cluster-access.js';
import { RegistryStore } from '../shared/fleet/registry-store.js';
import { eventHandler } from '../shared/handlers.js';

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
    const c = clusterConnector();
    const name = event.detail.cluster;
    const store = new ClaimsStore(deps.db, deps.config.table);
    const registry = new RegistryStore(deps.db, deps.config.table);
    const ports: ClaimsPorts = {
      store,
      registry,
      publisher: deps.publisher,
      warn: (message) => logger.warn(message),
    };
    const capability = (event.detail as { capability?: string }).capability;
    if (event['detail-type'] === 'ClusterWorkRequested' && capability !== CLAIMS) {
      return { cluster: name, skipped: `capability ${capability}` };
    }

    if (event['detail-type'] === 'ClusterDeregistered') {
      const known = await store.getIdentity(name);
      let removed = 0;
      if (known?.clusterSet && known.kubeconfig) {
        try {
          const api = new ClusterClaimsApi(await c.get(name, known.kubeconfig));
          removed = (await removeMembershipClaim(api)).length;
        } catch (err) {
          logger.warn('could not remove the ClusterSet claim from the deregistered cluster', {
            error: (err as Error).message,
          });
        }
      }
      await forgetCluster(ports, name);
      forgetIdentityKeys(name);
      logger.info('claims forgotten after deregistration', { removedInCluster: removed });
      return { cluster: name, forgotten: Boolean(known) };
    }

    const cluster = await registry.get(name);
    if (!cluster) {
      logger.info('cluster is not registered: nothing to write');
      return { cluster: name, skipped: 'not registered' };
    }
    const feature = await gate(
      {
        db: deps.db,
        table: deps.config.table,
        publish: (e) => deps.publisher.publish(e),
        warn: logger.warn.bind(logger),
      },
      name,
      CLAIMS,
      'claims',
    );
    if (!feature.allowed) {
      // While claims turn off, a ClusterSet left meanwhile still loses its claim at once (KEP-2149: it
      // exists exactly as long as the membership); nothing else is written.
      let removed = 0;
      if (feature.state === 'TurningOff' && !(await store.getIdentity(name))?.clusterSet)
        removed = (await removeMembershipClaim(new ClusterClaimsApi(await c.get(name, cluster.kubeconfig))))
          .length;
      logger.info('claims are off for this cluster: nothing else written', { state: feature.state, removed });
      return { cluster: name, skipped: `claims ${feature.state}`, removed };
    }
    const result = await syncCluster(
      { ...ports, connect: async (rc) => new ClusterClaimsApi(await c.get(rc.name, rc.kubeconfig)) },
      cluster,
    );
    // The sync may have changed the ID or ClusterSet: drop the cached keys, tag the fresh ones.
    forgetIdentityKeys(name);
    tagIdentity(logger, metrics, { clusterId: result.clusterId, clusterSet: result.clusterSet });
    metrics.addMetric('ClaimsChecked', MetricUnit.Count, 1);
    metrics.addMetric('ClaimsWritten', MetricUnit.Count, result.ops.length + result.ocmOps.length);
    metrics.addMetric('ClaimsDriftRepaired', MetricUnit.Count, result.drift ? 1 : 0);
    metrics.addMetric('ClustersUnreachable', MetricUnit.Count, result.state === 'unreachable' ? 1 : 0);
    metrics.addMetric(
      'ClaimsSyncErrors',
      MetricUnit.Count,
      result.state === 'error' || result.state === 'crd-missing' ? 1 : 0,
    );
    const fields = {
      trigger: event['detail-type'],
      state: result.state,
      writes: result.ops.length + result.ocmOps.length,
      crd: result.crd,
      ocm: result.ocm,
      ...(result.error ? { error: result.error } : {}),
      ...(result.warnings.length ? { warnings: result.warnings } : {}),
    };
    if (result.state === 'in-sync' || result.state === 'repaired') logger.info('claims synced', fields);
    else logger.warn('claims not synced; the next check retries', fields);
    // The result is stored as the idempotency record: no undefined attributes.
    return {
      cluster: name,
      state: result.state,
      ...(result.clusterId ? { clusterId: result.clusterId } : {}),
      ...(result.clusterSet ? { clusterSet: result.clusterSet } : {}),
      writes: result.ops.length + result.ocmOps.length,
      drift: result.drift,
    };
  },
});
