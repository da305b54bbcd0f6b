/**
 * The pod-level recommender (upstream logic/recommender.go, routines/vpa.go, spec §4.2 and §4.4): the
 * six estimator chains, the pod minimum split across the recommended containers, the controlled-resource
 * filter and the --round-* flags.
 */
import type { ResourceName, Resources } from '../model/types.js';
import {
  cpuAmountFromCores,
  memoryAmountFromBytes,
  resourceAmountMax,
  roundUpToScale,
  scaleResource,
} from '../model/types.js';
import {
  type EstimationInput,
  type Estimator,
  percentileCpuEstimator,
  percentileMemoryEstimator,
  withConfidenceMultiplier,
  withMargin,
} from './estimator.js';
import type { EstimationOptions } from './options.js';

export interface RecommendedContainerResources {
  target: Resources;
  lowerBound: Resources;
  upperBound: Resources;
}

export interface PodResourceRecommender {
  readonly targetCpu: Estimator;
  readonly targetMemory: Estimator;
  readonly lowerBoundCpu: Estimator;
  readonly lowerBoundMemory: Estimator;
  readonly upperBoundCpu: Estimator;
  readonly upperBoundMemory: Estimator;
}

/**
 * CreatePodResourceRecommender: percentile + margin for all three; the upper bound × (1 + 1/c), the
 * lower bound × (1 + 0.001/c)^-2, with c the confidence in days.
 */
export function createPodResourceRecommender(o: EstimationOptions): PodResourceRecommender {
  const margin = o.marginFraction;
  return {
    targetCpu: withMargin(margin, percentileCpuEstimator(o.targetCpuPercentile)),
    targetMemory: withMargin(margin, percentileMemoryEstimator(o.targetMemoryPercentile)),
    lowerBoundCpu: withConfidenceMultiplier(
      0.001,
      -2.0,
      o.confidenceIntervalCpu,
      withMargin(margin, percentileCpuEstimator(o.lowerBoundCpuPercentile)),
    ),
    lowerBoundMemory: withConfidenceMultiplier(
      0.001,
      -2.0,
      o.confidenceIntervalMemory,
      withMargin(margin, percentileMemoryEstimator(o.lowerBoundMemoryPercentile)),
    ),
    upperBoundCpu: withConfidenceMultiplier(
      1.0,
      1.0,
      o.confidenceIntervalCpu,
      withMargin(margin, percentileCpuEstimator(o.upperBoundCpuPercentile)),
    ),
    upperBoundMemory: withConfidenceMultiplier(
      1.0,
      1.0,
      o.confidenceIntervalMemory,
      withMargin(margin, percentileMemoryEstimator(o.upperBoundMemoryPercentile)),
    ),
  };
}

export const DEFAULT_CONTROLLED_RESOURCES: readonly ResourceName[] = ['cpu', 'memory'];

export interface RecommenderInput {
  readonly state: EstimationInput;
  /** Defaults to [cpu, memory]. */
  readonly controlledResources?: readonly ResourceName[];
}

/** The per-container pod minimum: podMin × 1/N, each step truncating (25m over 2 containers is 12m). */
export function podMinimums(o: EstimationOptions, containers: number): { cpu: number; memory: number } {
  const fraction = 1.0 / containers;
  return {
    cpu: scaleResource(cpuAmountFromCores(o.podMinCpuMillicores * 0.001), fraction),
    memory: scaleResource(memoryAmountFromBytes(o.podMinMemoryMb * 1024 * 1024), fraction),
  };
}

/**
 * GetRecommendedPodResources. `containers` must already be filtered as upstream filters them (mode Off
 * and containers without CPU samples removed): N, the divisor of the pod minimum, is its size.
 */
export function getRecommendedPodResources(
  recommender: PodResourceRecommender,
  containers: ReadonlyMap<string, RecommenderInput>,
  o: EstimationOptions,
): Map<string, RecommendedContainerResources> {
  const result = new Map<string, RecommendedContainerResources>();
  if (containers.size === 0) return result;
  const min = podMinimums(o, containers.size);
  const r = recommender;
  for (const [name, { state, controlledResources }] of containers) {
    const controlled = controlledResources ?? DEFAULT_CONTROLLED_RESOURCES;
    // withMinResource(min, estimator)(state), without building the closures at every call.
    const target = {
      cpu: resourceAmountMax(r.targetCpu(state), min.cpu),
      memory: resourceAmountMax(r.targetMemory(state), min.memory),
    };
    const lowerBound = {
      cpu: resourceAmountMax(r.lowerBoundCpu(state), min.cpu),
      memory: resourceAmountMax(r.lowerBoundMemory(state), min.memory),
    };
    const upperBound = {
      cpu: resourceAmountMax(r.upperBoundCpu(state), min.cpu),
      memory: resourceAmountMax(r.upperBoundMemory(state), min.memory),
    };
    result.set(name, {
      target: filterControlledResources(target, controlled),
      lowerBound: filterControlledResources(lowerBound, controlled),
      upperBound: filterControlledResources(upperBound, controlled),
    });
  }
  return result;
}

/** FilterControlledResources: keeps only the listed resources. */
export function filterControlledResources(
  estimation: Resources,
  controlled: readonly ResourceName[],
): Resources {
  const result: Resources = {};
  for (const r of controlled) {
    const v = estimation[r];
    if (v !== undefined) result[r] = v;
  }
  return result;
}

/** The --round-cpu-millicores / --round-memory-bytes step of ResourcesAsResourceList: up, non-zero only. */
export function roundResources(r: Resources, o: EstimationOptions): Resources {
  const out: Resources = { ...r };
  if (out.cpu !== undefined && o.roundCpuMillicores !== 1 && out.cpu !== 0)
    out.cpu = roundUpToScale(out.cpu, o.roundCpuMillicores);
  if (out.memory !== undefined && o.roundMemoryBytes !== 1 && out.memory !== 0)
    out.memory = roundUpToScale(out.memory, o.roundMemoryBytes);
  return out;
}
