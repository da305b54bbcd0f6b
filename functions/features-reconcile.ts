import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { z } from 'zod';
import { RECONCILE_EVERY_MINUTES } from '../shared/features/capability.js';
import { DynamoClusterPass, DynamoReconcilerRing } from '../shared/features/members-dynamo.js';
import { reconcileCluster } from '../shared/features/reconciler.js';
import { isActive } from '../shared/features/rollout.js';
import { advanceRollout } from '../shared/features/rollout-runner.js';
import { serverPorts } from '../shared/features/runtime.js';
import { hashOrder, ownerAmong } from '../shared/features/sharding.js';
import { ownedBy } from '../shared/fleet/cluster.js';
import { clusterAccess, describeAccessError } from '../shared/fleet/cluster-access.js';
import { ownerRefusal } from '../shared/fleet/owner-lease.js';
import { scheduledHandler } from '../shared/handlers.js';

/** Clusters are started while this much of the invocation is left; the rest wait for the next pass. */
const BUDGET_MS = 120_000;

/**
 * Scheduled, one schedule per shard: the server flow (KEP-3920) for the clusters that hash to this
 * shard (announce, start, perform, finish transitions), then the rollouts that hash to it. A cluster
 * that cannot be reached keeps its transition where it was (its task's failure is recorded) and the
 * others go on.
 */
export const handler = scheduledHandler({
  functionId: 'features-reconcile',
  input: z
    .object({ shard: z.number().int().min(0), shards: z.number().int().min(1).max(64) })
    .strict()
    .refine((i) => i.shard < i.shards, { message: 'shard must be below shards', path: ['shard'] }),
  run: async ({ shard, shards }, { deps, logger, metrics }) => {
    const started = Date.now();
    const count = (m: string, n: number) => metrics.addMetric(m, MetricUnit.Count, n);
    const { reconciler, rollouts, registry } = await serverPorts(deps, `features-reconcile/${shard}`, {
      warn: (m, f) => logger.warn(m, f),
      count,
    });
    // A different starting point every pass: clusters that eat the time budget (unreachable ones wait
    // for their timeouts) never starve the same others twice.
    const pass = String(Math.floor(reconciler.now() / (RECONCILE_EVERY_MINUTES * 60_000)));
    // This reconciler announces itself; the ring is the reconcilers alive now (a dead one's share is
    // taken over within a claim period; `shards` only names the schedules).
    const members = new DynamoReconcilerRing(deps.db, deps.config.table, `shard-${shard}`, reconciler.now);
    await members.announce();
    const ring = [...new Set([...(await members.live()), members.id])];
    const owns = (key: string) => ownerAmong(key, ring) === members.id;
    const passes = new DynamoClusterPass(deps.db, deps.config.table, reconciler.now);
    // Clusters of this control plane only (another region's owns the rest), then this reconciler's.
    const mine = hashOrder(
      (await registry.list()).filter((c) => ownedBy(c, deps.config.controlPlane) && owns(c.name)),
      (c) => c.name,
      pass,
    );
    let done = 0;
    let inTransition = 0;
    for (const c of mine) {
      if (Date.now() - started > BUDGET_MS) break;
      try {
        // A cluster another control plane owns (its owner lease) is not written to; this renews ours.
        const refused = await ownerRefusal(
          c.name,
          await clusterAccess().client(c.name, c.kubeconfig),
          reconciler.now(),
        );
        if (refused) {
          logger.warn('cluster owned by another control plane: no feature step run', { refused });
          done++;
          continue;
        }
        // One pass over a cluster at a time (the event-triggered function may be on it right now).
        const outcomes =
          (await passes.run(c.name, reconciler.id, () => reconcileCluster(reconciler, c.name))) ?? [];
        inTransition += outcomes.filter((o) => o.state === 'TurningOn' || o.state === 'TurningOff').length;
      } catch (err) {
        count('FeatureReconcileErrors', 1);
        logger.warn('feature reconcile of a cluster failed; the next pass resumes it', {
          cluster: c.name,
          error: describeAccessError(err),
        });
      }
      done++;
    }
    const active = (await rollouts.rollouts.list()).filter((r) => isActive(r) && owns(r.id));
    for (const r of active) {
      const { last } = await advanceRollout(rollouts, r.id);
      logger.info('rollout', { rollout: r.id, last });
    }
    count('FeatureClustersReconciled', done);
    count('FeatureTransitionsInProgress', inTransition);
    if (done < mine.length)
      logger.warn('out of time: clusters left for the next pass', { left: mine.length - done });
    logger.info('features reconciled', {
      shard,
      shards,
      ring,
      clusters: done,
      inTransition,
      rollouts: active.length,
    });
    return { shard, clusters: done, left: mine.length - done, inTransition, rollouts: active.length };
  },
});
