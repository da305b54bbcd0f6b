/**
 * Every node-scope history is continuous: per (cluster, DaemonSet, node, container) the CPU samples
 * stored (base + log, as the next cycle would load them) are at most one per nodescope cycle sent for
 * the cluster (none duplicated) and at least one per cycle a runtime reported complete and clean (none
 * lost beyond the cycles that failed: killed, faulted, or unreported).
 */
import { loadDs } from '../../shared/nodescope/state.js';
import { dsKeyOf } from '../../shared/nodescope/store.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import type { CycleLedger } from '../records.js';
import type { Invariant, Outcome, SoakState } from '../types.js';

export interface ScopeCount {
  cluster: string;
  scope: string;
  samples: number;
}

export function judgeHistories(scopes: ScopeCount[], ledger: CycleLedger, capability = 'nodescope'): Outcome {
  const violations: string[] = [];
  for (const s of scopes) {
    const attempted = ledger.attempted(capability, s.cluster);
    const clean = ledger.clean(capability, s.cluster);
    if (s.samples > attempted)
      violations.push(`${s.cluster} ${s.scope}: ${s.samples} samples from ${attempted} cycles (duplicated)`);
    else if (s.samples < clean)
      violations.push(`${s.cluster} ${s.scope}: ${s.samples} samples but ${clean} clean cycles (lost)`);
  }
  return { checked: scopes.length, unit: 'scopes', violations };
}

export async function storedScopeCounts(state: SoakState): Promise<ScopeCount[]> {
  const store = new DynamoNodeScopeStore(state.db, state.table);
  const out: ScopeCount[] = [];
  for (const head of await store.listAllHeads()) {
    const ds = dsKeyOf(head.namespace, head.name);
    const loaded = await loadDs(store, head, head.cluster, ds, head.containers, { replay: true });
    for (const [node, rec] of loaded.model.nodes)
      rec.states.forEach((st, i) => {
        if (st)
          out.push({
            cluster: head.cluster,
            scope: `${ds} ${node} ${loaded.model.containers[i]}`,
            samples: st.aggregate.totalSamplesCount,
          });
      });
  }
  return out;
}

export const historyContinuous: Invariant = {
  name: 'node-scope histories continuous',
  check: async (state) => judgeHistories(await storedScopeCounts(state), state.ledger),
};
