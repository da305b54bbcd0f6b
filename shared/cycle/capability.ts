import type { FeaturedCapability } from '../features/spec.js';
import { DEFAULT_SETTINGS as NODESCOPE_DEFAULTS } from '../nodescope/settings.js';
import { pattern } from '../platform/catalogue.js';
import type { KubePermission } from '../platform/kube-permissions.js';

/**
 * The per-cluster cycle: every capability that reads a cluster's nodes and pods (node scope, then
 * balloons) runs in one invocation over one snapshot of the cluster, so no node and no pod is read
 * twice per cycle, and balloons count node-scoped pods at the sizes node scope just gave them.
 * Node scope's sampling period is the cycle's period: one usage sample per container per cycle.
 */
export const CYCLE = 'cycle';
export const CYCLE_PERIOD_MINUTES = NODESCOPE_DEFAULTS.periodMinutes;
/**
 * The follow (shared/cycle/follow.ts): the same function, between cycles. Every minute because the
 * watch cache keeps a resource's history beyond its 100 newest events for 75 s only (the bookmark
 * period, 1 minute, plus a margin).
 */
export const CYCLE_FOLLOW = 'cycle-follow';
export const FOLLOW_PERIOD_MINUTES = 1;

export const cycleCapability: FeaturedCapability = {
  id: CYCLE,
  description:
    "One cycle per cluster: node scope, then balloons, over one read of the cluster's nodes and pods",
  functions: [
    {
      id: CYCLE,
      entry: 'functions/cluster-cycle.ts',
      description: 'One cycle of one cluster: node-scoped recommendations and resizes, then balloon sizing',
      // 1,769 MB is one full vCPU: the cycle is CPU-bound (JSON of every pod, then the math).
      memoryMb: 1769,
      timeoutSeconds: 300,
      access: { table: 'readwrite', putEvents: true, kubeconfigSecrets: true, idempotency: true },
      reservedConcurrency: 10,
      // Semi-spaces of 64 MB: a page of 1,000 pods parsed is garbage before it outlives a scavenge, so
      // it is not promoted and then marked and swept with the views kept (docs/nodescope.md, the
      // profile's fourth pass: a cycle that lists 5,000 nodes in full took 15% less CPU).
      v8Flags: ['--max-semi-space-size=64'],
    },
  ],
  schedules: [
    {
      id: CYCLE,
      description: 'Node scope and balloons for every cluster: collect, recommend, resize, size the balloons',
      everyMinutes: CYCLE_PERIOD_MINUTES,
      target: 'dispatch',
      input: { capability: CYCLE },
    },
    {
      id: CYCLE_FOLLOW,
      description:
        "Between cycles, every minute: each cluster's kept lists taken up (a watch each), so they stay within the apiserver's watch cache",
      everyMinutes: FOLLOW_PERIOD_MINUTES,
      target: 'dispatch',
      input: { capability: CYCLE, follow: true },
      skips: CYCLE,
    },
  ],
  rules: [
    {
      id: 'cycle-on-request',
      description: 'A cycle of one cluster',
      pattern: pattern(['ClusterWorkRequested'], { capability: [CYCLE] }),
      target: CYCLE,
    },
    {
      // Its own detail-type and rule: no rule for ClusterWorkRequested, of this version or one from
      // before the follow, routes a follow; and this rule targets the function's ARN, so a deploy
      // creates it once the function runs code that knows follows.
      id: 'cycle-follow-on-request',
      description: "A follow of one cluster between cycles: the cycle function's kept lists taken up",
      pattern: pattern(['ClusterFollowRequested'], { capability: [CYCLE] }),
      target: CYCLE,
    },
  ],
  // Node scope runs in every cycle; balloons only where configured, so they are not required here.
  requires: ['nodescope'],
  // The snapshot both phases read; each phase declares the rest in its own capability.
  kubernetes: [
    {
      group: '',
      resources: ['nodes'],
      verbs: ['list', 'watch'],
      why: 'the snapshot of every node, once per cycle (a watch brings the changes since the last)',
    },
    {
      group: '',
      resources: ['pods'],
      verbs: ['list', 'watch'],
      why: 'the snapshot of every pod, once per cycle (a watch brings the changes since the last)',
    },
  ] satisfies KubePermission[],
};
