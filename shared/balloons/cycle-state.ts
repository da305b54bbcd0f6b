/** What a cycle stores: every decided node with its resize record, conditionally on the version read. */
import type { ResizeRecord } from '../resize/index.js';
import { max, RESOURCES, sub, ZERO } from './amounts.js';
import type { NodeDecision } from './decide.js';
import type { CycleLedger } from './ledger.js';
import type { Impostor, NodeState } from './store.js';
import { type BalloonSummary, summarize } from './summary-model.js';

/**
 * What the node offers after the cycle (allocatable less the balloon as it now stands), and when it last
 * shrank: the cool-down counts from inflates that were made, not from those only wanted.
 */
function settled(d: NodeDecision, now: number): Pick<NodeState, 'size' | 'lastShrinkAt'> {
  // Never negative: a node over-committed from below offers nothing, it does not offer "-3 cpu".
  const size = max(ZERO, sub(d.state.allocatable, d.state.balloon));
  const grew = d.balloon !== undefined && RESOURCES.some((r) => d.state.balloon[r] > d.balloon!.requests[r]);
  return grew
    ? { size, lastShrinkAt: now }
    : { size, ...(d.state.lastShrinkAt !== undefined ? { lastShrinkAt: d.state.lastShrinkAt } : {}) };
}

/** The state to store: every decided node with its resize record (a node-only cycle keeps the others). */
function stateOf(
  decisions: readonly NodeDecision[],
  records: Map<string, ResizeRecord | undefined>,
  previous: Readonly<Record<string, NodeState>>,
  onlyNode: string | undefined,
  now: number,
): Record<string, NodeState> {
  const out: Record<string, NodeState> = onlyNode === undefined ? {} : { ...previous };
  for (const d of decisions) {
    if (onlyNode !== undefined && d.node !== onlyNode) continue;
    const record = records.get(d.node);
    const { resize: _old, ...rest } = d.state;
    out[d.node] = { ...rest, ...settled(d, now), ...(record ? { resize: record } : {}) };
  }
  return out;
}

/** Stores the cycle's state; a cycle that lost the race to another one says so and stores nothing. */
export async function saveCycle(
  l: CycleLedger,
  decisions: readonly NodeDecision[],
  previous: Readonly<Record<string, NodeState>>,
  version: number | undefined,
  impostors: readonly Impostor[] = [],
): Promise<BalloonSummary> {
  const state = stateOf(decisions, l.records, previous, l.ctx.onlyNode, l.now);
  const gone = l.ctx.resizer.unsupported;
  const saved = await l.ctx.store.saveState(
    {
      cluster: l.ctx.cluster,
      at: l.now,
      cycleId: l.ctx.cycleId,
      nodes: state,
      errors: l.errors,
      ...(impostors.length ? { impostors: [...impostors] } : {}),
      ...(gone ? { unsupported: gone, unsupportedUntil: l.now + l.settings.unsupportedRecheckMs } : {}),
      ...(l.resizePreemptionOffUntil ? { resizePreemptionOffUntil: l.resizePreemptionOffUntil } : {}),
      ...(l.resizePreemptionField ? { resizePreemptionField: l.resizePreemptionField } : {}),
    },
    version,
  );
  if (saved === 'lost-race')
    l.errors.push('another balloon cycle of this cluster stored its state first; this one was not stored');
  return summarize(Object.values(state), l.now, l.reverts.length);
}
