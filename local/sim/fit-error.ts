/**
 * The scheduler's FitError text (pkg/scheduler/framework/types.go): "0/N nodes are available:", then
 * each reason prefixed with how many nodes gave it, sorted as strings (Go's sort.Strings, so "1 node(s)
 * ..." comes before "2 Insufficient cpu"), then the PostFilter (preemption) message.
 */

/** Why one node was rejected: one reason per failing filter (NodeResourcesFit may give several). */
export interface NodeStatuses {
  /** Nodes that were filtered, with their reasons. */
  perNode: Iterable<readonly string[]>;
  /** Nodes PreFilter ruled out before filtering, all with one reason. */
  absent?: { count: number; reason: string };
}

export function histogram(statuses: NodeStatuses): string[] {
  const counts = new Map<string, number>();
  for (const reasons of statuses.perNode) for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  if (statuses.absent && statuses.absent.count > 0)
    counts.set(statuses.absent.reason, (counts.get(statuses.absent.reason) ?? 0) + statuses.absent.count);
  // Go compares strings bytewise; for these ASCII texts that is JavaScript's default order.
  return [...counts].map(([r, n]) => `${n} ${r}`).sort();
}

export function fitErrorMessage(totalNodes: number, statuses: NodeStatuses, postFilter?: string): string {
  let msg = `0/${totalNodes} nodes are available:`;
  const reasons = histogram(statuses);
  if (reasons.length > 0) msg += ` ${reasons.join(', ')}.`;
  if (postFilter) msg += ` ${postFilter}`;
  return msg;
}
