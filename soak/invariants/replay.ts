/**
 * Recommendations equal a replay of the stored history: what the last fold stored (per node, and
 * DaemonSet-wide in the head) is recomputed from the stored states alone with the recommender, bit for
 * bit. A recommendation left by a killed or racing process that no stored state explains shows here.
 */
import { recommendFromStorage } from '../../shared/nodescope/query.js';
import { loadDs } from '../../shared/nodescope/state.js';
import { dsKeyOf } from '../../shared/nodescope/store.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import type { Invariant, Outcome } from '../types.js';

export interface RecPair {
  what: string;
  stored: unknown;
  replayed: unknown;
}

export function judgeReplay(pairs: RecPair[]): Outcome {
  const violations = pairs
    .filter((p) => JSON.stringify(p.stored) !== JSON.stringify(p.replayed))
    .map((p) => `${p.what}: stored ${JSON.stringify(p.stored)} != replayed ${JSON.stringify(p.replayed)}`);
  return { checked: pairs.length, unit: 'recommendations', violations };
}

export const recommendationsReplay: Invariant = {
  name: 'recommendations = replay of stored history',
  check: async (state) => {
    const store = new DynamoNodeScopeStore(state.db, state.table);
    const pairs: RecPair[] = [];
    for (const head of await store.listAllHeads()) {
      if (head.gen === 0) continue; // no fold yet: nothing stored to compare
      const ds = dsKeyOf(head.namespace, head.name);
      const loaded = await loadDs(store, head, head.cluster, ds, head.containers, { replay: false });
      const withRec = new Set([...loaded.model.nodes].filter(([, r]) => r.rec).map(([n]) => n));
      const replayed = recommendFromStorage(head, loaded.model, withRec);
      pairs.push({
        what: `${head.cluster} ${ds} DaemonSet-wide`,
        stored: head.dsWide,
        replayed: replayed.dsWide,
      });
      for (const [node, rec] of loaded.model.nodes) {
        if (!rec.rec) continue;
        pairs.push({
          what: `${head.cluster} ${ds} ${node}`,
          stored: rec.rec,
          replayed: replayed.recs.get(node),
        });
      }
    }
    return judgeReplay(pairs);
  },
};
