/**
 * The objects a declared (third-party) feature may write: only those it created (issue 34, defect 1).
 * Whatever its file says, through this view
 *
 *   every object it applies carries the feature's ownership label (./harmless.ts OWNER_LABEL), and an
 *     object that exists without it (a user's ConfigMap, cluster-admin) is refused, never adopted;
 *   its deletes and clears select by that label, so a selector that matches everything (" ",
 *     "!nonexistent") still matches only what the feature made;
 *   a kind the operator did not allow at registration is refused when it is admission, RBAC or
 *     cluster-scoped (asked of discovery, so a custom cluster-scoped kind is caught too).
 *
 * fleetscope's own features (their hooks and tasks remove fleetscope's marks from users' objects: a
 * VPA's field, a pod's annotation) use ObjectsApi directly.
 */
import { guardOf, OWNER_LABEL, ownerValue, refusedKindMessage } from './harmless.js';
import type { FeatureRef } from './model.js';
import type { KObject, ObjectsApi, ObjectsQuery } from './objects.js';

/** What the built-in tasks do with objects (ObjectsApi, or a declared feature's owned view of it). */
export type TaskObjects = Pick<ObjectsApi, 'list' | 'delete' | 'patchAsRead' | 'apply'>;

export class NotOwnedError extends Error {
  override name = 'NotOwnedError';
}

export const isOwnedBy = (o: KObject, owner: FeatureRef) =>
  o.metadata?.labels?.[OWNER_LABEL] === ownerValue(owner);

/** The query narrowed to the objects `owner` created (the selector and the ownership label, ANDed). */
export function ownedQuery<Q extends ObjectsQuery>(q: Q, owner: FeatureRef | undefined): Q {
  if (!owner) return q;
  const mine = `${OWNER_LABEL}=${ownerValue(owner)}`;
  const given = q.selector?.trim();
  return { ...q, selector: given ? `${given},${mine}` : mine };
}

/** The manifest as a declared feature creates it: with its ownership label. */
export function labelled(manifest: KObject, owner: FeatureRef): KObject {
  return {
    ...manifest,
    metadata: {
      ...manifest.metadata,
      labels: { ...manifest.metadata?.labels, [OWNER_LABEL]: ownerValue(owner) },
    },
  };
}

/** Why an existing object may not be taken over by `owner`'s apply (undefined: it is its own). */
export function notOwned(live: KObject, owner: FeatureRef): string | undefined {
  if (isOwnedBy(live, owner)) return undefined;
  const ns = live.metadata?.namespace ? `${live.metadata.namespace}/` : '';
  return `${live.kind ?? 'object'} ${ns}${live.metadata?.name} exists and was not created by feature ${owner.namespace}/${owner.name} (no label ${OWNER_LABEL}=${ownerValue(owner)}): a declared feature never takes over an object; rename its manifest, or remove that object if it is a leftover`;
}

export class OwnedObjects implements TaskObjects {
  constructor(
    private readonly api: ObjectsApi,
    private readonly owner: FeatureRef,
    private readonly allowKinds: readonly string[] = [],
  ) {}

  private owned(q: ObjectsQuery): ObjectsQuery {
    return ownedQuery(q, this.owner);
  }

  async list(q: ObjectsQuery): Promise<KObject[]> {
    await this.guard(q);
    return this.api.list(this.owned(q));
  }

  async delete(q: ObjectsQuery, obj: KObject): Promise<boolean> {
    await this.guard(q);
    if (!isOwnedBy(obj, this.owner)) return false;
    return this.api.delete(this.owned(q), obj);
  }

  async patchAsRead(
    q: ObjectsQuery,
    obj: KObject,
    patchOf: (live: KObject) => Record<string, unknown> | undefined,
    subresource?: 'status',
  ): Promise<boolean> {
    await this.guard(q);
    // Read again after a conflict: the label may have been taken off meanwhile.
    const ownedPatch = (live: KObject) => (isOwnedBy(live, this.owner) ? patchOf(live) : undefined);
    return this.api.patchAsRead(this.owned(q), obj, ownedPatch, subresource);
  }

  /** Creates the object with the ownership label; one that exists is patched only if it carries it. */
  async apply(manifest: KObject): Promise<'created' | 'updated' | 'unchanged'> {
    const q = { apiVersion: String(manifest.apiVersion), kind: String(manifest.kind) };
    await this.guard(q);
    return this.api.apply(labelled(manifest, this.owner), {
      adopt: (live) => {
        const why = notOwned(live, this.owner);
        if (why) throw new NotOwnedError(why);
      },
    });
  }

  /** Refuses a kind that needs the operator's allowance: named ones, and any cluster-scoped one. */
  private async guard(q: ObjectsQuery): Promise<void> {
    const r = await this.api.resolve(q);
    const kind = r?.kind ?? q.kind ?? q.resource ?? '?';
    const named = guardOf(kind, this.allowKinds);
    if (named) throw new NotOwnedError(refusedKindMessage(kind, named));
    if (r && !r.namespaced && !this.allowKinds.includes(kind))
      throw new NotOwnedError(
        refusedKindMessage(kind, 'cluster-scoped: it reaches past the feature namespace'),
      );
  }
}
