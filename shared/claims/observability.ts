/**
 * KEP-2149's diagnostics story: every log line and metric about a cluster carries its ID and ClusterSet,
 * so logs and metrics gathered from many clusters can be told apart and grouped by ClusterSet.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { MiddlewareObj } from '@middy/core';
import type { ClaimStore } from './store.js';

export interface IdentityKeys {
  clusterId?: string;
  clusterSet?: string;
}

/** Log keys and EMF metadata: `clusterId`, and `clusterSet` ("none" outside a ClusterSet, so it is always there). */
export function tagIdentity(logger: Logger, metrics: Metrics, keys: IdentityKeys): void {
  const clusterSet = keys.clusterSet ?? 'none';
  logger.appendKeys({ ...(keys.clusterId ? { clusterId: keys.clusterId } : {}), clusterSet });
  if (keys.clusterId) metrics.addMetadata('clusterId', keys.clusterId);
  metrics.addMetadata('clusterSet', clusterSet);
}

export function untagIdentity(logger: Logger): void {
  logger.removeKeys(['clusterId', 'clusterSet']);
}

const CACHE_MS = 60_000;
const cache = new Map<string, { keys: IdentityKeys; at: number }>();

/** The cluster's ID and ClusterSet, cached for a minute per warm container (one GetItem otherwise). */
export async function identityKeys(
  store: ClaimStore,
  cluster: string,
  now = Date.now(),
): Promise<IdentityKeys> {
  const hit = cache.get(cluster);
  if (hit && now - hit.at < CACHE_MS) return hit.keys;
  const identity = await store.getIdentity(cluster);
  const keys: IdentityKeys = identity
    ? { clusterId: identity.clusterId, ...(identity.clusterSet ? { clusterSet: identity.clusterSet } : {}) }
    : {};
  cache.set(cluster, { keys, at: now });
  return keys;
}

export function forgetIdentityKeys(cluster?: string): void {
  if (cluster) cache.delete(cluster);
  else cache.clear();
}

/**
 * A middy middleware that tags every log line and metric of an invocation about a cluster with the
 * cluster's ID and ClusterSet. For the platform's handler kit (shared/platform/handler.ts), after its
 * cluster context:
 *
 *   .use(clusterIdentityContext(t.logger, t.metrics, () => new DynamoClaimStore(t.deps.db, t.deps.config.table), clusterOf))
 *
 * A failed lookup never fails the invocation (the line just lacks the keys).
 */
export function clusterIdentityContext(
  logger: Logger,
  metrics: Metrics,
  store: () => ClaimStore,
  clusterOf: (event: never) => string | undefined,
): MiddlewareObj {
  return {
    before: async (request) => {
      const cluster = clusterOf(request.event as never);
      if (!cluster) return;
      try {
        tagIdentity(logger, metrics, await identityKeys(store(), cluster));
      } catch {
        // diagnostics only
      }
    },
    after: () => untagIdentity(logger),
    onError: () => untagIdentity(logger),
  };
}
