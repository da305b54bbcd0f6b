import type { FunctionSpec, RuleSpec, ScheduleSpec } from '../platform/catalogue.js';

/**
 * Reserved concurrency of the per-cluster workers, from the fleet's size and the time one cluster
 * takes: enough concurrent invocations that a whole cycle drains within half the schedule's period
 * (so the next tick never queues behind the last), never below the catalogue's figure (which bounds
 * the load on Secrets Manager and the clusters) and never above a cap that leaves the account's
 * unreserved pool alone.
 *
 *   reserved = clamp(ceil(clusters x perClusterSeconds / (periodSeconds x CYCLE_BUDGET)), spec, MAX_RESERVED)
 */

/**
 * Seconds one invocation takes for one cluster in Lambda, with margin: inventory and claims make a
 * handful of API requests and DynamoDB writes; a cycle (node scope, then balloons) grows with nodes and
 * DaemonSets. The fleet run of `npm run bench` prints the CPU each takes per cluster to check these.
 */
export const PER_CLUSTER_SECONDS: Readonly<Record<string, number>> = {
  inventory: 2,
  claims: 2,
  cycle: 10,
  // A follow (by its schedule's id) mostly waits on its watches: to the first bookmark, 3 s at most.
  'cycle-follow': 3,
};
/** The share of the schedule's period a whole cycle may take. */
export const CYCLE_BUDGET = 0.5;
/** Lambda accounts start at 1,000 concurrent executions, 100 of which must stay unreserved. */
export const MAX_RESERVED = 100;

/** The schedules that dispatch work to `fn` (via rules on a capability). */
export function workerSchedules(fn: string, schedules: ScheduleSpec[], rules: RuleSpec[]): ScheduleSpec[] {
  const capabilities = rules
    .filter((r) => r.target === fn)
    .flatMap((r) => (r.pattern.detail?.capability as string[] | undefined) ?? []);
  return schedules.filter(
    (s) => s.target === 'dispatch' && capabilities.includes(String(s.input.capability)),
  );
}

/** The period of the schedule that dispatches work to `fn` most often, if any. */
export function workerPeriodMinutes(
  fn: string,
  schedules: ScheduleSpec[],
  rules: RuleSpec[],
): number | undefined {
  const periods = workerSchedules(fn, schedules, rules).map((s) => s.everyMinutes);
  return periods.length ? Math.min(...periods) : undefined;
}

/** The reserved concurrency a function gets for a fleet of `clusters`. */
export function reservedConcurrency(
  spec: FunctionSpec,
  clusters: number,
  schedules: ScheduleSpec[],
  rules: RuleSpec[],
): number | undefined {
  // Each schedule's fan-out on its own (the cycle's ticks and its follow's never coincide): the most needed.
  const needs = workerSchedules(spec.id, schedules, rules).flatMap((s) => {
    const perCluster = PER_CLUSTER_SECONDS[s.id] ?? PER_CLUSTER_SECONDS[spec.id];
    if (perCluster === undefined) return [];
    return [Math.ceil((clusters * perCluster) / (s.everyMinutes * 60 * CYCLE_BUDGET))];
  });
  if (needs.length === 0) return spec.reservedConcurrency;
  return Math.min(MAX_RESERVED, Math.max(spec.reservedConcurrency ?? 1, ...needs));
}

/** How long a cycle of `clusters` takes at that concurrency (documented, printed by the bench). */
export function cycleSeconds(clusters: number, perClusterSeconds: number, concurrency: number): number {
  return Math.ceil(clusters / concurrency) * perClusterSeconds;
}
