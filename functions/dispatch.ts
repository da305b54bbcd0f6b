import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { z } from 'zod';
import { workRequests } from '../shared/fleet/dispatch.js';
import { RegistryStore } from '../shared/fleet/registry-store.js';
import { CAPABILITIES } from '../shared/platform/capabilities.js';
import { scheduledHandler } from '../shared/platform/handler.js';

// A capability the catalogue does not know would fan out work no rule routes anywhere.
const known = CAPABILITIES.map((c) => c.id);

/** Scheduled: fan a capability's cycle out to every registered cluster, one event each. */
export const handler = scheduledHandler({
  functionId: 'dispatch',
  input: z
    .object({
      capability: z
        .string()
        .refine((c) => known.includes(c), `not a capability (known: ${known.join(', ')})`),
    })
    .strict(),
  run: async ({ capability }, { deps, logger, metrics }) => {
    const clusters = await new RegistryStore(deps.db, deps.config.table).list();
    const requests = workRequests(capability, clusters, new Date());
    await deps.publisher.publish(requests);
    metrics.addDimension('capability', capability);
    metrics.addMetric('ClustersDispatched', MetricUnit.Count, requests.length);
    logger.info('dispatched', { capability, clusters: requests.length });
    return { capability, dispatched: requests.length };
  },
});
