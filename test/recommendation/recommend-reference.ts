/**
 * The original recommend() of shared/recommendation/index.ts (every container's states merged into a
 * fresh aggregate, options resolved and estimators built at every call, limits in bigint), kept
 * verbatim as the oracle of the optimised one. It uses the library's building blocks, which the VPA
 * vectors test on their own.
 */
import type { Bytes, Millicores } from '../../shared/kernel/units.js';
import type {
  ContainerRecommendation,
  ContainerToRecommend,
  RecommenderOptions,
  ResourceAmounts,
} from '../../shared/recommendation/index.js';
import {
  applyVpaPolicy,
  capToContainerLimits,
  proportionalLimit,
} from '../../shared/recommendation/logic/capping.js';
import { resolveOptions } from '../../shared/recommendation/logic/options.js';
import {
  createPodResourceRecommender,
  getRecommendedPodResources,
  type RecommenderInput,
  roundResources,
} from '../../shared/recommendation/logic/recommender.js';
import { mergeAggregates, ScopeState } from '../../shared/recommendation/model/scope.js';
import { RESOURCE_NAMES, type Resources } from '../../shared/recommendation/model/types.js';

const toArray = (s: ScopeState | readonly ScopeState[]): readonly ScopeState[] =>
  s instanceof ScopeState ? [s] : (s as readonly ScopeState[]);

function branded(r: Resources): ResourceAmounts {
  const out: ResourceAmounts = {};
  if (r.cpu !== undefined) out.cpu = r.cpu as Millicores;
  if (r.memory !== undefined) out.memory = r.memory as Bytes;
  return out;
}

/**
 * Recommends for one pod's containers, as upstream's recommender would for a VPA whose pods are these
 * (the per-node scope of KEP-4943). Containers with mode Off, and containers without any CPU sample, get
 * no recommendation and do not count in the pod-minimum split (upstream GetContainerNameToAggregateStateMap).
 * The result is sorted by container name. Integer millicores and bytes, truncated as upstream truncates.
 */
export function referenceRecommend(
  containers: readonly ContainerToRecommend[],
  options?: RecommenderOptions,
): ContainerRecommendation[] {
  const { estimation } = resolveOptions(options);
  const names = new Set<string>();
  const inputs = new Map<string, RecommenderInput>();
  const byName = new Map<string, ContainerToRecommend>();
  for (const c of containers) {
    if (names.has(c.name)) throw new RangeError(`container ${JSON.stringify(c.name)} is listed twice`);
    names.add(c.name);
    if (c.policy?.mode === 'Off') continue;
    const merged = mergeAggregates(toArray(c.state).map((s) => s.aggregate));
    if (merged.totalSamplesCount <= 0) continue;
    const input: RecommenderInput = { state: merged };
    inputs.set(
      c.name,
      c.policy?.controlledResources ? { ...input, controlledResources: c.policy.controlledResources } : input,
    );
    byName.set(c.name, c);
  }
  const raw = getRecommendedPodResources(createPodResourceRecommender(estimation), inputs, estimation);
  const out: ContainerRecommendation[] = [];
  for (const name of [...raw.keys()].sort()) {
    const rec = raw.get(name);
    const c = byName.get(name);
    if (!rec || !c) continue;
    const rounded = {
      target: roundResources(rec.target, estimation),
      lowerBound: roundResources(rec.lowerBound, estimation),
      upperBound: roundResources(rec.upperBound, estimation),
    };
    const uncappedTarget = rounded.target;
    let capped = applyVpaPolicy(rounded, c.policy, estimation.globalMaxAllowed);
    const annotations: string[] = [];
    const controlledValues = c.policy?.controlledValues ?? 'RequestsAndLimits';
    let limits: ResourceAmounts | undefined;
    if (controlledValues === 'RequestsOnly' && c.limits) {
      // What admission and the updater apply: requests never above the limit they leave alone.
      const currentLimits = c.limits;
      capped = {
        target: capToContainerLimits(capped.target, currentLimits, annotations),
        lowerBound: capToContainerLimits(capped.lowerBound, currentLimits),
        upperBound: capToContainerLimits(capped.upperBound, currentLimits),
      };
    } else if (controlledValues === 'RequestsAndLimits' && c.limits) {
      const l: Resources = {};
      for (const r of RESOURCE_NAMES) {
        const target = capped.target[r];
        if (target === undefined) continue;
        const original = c.limits[r];
        const request = c.requests?.[r];
        const p = proportionalLimit(
          r,
          original === undefined ? undefined : BigInt(original),
          request === undefined ? undefined : BigInt(request),
          BigInt(target),
        );
        if (p.annotation) annotations.push(p.annotation);
        if (p.limit !== undefined) l[r] = Number(p.limit);
      }
      if (Object.keys(l).length > 0) limits = branded(l);
    }
    out.push({
      name,
      target: branded(capped.target),
      lowerBound: branded(capped.lowerBound),
      upperBound: branded(capped.upperBound),
      uncappedTarget: branded(uncappedTarget),
      ...(limits ? { limits } : {}),
      annotations,
    });
  }
  return out;
}
