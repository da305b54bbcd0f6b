/**
 * Setting a feature's desired value for a cluster (the operator's `features set`, or a rollout's wave):
 * one conditional write of the record, retried on a fresh read when the reconciler wrote in between. A
 * cluster that has no record yet gets one (Off) carrying the value; the reconciler starts the transition.
 */
import { blank, withDesired } from './machine.js';
import type { DesiredOptions, FeatureRecord, Value } from './model.js';
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

const sameOptions = (a: DesiredOptions | undefined, b: DesiredOptions) =>
  Boolean(a?.keepState) === Boolean(b.keepState);
