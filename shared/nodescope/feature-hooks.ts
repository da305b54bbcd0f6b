/**
 * The nodescope feature's own tasks (KEP-3920 hooks), for what the built-in tasks cannot say: the VPA
 * condition and status summary fleetscope wrote (one entry of a list), and the scoped CRD variant,
 * reverted only once no VPA carries spec.scope any more (the KEP's story of a feature that adds a field).
 * Loaded only when a transition performs them.
 */

import { type KObject, ObjectsApi } from '../features/objects.js';
import type { LeftoverContext, TaskContext, TaskOutcome } from '../features/spec.js';
import { RawReader } from '../k8s/raw-reader.js';
import { VPA_CRD_NAME, vpaV1Version } from '../kernel/crds/vpa.js';
import { CONDITION_TYPE } from './publish.js';

export const VARIANT_ANNOTATION = 'fleetscope.io/variant';
const VPAS = { apiVersion: 'autoscaling.k8s.io/v1', resource: 'verticalpodautoscalers' };
const OURS = new Set(['NodeScope', 'NodeScopeRefused']);

interface Condition {
  type?: string;
  reason?: string;
}
type Vpa = KObject & {
  spec?: { scope?: string };
  status?: { conditions?: Condition[]; nodeScope?: unknown };
};

const ours = (c: Condition) => c.type === CONDITION_TYPE && OURS.has(c.reason ?? '');
const carriesOurs = (v: Vpa) => v.status?.nodeScope !== undefined || (v.status?.conditions ?? []).some(ours);
const nameOf = (o: KObject) => `${o.metadata?.namespace}/${o.metadata?.name}`;

/**
 * Removes fleetscope's RecommendationProvided condition and status.nodeScope from every VPA, and from a
 * VPA fleetscope sizes (it carries them) the recommendation and groups it published there too, which
 * upstream's updater and admission controller would go on acting on. The list is
 * replaced whole (a merge patch cannot remove one entry), so it is computed from the VPA as read and
 * written on that version only: a condition the recommender wrote in between makes the server refuse
 * it, and it is computed again from the VPA as it now is.
 */
export async function clearVpaStatus(ctx: TaskContext): Promise<TaskOutcome> {
  const api = await ctx.objects();
  const patchOf = (vpa: Vpa) =>
    carriesOurs(vpa)
      ? {
          status: {
            conditions: (vpa.status?.conditions ?? []).filter((c) => !ours(c)),
            nodeScope: null,
            recommendation: null,
            recommendationGroups: null,
            groups: null,
          },
        }
      : undefined;
  for (const vpa of (await api.list(VPAS)) as Vpa[])
    if (carriesOurs(vpa)) await api.patchAsRead(VPAS, vpa, (o) => patchOf(o as Vpa), 'status');
  return { done: true };
}

/** Puts the stock v1 schema back on a VPA CRD fleetscope gave spec.scope; waits while a VPA still has it. */
export async function revertScopedCrd(ctx: TaskContext): Promise<TaskOutcome> {
  const api = await ctx.objects();
  const crd = await scopedCrd(api);
  if (!crd) return { done: true };
  const scoped = ((await api.list(VPAS)) as Vpa[]).filter((v) => v.spec?.scope !== undefined);
  if (scoped.length)
    return {
      done: false,
      waitingFor: `${scoped.length} VPA(s) still set spec.scope (${scoped.slice(0, 5).map(nameOf).join(', ')}): the CRD keeps the field until none does`,
      pollMs: 60_000,
    };
  const { [VARIANT_ANNOTATION]: _v, ...annotations } = crd.metadata?.annotations ?? {};
  const versions = (crd.spec?.versions ?? []).map((v) =>
    v.name === 'v1' ? { ...v, ...vpaV1Version(), storage: v.storage ?? true } : v,
  );
  await new RawReader(api.client).send(
    'revert VPA CRD',
    'PUT',
    `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${VPA_CRD_NAME}`,
    { ...crd, metadata: { ...crd.metadata, annotations }, spec: { ...crd.spec, versions } },
  ); // counted by the task's write fence
  return { done: true };
}

type Crd = KObject & { spec?: { versions?: { name?: string; storage?: boolean }[] } };

async function scopedCrd(api: ObjectsApi): Promise<Crd | undefined> {
  const [crd] = (await api.list({
    apiVersion: 'apiextensions.k8s.io/v1',
    resource: 'customresourcedefinitions',
    name: VPA_CRD_NAME,
  })) as Crd[];
  return crd?.metadata?.annotations?.[VARIANT_ANNOTATION] === 'scope' ? crd : undefined;
}

/** What an Off nodescope may have left beyond what its tasks' own checks see. */
export async function nodescopeLeftovers(ctx: LeftoverContext): Promise<string[]> {
  const api = new ObjectsApi(await ctx.client());
  const out: string[] = [];
  const vpas = ((await api.list(VPAS)) as Vpa[]).filter(carriesOurs);
  if (vpas.length)
    out.push(
      `${vpas.length} VPA(s) carry fleetscope's condition or status.nodeScope: ${vpas.slice(0, 5).map(nameOf).join(', ')}`,
    );
  if (await scopedCrd(api)) out.push(`the VPA CRD is still fleetscope's variant with spec.scope`);
  return out;
}
