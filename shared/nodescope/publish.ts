/**
 * The cycle's in-cluster visibility (incluster.ts has the formats): the recommendation annotation on
 * each pod, the VPA's RecommendationProvided condition (and status.nodeScope with the scoped CRD), and
 * refused VPAs marked as such. Every write comes out of the cycle's budget, after the resizes.
 */

import { isDeepStrictEqual } from 'node:util';
import type { PodView } from '../cycle/views.js';
import { ClusterAccessError } from '../k8s/errors.js';
import type { VpaCrdFacts } from './collect.js';
import { type CycleRun, type DsOutcome, describe } from './cycle-run.js';
import { type FoundTargets, vpaKey } from './find-targets.js';
import {
  annotatePod,
  annotationStale,
  annotationValue,
  conditionMessage,
  currentCondition,
  patchVpaStatus,
  type StatusFields,
  type StatusSummary,
} from './incluster.js';
import type { VpaObject } from './k8s-types.js';
import type { ContainerRec, NodeRec } from './model.js';
import type { DsRecommendations } from './recommend.js';
import { statusGroups, statusRecommendation } from './status-groups.js';
import type { ClusterRecord, DsHead } from './store.js';
import { type NodeScopeTarget, type RejectedTarget, writesAllowed } from './targets.js';

export const CONDITION_TYPE = 'RecommendationProvided';

/**
 * Refused targets: logged once per VPA and reason (the cluster record remembers them), and said on the
 * VPA itself too (not under fleetscope.io/writes: none, which writes nothing). Returns those not
 * reported before.
 */
export async function publishRefusals(
  run: CycleRun,
  found: FoundTargets,
  clusterRec: ClusterRecord | undefined,
): Promise<RejectedTarget[]> {
  const known = new Set((clusterRec?.rejected ?? []).map((r) => `${r.uid}#${r.reason}`));
  const newly = found.rejected.filter((r) => !known.has(`${r.uid}#${r.reason}`));
  for (const r of newly)
    run.ctx.logger?.warn('VerticalPodAutoscaler asks for node scope but cannot have it', {
      namespace: r.namespace,
      vpa: r.vpa,
      targetRef: r.targetRef,
      reason: r.reason,
    });
  for (const r of found.rejected) {
    const vpa = found.vpas.get(vpaKey(r.namespace, r.vpa));
    if (!writesAllowed(vpa)) continue;
    const cond = currentCondition(vpa, CONDITION_TYPE);
    if (cond?.status === 'False' && cond.reason === 'NodeScopeRefused' && cond.message === r.reason) continue;
    if (!run.budget.take()) break;
    try {
      await patchVpaStatus(
        run.reader,
        { namespace: r.namespace, name: r.vpa },
        { type: CONDITION_TYPE, status: 'False', reason: 'NodeScopeRefused', message: r.reason },
        run.now,
        vpa,
      );
    } catch (err) {
      run.errors.push(`status of VPA ${r.namespace}/${r.vpa}: ${describe(err)}`);
    }
  }
  return newly;
}

/**
 * Whether a pod's annotation is stale, remembered per pod view while the same view (a kept list's pod
 * unchanged since) meets the same recommendation object (the stored one, kept with the base) and
 * tolerance: a steady cycle parses again only the annotations of pods or recommendations that changed.
 * Kept in a WeakMap on the view: it goes with the view.
 */
const staleness = new WeakMap<PodView, { rec: NodeRec; tolerance: number; stale: boolean }>();
export const stalenessStats = { computed: 0 };

export function staleFor(pod: PodView, rec: NodeRec, tolerance: number): boolean {
  const last = staleness.get(pod);
  if (last && last.rec === rec && last.tolerance === tolerance) return last.stale;
  stalenessStats.computed++;
  const stale = annotationStale(pod.annotation, rec, tolerance);
  staleness.set(pod, { rec, tolerance, stale });
  return stale;
}

/** Annotations: resized pods first, then the stalest; a pod gone since the list is skipped. */
export async function annotatePods(
  run: CycleRun,
  pods: ReadonlyMap<string, PodView>,
  recs: ReadonlyMap<string, NodeRec>,
  resized: ReadonlySet<string>,
  outcome: DsOutcome,
): Promise<void> {
  const toAnnotate: PodView[] = [];
  for (const [node, pod] of pods) {
    const rec = recs.get(node);
    if (!rec) continue;
    if (resized.has(node) || staleFor(pod, rec, run.settings.annotationTolerance)) toAnnotate.push(pod);
  }
  toAnnotate.sort(
    (a, b) =>
      Number(resized.has(b.node)) - Number(resized.has(a.node)) ||
      Number(!!a.annotation) - Number(!!b.annotation),
  );
  for (const pod of toAnnotate) {
    if (!run.budget.take()) break;
    try {
      const value = annotationValue(recs.get(pod.node) as NodeRec, run.now);
      await annotatePod(run.reader, pod.namespace, pod.name, value);
      outcome.annotated++;
    } catch (err) {
      if (err instanceof ClusterAccessError && err.status === 404) continue;
      throw err;
    }
  }
  run.phases.mark('annotate');
}

