import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { z } from 'zod';
import { CAPABILITIES } from '../shared/capabilities.js';
import { dispatchCycle } from '../shared/fleet/dispatch.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { scheduledHandler } from '../shared/handlers.js';

// A capability the catalogue does not know would fan out work no rule routes anywhere.
const known = CAPABILITIES.map((c) => c.id);

/** Scheduled: fan a capability's cycle out to every cluster this control plane owns, one event each. */
export const handler = scheduledHandler({
  functionId: 'dispatch',
  input: z
    .object({
      capability: z
        .string()
        .refine((c) => known.includes(c), `not a capability (known: ${known.join(', ')})`),
      /** The capability's follow between cycles rather than a cycle (the cycle's, every minute). */
      follow: z.literal(true).optional(),
    })
    .strict(),
  run: async ({ capability, follow }, { deps, logger, metrics }) => {
    const registry = new DynamoRegistry(deps.db, deps.config.table);
    const r = await dispatchCycle(
      capability,
      registry,
      deps.publisher,
      deps.config.controlPlane,
      new Date(),
      follow === true,
    );
    // Follows apart: a minute's follows are not cycles.
    metrics.addDimension('capability', follow ? `${capability}/follow` : capability);
    metrics.addMetric('ClustersDispatched', MetricUnit.Count, r.dispatched);
    if (r.ownedElsewhere > 0) metrics.addMetric('ClustersOwnedElsewhere', MetricUnit.Count, r.ownedElsewhere);
    logger.info('dispatched', {
      capability,
      ...(follow ? { follow } : {}),
      clusters: r.dispatched,
      ownedElsewhere: r.ownedElsewhere,
      pages: r.pages,
    });
    return { capability, ...(follow ? { follow } : {}), dispatched: r.dispatched };
  },
});
