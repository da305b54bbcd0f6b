/**
 * Appends entries to nodes' resize histories through the nodescope store: one conditional write per
 * node touched (read, bound, write; a lost race read again once). A failure is said in the cycle's
 * errors and costs only history, never a resize. Whoever reverts a resize appends its `reverted` entry
 * here too.
 */
import { type CycleRun, describe } from '../cycle-run.js';
import { boundHistory, type HistoryEntry, repeats } from './history.js';

export async function appendHistory(
  run: CycleRun,
  ds: string,
  byNode: ReadonlyMap<string, readonly HistoryEntry[]>,
): Promise<void> {
  for (const [node, added] of byNode) {
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const h = await run.store.getHistory(run.cluster, ds, node);
        const fresh: HistoryEntry[] = [];
        for (const e of added) if (!repeats(fresh.at(-1) ?? h.entries.at(-1), e)) fresh.push(e);
        if (fresh.length === 0) break;
        const entries = boundHistory(h.entries, fresh, run.now);
        if (await run.store.putHistory(run.cluster, ds, { node, entries }, h.version, run.now)) break;
      }
    } catch (err) {
      run.errors.push(`${ds}: the resize history of node ${node} was not written: ${describe(err)}`);
    }
  }
}