/**
 * The VPA's status: on each fold, and whenever the condition is missing; written only when it changed.
 * Besides the condition, in the CRD's shape (status-groups.ts): the DaemonSet-wide status.recommendation
 * (upstream's shape) and the groups where the CRD keeps them, rewritten whenever they differ from what
 * the VPA carries at a fold, or are missing; with the scoped CRD also status.nodeScope.
 */
export async function publishStatus(
  run: CycleRun,
  ds: { target: NodeScopeTarget; vpa: VpaObject | undefined; crd: VpaCrdFacts; folded: boolean },
  recs: DsRecommendations,
  stats: () => DsHead['stats'],
  outcome: DsOutcome,
  hostnames: ReadonlyMap<string, string>,
): Promise<void> {
  const { target, vpa } = ds;
  const cond = currentCondition(vpa, CONDITION_TYPE);
  const current = cond?.status === 'True' && cond.reason === 'NodeScope';
  const fields = publishedFields(target, vpa, ds.crd, recs, hostnames);
  const restate = (ds.folded || fieldsMissing(vpa, fields)) && fieldsStale(vpa, fields);
  if (!current || ds.folded || restate) {
    const summary = statusSummary(recs.recs, recs.dsWide, stats());
    const message = conditionMessage(summary);
    if ((cond?.message !== message || !current || restate) && run.budget.take()) {
      try {
        await patchVpaStatus(
          run.reader,
          target.vpa,
          { type: CONDITION_TYPE, status: 'True', reason: 'NodeScope', message },
          run.now,
          vpa,
          ds.crd.state === 'scoped'
            ? { ...fields, nodeScope: { ...summary, updatedAt: new Date(run.now).toISOString() } }
            : fields,
        );
        outcome.statusPatched = true;
      } catch (err) {
        run.ctx.logger?.warn('could not write the VPA status', {
          vpa: `${target.vpa.namespace}/${target.vpa.name}`,
          error: describe(err),
        });
      }
    }
  }
  run.phases.mark('status');
}

type Published = Omit<StatusFields, 'nodeScope'>;

/**
 * The recommendation and groups in the CRD's shape; null clears what the other shape left (a VPA whose
 * CRD changed shape). The stock CRD keeps no groups: the recommendation alone.
 */
function publishedFields(
  target: NodeScopeTarget,
  vpa: VpaObject | undefined,
  crd: VpaCrdFacts,
  recs: DsRecommendations,
  hostnames: ReadonlyMap<string, string>,
): Published {
  const groups = crd.groups ? statusGroups(target, recs, hostnames, crd.shape) : undefined;
  if (crd.shape === 'deckhouse')
    return {
      ...(groups ? { groups } : {}),
      ...(vpa?.status?.recommendation !== undefined ? { recommendation: null } : {}),
      ...(vpa?.status?.recommendationGroups !== undefined ? { recommendationGroups: null } : {}),
    };
  const fallback = !target.updaterEvicts && Object.keys(recs.dsWide).length > 0;
  return {
    ...(fallback ? { recommendation: statusRecommendation(recs.dsWide) } : {}),
    ...(!fallback && target.updaterEvicts && vpa?.status?.recommendation !== undefined
      ? { recommendation: null }
      : {}),
    ...(groups ? { recommendationGroups: groups } : {}),
    ...(vpa?.status?.groups !== undefined ? { groups: null } : {}),
  };
}

const carried = (vpa: VpaObject | undefined, k: keyof Published) => vpa?.status?.[k];

/** A field to publish that the VPA does not carry. */
const fieldsMissing = (vpa: VpaObject | undefined, f: Published) =>
  (Object.keys(f) as (keyof Published)[]).some((k) => f[k] !== null && carried(vpa, k) === undefined);

/** A field whose value differs from what the VPA carries (null: carried at all). */
const fieldsStale = (vpa: VpaObject | undefined, f: Published) =>
  (Object.keys(f) as (keyof Published)[]).some((k) =>
    f[k] === null ? carried(vpa, k) !== undefined : !isDeepStrictEqual(carried(vpa, k), f[k]),
  );

function statusSummary(
  recs: ReadonlyMap<string, NodeRec>,
  dsWide: Record<string, ContainerRec>,
  stats: DsHead['stats'],
): StatusSummary {
  const containers: StatusSummary['containers'] = {};
  let fallback = 0;
  for (const r of recs.values()) {
    if (r.source === 'fallback') fallback++;
    for (const [name, c] of Object.entries(r.containers)) {
      containers[name] ??= { min: {}, max: {}, daemonSetWide: { ...(dsWide[name]?.target ?? {}) } };
      const e = containers[name];
      for (const res of ['cpu', 'memory'] as const) {
        const v = c.target[res];
        if (v === undefined) continue;
        e.min[res] = Math.min(e.min[res] ?? v, v);
        e.max[res] = Math.max(e.max[res] ?? v, v);
      }
    }
  }
  return {
    nodes: recs.size,
    nodesWithHistory: recs.size - fallback,
    fallbackNodes: fallback,
    containers,
    perNodeTotal: { cpu: stats.perNodeCpu, memory: stats.perNodeMemory },
    daemonSetWideTotal: { cpu: stats.dsWideCpu, memory: stats.dsWideMemory },
  };
}
