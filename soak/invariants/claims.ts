/**
 * Cluster identity: no ClusterSet guard without the identity that explains it (its cluster a member of
 * that set with that ID, or a pending join/move to it), and no two members of a ClusterSet with one ID.
 * Checked after the reconciler's last run, so what a kill left half done has been repaired.
 */
import type { Guard, StoredIdentity } from '../../shared/claims/store.js';
import { DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import type { Invariant, Outcome } from '../types.js';

export function judgeGuards(identities: StoredIdentity[], guards: Guard[]): Outcome {
  const byCluster = new Map(identities.map((i) => [i.cluster, i]));
  const violations: string[] = [];
  for (const g of guards) {
    const id = byCluster.get(g.cluster);
    const member = id?.clusterSet === g.clusterSet && id.clusterId === g.clusterId;
    const pending = id?.pending?.set === g.clusterSet && id.pending.token === g.token;
    if (!member && !pending)
      violations.push(
        `guard ${g.clusterSet}/${g.clusterId} held by ${g.cluster}, whose identity does not explain it`,
      );
  }
  return { checked: guards.length, unit: 'guards', violations };
}

export function judgeUniqueIds(identities: StoredIdentity[]): Outcome {
  const seen = new Map<string, string>();
  const violations: string[] = [];
  let members = 0;
  for (const i of identities) {
    if (!i.clusterSet) continue;
    members++;
    const key = `${i.clusterSet}/${i.clusterId}`;
    const other = seen.get(key);
    if (other)
      violations.push(`ClusterSet ${i.clusterSet}: ${other} and ${i.cluster} both hold ID ${i.clusterId}`);
    else seen.set(key, i.cluster);
  }
  return { checked: members, unit: 'members', violations };
}

export const guardsExplained: Invariant = {
  name: 'every claim guard has its identity',
  check: async (state) => {
    const store = new DynamoClaimStore(state.db, state.table);
    return judgeGuards(await store.listIdentities(), await store.listGuards());
  },
};

export const idsUniqueInSets: Invariant = {
  name: 'no two ClusterSet members with one ID',
  check: async (state) => judgeUniqueIds(await new DynamoClaimStore(state.db, state.table).listIdentities()),
};
