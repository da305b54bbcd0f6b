/**
 * `features unregister`: a registered (third-party) feature removed from the fleet, safely. It is
 * refused, naming why, while anything still depends on it: a cluster where it is not cleanly Off (its
 * objects may still be there, a transition may be under way), another feature that requires it, a
 * rollout running for it. Otherwise the declaration goes first (so no pass announces it again), then
 * each cluster's record, uses and mirror marker, each only while still the Off record read; the Feature
 * objects in the clusters are removed by the caller (./mirror.ts removeObject), which can reach them.
 */
import type { FeatureCatalog } from './catalog.js';
import type { StoredDeclaration } from './declaration.js';
import { type FeatureRecord, type FeatureRef, refKey } from './model.js';
import { isActive, type Rollout } from './rollout.js';
import type { FeatureStore } from './store.js';

export class UnregisterError extends Error {
  override name = 'UnregisterError';
}

/** Why `ref` cannot be unregistered now (empty: it can). Pure. */
export function unregisterBlockers(
  ref: FeatureRef,
  catalog: FeatureCatalog,
  records: readonly FeatureRecord[],
  rollouts: readonly Rollout[],
): string[] {
  const key = refKey(ref);
  const out: string[] = [];
  for (const r of records)
    if (r.state !== 'Off' || r.tasks.length > 0)
      out.push(
        `cluster ${r.cluster}: ${r.state}${r.tasks[0] ? ` (${r.tasks[0].title})` : ''}: turn it off there first (features set --desired off, or a rollout --to off)`,
      );
  for (const s of catalog.specs)
    if (s.requires?.some((q) => refKey(q) === key))
      out.push(`${refKey(s)} requires it: unregister that one first`);
  for (const r of rollouts)
    if (`${r.namespace}/${r.feature}` === key && isActive(r))
      out.push(`rollout ${r.id} is ${r.status}: halt it first (features rollout halt --id ${r.id})`);
  return out;
}

export interface Unregistered {
  /** Clusters whose record was forgotten (their Feature objects are the caller's to remove). */
  clusters: string[];
}

/**
 * Removes the declaration and every cluster's items of it, or throws UnregisterError naming what holds
 * it. A record that changed between the check and its removal (someone turned it on) is kept and named.
 */
export async function unregisterFeature(
  store: FeatureStore,
  catalog: FeatureCatalog,
  declaration: StoredDeclaration,
  rollouts: readonly Rollout[],
): Promise<Unregistered> {
  const key = refKey(declaration);
  const records = (await store.listAll()).filter((r) => refKey(r) === key);
  // The index is eventually consistent: each record is read again before it is judged.
  const fresh = (await Promise.all(records.map((r) => store.get(r.cluster, r)))).filter(
    (r): r is FeatureRecord => r !== undefined,
  );
  const blockers = unregisterBlockers(declaration, catalog, fresh, rollouts);
  if (blockers.length)
    throw new UnregisterError(`${key} cannot be unregistered yet:\n  ${blockers.join('\n  ')}`);
  if (!(await store.deleteDeclaration(declaration, declaration.registeredAt)))
    throw new UnregisterError(`${key} was registered again meanwhile: look at it and run unregister again`);
  const kept: string[] = [];
  const clusters: string[] = [];
  for (const r of fresh) {
    if (await store.forgetFeature(r.cluster, r)) clusters.push(r.cluster);
    else kept.push(r.cluster);
  }
  if (kept.length)
    throw new UnregisterError(
      `${key} is unregistered, but its record changed meanwhile in ${kept.join(', ')} and was kept: look at it there (features get)`,
    );
  return { clusters };
}
