/**
 * Every feature fleetscope knows: one per capability that declares a `feature` (next to its functions
 * in shared/<cap>/capability.ts) and the third-party features registered from files. A feature joins the
 * server flow, the CLI and the generic on -> use -> off test by being in this catalog, nothing else.
 */
import { CAPABILITIES } from '../capabilities.js';
import { type FeatureRef, refKey } from './model.js';
import type { FeatureSpec } from './spec.js';
import type { FeatureStore } from './store.js';

/**
 * The platform's core, which is not switched per cluster: the fan-out, the inventory (the health check
 * every other capability relies on), the per-cluster cycle that hosts capabilities, this lifecycle, and
 * the fleet report (read-only and fleet-wide: it is switched with the stack's schedules, not per cluster).
 * Every other capability must declare its feature (test/features/machine.test.ts holds it to that).
 */
export const PLATFORM_CORE = ['fleet', 'inventory', 'cycle', 'features', 'report'] as const;

export function builtinFeatures(): FeatureSpec[] {
  return CAPABILITIES.flatMap((c) => (c.feature ? [c.feature] : []));
}

export class FeatureCatalog {
  private readonly byKey: Map<string, FeatureSpec>;
  /** Every spec, with the features that require it (its `requiredBy`) derived from their `requires`. */
  readonly specs: readonly FeatureSpec[];

  constructor(specs: readonly FeatureSpec[]) {
    this.specs = withDependants(specs);
    this.byKey = new Map(this.specs.map((s) => [refKey(s), s]));
  }

  get(ref: FeatureRef): FeatureSpec | undefined {
    return this.byKey.get(refKey(ref));
  }

  /** The spec, or an error naming the features there are. */
  need(ref: FeatureRef): FeatureSpec {
    const spec = this.get(ref);
    if (!spec)
      throw new UnknownFeatureError(
        `unknown feature "${refKey(ref)}" (known: ${[...this.byKey.keys()].sort().join(', ')})`,
      );
    return spec;
  }
}

function withDependants(specs: readonly FeatureSpec[]): FeatureSpec[] {
  return specs.map((s) => {
    const by = specs.filter((o) => o.requires?.some((r) => refKey(r) === refKey(s)));
    const { requiredBy: _, ...rest } = s;
    return by.length
      ? { ...rest, requiredBy: by.map((o) => ({ namespace: o.namespace, name: o.name })) }
      : rest;
  });
}

export class UnknownFeatureError extends Error {
  override name = 'UnknownFeatureError';
}

/** The built-in features and the registered ones (a registration never replaces a built-in). */
export async function loadCatalog(store: FeatureStore): Promise<FeatureCatalog> {
  const builtins = builtinFeatures();
  const taken = new Set(builtins.map(refKey));
  const declared = (await store.listDeclarations()).filter((d) => !taken.has(refKey(d)));
  return new FeatureCatalog([...builtins, ...declared]);
}
