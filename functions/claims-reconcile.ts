import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { z } from 'zod';
import { reconcileClaims } from '../shared/claims/reconcile.js';
import { DynamoClaimStore } from '../shared/claims/store-dynamo.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { scheduledHandler } from '../shared/handlers.js';

/**
 * How long a pending join or move is left to the command running it before the reconciler finishes or
 * drops it (default 120 s, longer than any function's timeout). Tests and drills set it lower.
 */
export const GRACE_ENV = 'FLEETSCOPE_CLAIMS_RECONCILE_GRACE_SECONDS';

function graceMs(): number | undefined {
  const raw = process.env[GRACE_ENV];
  if (raw === undefined || raw === '') return undefined;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds < 0) throw new Error(`${GRACE_ENV} must be a number of seconds`);
  return seconds * 1000;
}

/** Scheduled: repair what interrupted joins, leaves and moves left in DynamoDB (fleet-wide, no cluster access). */
export const handler = scheduledHandler({
  functionId: 'claims-reconcile',
  input: z.object({ task: z.literal('reconcile') }).strict(),
  run: async (_input, { deps, logger, metrics }) => {
    const grace = graceMs();
    const report = await reconcileClaims({
      store: new DynamoClaimStore(deps.db, deps.config.table),
      registry: new DynamoRegistry(deps.db, deps.config.table),
      publisher: deps.publisher,
      warn: (message) => logger.warn(message),
      ...(grace !== undefined ? { graceMs: grace } : {}),
    });
    for (const a of report.actions) {
      const fields = {
        cluster: a.cluster,
        clusterId: a.clusterId,
        clusterSet: a.clusterSet ?? 'none',
        action: a.kind,
      };
      if (a.kind === 'conflict') logger.error(a.detail, fields);
      else logger.info(a.detail, fields);
    }
    const count = (kind: string) => report.actions.filter((a) => a.kind === kind).length;
    metrics.addMetric('ClaimsRepairsCompleted', MetricUnit.Count, count('completed') + count('abandoned'));
    metrics.addMetric(
      'ClaimsGuardsRepaired',
      MetricUnit.Count,
      count('released-guard') + count('restored-guard'),
    );
    metrics.addMetric('ClaimsConflicts', MetricUnit.Count, count('conflict'));
    logger.info('reconciled', {
      identities: report.identities,
      guards: report.guards,
      actions: report.actions.length,
    });
    return { identities: report.identities, guards: report.guards, actions: report.actions };
  },
});
