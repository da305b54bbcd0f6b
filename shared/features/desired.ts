/**
 * Setting a feature's desired value for a cluster (the operator's `features set`, or a rollout's wave):
 * one conditional write of the record, retried on a fresh read when the reconciler wrote in between. A
 * cluster that has no record yet gets one (Off) carrying the value; the reconciler starts the transition.
 */

import type { FeatureCatalog } from './catalog.js';
import { blank, withDesired } from './machine.js';
import {
  type DesiredOptions,
  type FeatureRecord,
  type FeatureRef,
  refKey,
  targetOf,
  type Value,
} from './model.js';
import type { FeatureSpec } from './spec.js';
import type { FeatureStore } from './store.js';

export interface DesiredChange {
  record: FeatureRecord;
  /** False when the record already said so (nothing written). */
  changed: boolean;
}

export async function setDesired(
  store: FeatureStore,
  spec: FeatureSpec,
  cluster: string,
  desired: Value | undefined,
  by: string,
  options: DesiredOptions,
  now: number,
): Promise<DesiredChange> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const current = await store.get(cluster, spec);
    const base = current ?? blank(cluster, spec, now);
    if (base.desired === desired && sameOptions(base.options, options) && current)
      return { record: current, changed: false };
    const next = withDesired(base, desired, by, options, now);
    if (current ? await store.save(next, current.version) : await store.create(next))
      return { record: next, changed: true };
  }
  throw new Error(`feature ${spec.namespace}/${spec.name} of cluster ${cluster} kept changing; try again`);
}

/**
 * Sets the desired value of a feature and, when that turns it on, first turns on each of its
 * requirements (theirs before them) that would otherwise be off, by `requires/<feature>`: the feature's
 * own transition waits for them to be On. Turning a feature off sets only it: its requirements stay on,
 * and a requirement turned off waits for its dependants to be Off. Returns every change, in order.
 */
export async function setDesiredInOrder(
  store: FeatureStore,
  catalog: FeatureCatalog,
  spec: FeatureSpec,
  cluster: string,
  desired: Value | undefined,
  by: string,
  options: DesiredOptions,
  now: number,
): Promise<{ spec: FeatureSpec; change: DesiredChange }[]> {
  const out: { spec: FeatureSpec; change: DesiredChange }[] = [];
  if ((desired ?? spec.default) === 'on')
    for (const req of requirementsInOrder(catalog, spec)) {
      const record = await store.get(cluster, req);
      if (targetOf(record ?? req) === 'on') continue;
      out.push({
        spec: req,
        change: await setDesired(store, req, cluster, 'on', `requires/${refKey(spec)}`, {}, now),
      });
    }
  out.push({ spec, change: await setDesired(store, spec, cluster, desired, by, options, now) });
  return out;
}

/** Every feature `spec` requires, directly or not, each after its own requirements (cycles are refused at registration). */
export const requirementsInOrder = (catalog: FeatureCatalog, spec: FeatureSpec): FeatureSpec[] =>
  walk(catalog, spec, (f) => f.requires);

/** The features that require `spec`, directly or not, each after those that require it. */
export const dependantsInOrder = (catalog: FeatureCatalog, spec: FeatureSpec): FeatureSpec[] =>
  walk(catalog, spec, (f) => f.requiredBy);

/** Depth first along `next`, each feature once and after what it leads to. */
function walk(
  catalog: FeatureCatalog,
  spec: FeatureSpec,
  next: (f: FeatureSpec) => readonly FeatureRef[] | undefined,
  seen = new Set<string>(),
): FeatureSpec[] {
  const out: FeatureSpec[] = [];
  for (const r of next(spec) ?? []) {
    const f = catalog.get(r);
    if (!f || seen.has(refKey(f))) continue;
    seen.add(refKey(f));
    out.push(...walk(catalog, f, next, seen), f);
  }
  return out;
}

/** The order `features get` shows: what turns on before it, and what turns off before it. */
export function orderOf(
  catalog: FeatureCatalog,
  spec: FeatureSpec,
): { on: string[]; off: string[] } | undefined {
  const on = requirementsInOrder(catalog, spec);
  const off = dependantsInOrder(catalog, spec);
  if (!on.length && !off.length) return undefined;
  return { on: [...on, spec].map(refKey), off: [...off, spec].map(refKey) };
}

const sameOptions = (a: DesiredOptions | undefined, b: DesiredOptions) =>
  Boolean(a?.keepState) === Boolean(b.keepState);
