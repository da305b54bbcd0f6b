/**
 * The cluster before a feature was turned on against the cluster after it was turned off, both ways
 * (issue 16, finding 9): objects created and left behind, objects that were there before and are gone,
 * objects the user made meanwhile that are gone, and labels, annotations or spec fields added, removed
 * or changed, unless the exercise says why the feature may leave them so. Watching the simulator's
 * store, so "before" is each object as it was when first touched, and nothing is sampled.
 */
import { isDeepStrictEqual } from 'node:util';
import type { StoreEvent } from '../../local/sim/store.js';
import type { FeatureEnv } from './helpers.js';

/** What may differ after off, each with its reason in the exercise. */
export interface Allowed {
  /** Objects (collection/key) created since on that may stay. */
  outlives?: RegExp[];
  /** "collection/key change" ("label k added", "spec.k changed") that the feature may leave. */
  changes?: RegExp[];
  /** Objects the user made while using it: they must still be there after off. */
  keeps?: RegExp[];
}

/** fleetscope's own mirror of the records (the Feature CRD, its objects, its namespace), its owner lease and Events. */
const ALWAYS_OUTLIVES = [
  /^events\//,
  /^customresourcedefinitions\.apiextensions\.k8s\.io\/features\.fleetscope\.io$/,
  /^features\.fleetscope\.io\//,
  /^namespaces\/fleetscope-system$/,
  /^[a-z.]+\/fleetscope-system\//, // what the namespace's controllers put in it (ServiceAccount, CA bundle)
  // The control plane's claim on the cluster (one owner per cluster), held whatever features are on.
  /^leases\.coordination\.k8s\.io\/fleetscope-system\/fleetscope-owner$/,
];

export type Obj = { metadata?: { labels?: object; annotations?: object }; spec?: object };

export function watchCluster(env: FeatureEnv, cluster: string) {
  const store = env.sim.state(cluster).store;
  const before = new Map<string, Obj>();
  const created = new Set<string>();
  const unsubscribe = store.subscribe((e: StoreEvent) => {
    const id = `${e.collection}/${e.key}`;
    if (e.type === 'ADDED' && !before.has(id)) created.add(id);
    else if (e.prev && !before.has(id) && !created.has(id)) before.set(id, e.prev as Obj);
  });
  const current = (id: string) => {
    const [collection, ...key] = id.split('/');
    return store.get(collection!, key.join('/')) as Obj | undefined;
  };
  return {
    unsubscribe,
    /** Every difference the feature may not leave, in words ([] when it left the cluster as it was). */
    damage: (allowed: Allowed) => damageOf(created, before, current, allowed),
  };
}

/**
 * The differences in words: `created` (ids made since before), `before` (each touched object as it was),
 * `current` (each as it is now, undefined when gone).
 */
export function damageOf(
  created: Iterable<string>,
  before: ReadonlyMap<string, Obj>,
  current: (id: string) => Obj | undefined,
  allowed: Allowed,
): string[] {
  const matches = (rs: RegExp[] | undefined, s: string) => (rs ?? []).some((r) => r.test(s));
  const outlives = (id: string) => matches(ALWAYS_OUTLIVES, id) || matches(allowed.outlives, id);
  const out: string[] = [];
  for (const id of created) {
    if (current(id) && !outlives(id)) out.push(`created and left: ${id}`);
    if (!current(id) && matches(allowed.keeps, id)) out.push(`deleted the user's ${id}`);
  }
  for (const [id, was] of before) {
    if (matches(ALWAYS_OUTLIVES, id)) continue;
    const now = current(id);
    if (!now) out.push(`deleted: ${id}`);
    else
      out.push(
        ...fieldChanges(was, now)
          .filter((f) => !matches(allowed.changes, `${id} ${f}`))
          .map((f) => `${f} on ${id}`),
      );
  }
  return out;
}

/** Labels, annotations and top-level spec fields added, removed or changed, as "label k added". */
export function fieldChanges(was: Obj, now: Obj): string[] {
  return [
    ...mapChanges('label', was.metadata?.labels, now.metadata?.labels),
    ...mapChanges('annotation', was.metadata?.annotations, now.metadata?.annotations),
    ...mapChanges('spec', was.spec, now.spec, '.'),
  ];
}

function mapChanges(what: string, a: object | undefined, b: object | undefined, sep = ' '): string[] {
  const x = (a ?? {}) as Record<string, unknown>;
  const y = (b ?? {}) as Record<string, unknown>;
  return [...new Set([...Object.keys(x), ...Object.keys(y)])].flatMap((k) => {
    const field = `${what}${sep}${k}`;
    if (!(k in x)) return [`${field} added`];
    if (!(k in y)) return [`${field} removed`];
    return isDeepStrictEqual(x[k], y[k]) ? [] : [`${field} changed`];
  });
}
