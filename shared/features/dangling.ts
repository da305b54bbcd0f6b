/**
 * What an Off feature still leaves in a cluster: the KEP's "on with dangling references", made visible.
 * Derived from the feature's own tasks, so an author writes no check: what a delete or a wait for no
 * objects names must be gone, no object may still carry a cleared field, no object an enable applied
 * may remain, no item under a cleared state prefix may be left (kept-on-request items excepted); plus
 * no use reporting "on", and whatever the feature's own leftovers check finds.
 */
import { FeatureMirror } from './mirror.js';
import type { FeatureRef, Use } from './model.js';
import { fieldAt, type KObject, type ObjectsApi } from './objects.js';
import { ownedQuery } from './owned.js';
import type { FeatureSpec, LeftoverContext } from './spec.js';
import { describeObjects, type TaskSpec } from './task-kinds.js';

export interface DanglingContext extends LeftoverContext {
  objects(): Promise<ObjectsApi>;
}

const names = (items: KObject[]) =>
  items
    .slice(0, 5)
    .map((o) => (o.metadata?.namespace ? `${o.metadata.namespace}/` : '') + (o.metadata?.name ?? '?'))
    .join(', ') + (items.length > 5 ? ', ...' : '');

/** Uses that say "on" (a component still using an Off feature). */
export const danglingUses = (uses: readonly Use[]): string[] =>
  uses
    .filter((u) => u.value === 'on')
    .map((u) => `use: ${u.component} reports on (${new Date(u.at).toISOString()})`);

/** The stored state under the feature's clear-state prefixes (no cluster needed). */
export async function danglingState(spec: FeatureSpec, ctx: Pick<LeftoverContext, 'cluster' | 'state'>) {
  const out: string[] = [];
  for (const t of spec.disable)
    if (t.task === 'clear-state')
      for (const prefix of t.prefixes) {
        const left = await ctx.state.left(ctx.cluster, prefix);
        if (left) out.push(`state: ${left} stored item(s) under ${prefix}`);
      }
  return out;
}

/** Objects the feature's tasks name that are still there. */
async function danglingObjects(spec: FeatureSpec, api: ObjectsApi): Promise<string[]> {
  const out: string[] = [];
  // A declared feature's deletes, clears and applies touch only what it created: the rest is not its.
  const owner = 'file' in spec.origin ? spec : undefined;
  for (const t of [...spec.disable, ...spec.enable]) out.push(...(await objectsOf(t, api, owner)));
  return out;
}

async function objectsOf(t: TaskSpec, api: ObjectsApi, owner: FeatureRef | undefined): Promise<string[]> {
  switch (t.task) {
    case 'delete-objects': {
      const left = await api.list(ownedQuery(t, owner));
      return left.length ? [`objects: ${left.length} ${describeObjects(t)}: ${names(left)}`] : [];
    }
    case 'wait-for-no-objects': {
      const left = await api.list(t);
      return left.length ? [`objects: ${left.length} ${describeObjects(t)}: ${names(left)}`] : [];
    }
    case 'clear-field': {
      const having = (await api.list(ownedQuery(t, owner))).filter((o) => fieldAt(o, t.field) !== undefined);
      return having.length
        ? [
            `objects: ${having.length} ${t.kind ?? t.resource} still carry ${t.field.join('.')}: ${names(having)}`,
          ]
        : [];
    }
    case 'apply-manifests': {
      const out: string[] = [];
      for (const m of t.manifests) {
        const q = {
          apiVersion: m.apiVersion,
          kind: m.kind,
          namespace: m.metadata.namespace,
          name: m.metadata.name,
        };
        if ((await api.list(ownedQuery(q, owner))).length)
          out.push(`objects: ${describeObjects(q)} (applied when it turned on)`);
      }
      return out;
    }
    default:
      return [];
  }
}

/**
 * Everything that dangles for an Off feature: its uses, its stored state and (with `live`, reading the
 * cluster) its objects, in-cluster uses and the feature's own leftovers. Deduplicated, in that order.
 */
export async function danglingOf(
  spec: FeatureSpec,
  ref: FeatureRef,
  uses: readonly Use[],
  ctx: DanglingContext,
  opts: { live: boolean },
): Promise<string[]> {
  const out = [...danglingUses(uses), ...(await danglingState(spec, ctx))];
  if (opts.live) {
    const api = await ctx.objects();
    out.push(...danglingUses(await new FeatureMirror(api).readUses(ref)));
    out.push(...(await danglingObjects(spec, api)));
    if (spec.leftovers) out.push(...(await spec.leftovers(ctx)));
  }
  return [...new Set(out)];
}
