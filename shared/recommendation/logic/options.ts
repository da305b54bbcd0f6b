/**
 * The recommender's settings, named after upstream's flags in camelCase (spec §6), with upstream's
 * defaults. Durations are Go duration strings ("24h", "1h30m", "500ms").
 *
 * Two groups: the aggregation settings shape a state as samples arrive (they are fixed when the state
 * is created and travel with it); the estimation settings apply when a recommendation is computed.
 */
import type { Bytes, Millicores } from '../../kernel/units.js';
import { DurationError, type GoDuration, parseGoDuration } from '../gotime.js';
import { type AggregationsConfig, DEFAULT_AGGREGATIONS_CONFIG } from '../model/aggregations-config.js';

export interface RecommenderOptions {
  /** --target-cpu-percentile (0.9). */
  targetCpuPercentile?: number;
  /** --recommendation-lower-bound-cpu-percentile (0.5). */
  recommendationLowerBoundCpuPercentile?: number;
  /** --recommendation-upper-bound-cpu-percentile (0.95). */
  recommendationUpperBoundCpuPercentile?: number;
  /** --target-memory-percentile (0.9). */
  targetMemoryPercentile?: number;
  /** --recommendation-lower-bound-memory-percentile (0.5). */
  recommendationLowerBoundMemoryPercentile?: number;
  /** --recommendation-upper-bound-memory-percentile (0.95). */
  recommendationUpperBoundMemoryPercentile?: number;
  /** --recommendation-margin-fraction (0.15). */
  recommendationMarginFraction?: number;
  /** --pod-recommendation-min-cpu-millicores (25), split across the pod's containers. */
  podRecommendationMinCpuMillicores?: number;
  /** --pod-recommendation-min-memory-mb (250; MiB), split across the pod's containers. */
  podRecommendationMinMemoryMb?: number;
  /** --confidence-interval-cpu ("24h"). */
  confidenceIntervalCpu?: string;
  /** --confidence-interval-memory ("24h"). */
  confidenceIntervalMemory?: string;
  /** --round-cpu-millicores (1): round recommendations up to a multiple. */
  roundCpuMillicores?: number;
  /** --round-memory-bytes (1). */
  roundMemoryBytes?: number;
  /** --container-recommendation-max-allowed-cpu (unset): fills a policy's maxAllowed.cpu when missing. */
  containerRecommendationMaxAllowedCpu?: Millicores;
  /** --container-recommendation-max-allowed-memory (unset). */
  containerRecommendationMaxAllowedMemory?: Bytes;
  /** --cpu-histogram-decay-half-life ("24h"). */
  cpuHistogramDecayHalfLife?: string;
  /** --memory-histogram-decay-half-life ("24h"). */
  memoryHistogramDecayHalfLife?: string;
  /** --memory-aggregation-interval ("24h"). */
  memoryAggregationInterval?: string;
  /** --memory-aggregation-interval-count (8). */
  memoryAggregationIntervalCount?: number;
  /** --oom-bump-up-ratio (1.2). */
  oomBumpUpRatio?: number;
  /** --oom-min-bump-up-bytes (104857600), called oomMinBumpUp in PerVPAConfig. */
  oomMinBumpUp?: number;
  /** The flag's own name; an alias of oomMinBumpUp. */
  oomMinBumpUpBytes?: number;
}

export interface EstimationOptions {
  readonly targetCpuPercentile: number;
  readonly lowerBoundCpuPercentile: number;
  readonly upperBoundCpuPercentile: number;
  readonly targetMemoryPercentile: number;
  readonly lowerBoundMemoryPercentile: number;
  readonly upperBoundMemoryPercentile: number;
  readonly marginFraction: number;
  readonly podMinCpuMillicores: number;
  readonly podMinMemoryMb: number;
  readonly confidenceIntervalCpu: GoDuration;
  readonly confidenceIntervalMemory: GoDuration;
  readonly roundCpuMillicores: number;
  readonly roundMemoryBytes: number;
  readonly globalMaxAllowed: { readonly cpu?: number; readonly memory?: number };
}

export const DEFAULT_ESTIMATION_OPTIONS: EstimationOptions = Object.freeze({
  targetCpuPercentile: 0.9,
  lowerBoundCpuPercentile: 0.5,
  upperBoundCpuPercentile: 0.95,
  targetMemoryPercentile: 0.9,
  lowerBoundMemoryPercentile: 0.5,
  upperBoundMemoryPercentile: 0.95,
  marginFraction: 0.15,
  podMinCpuMillicores: 25,
  podMinMemoryMb: 250,
  confidenceIntervalCpu: 24n * 3_600_000_000_000n,
  confidenceIntervalMemory: 24n * 3_600_000_000_000n,
  roundCpuMillicores: 1,
  roundMemoryBytes: 1,
  globalMaxAllowed: Object.freeze({}),
});

export interface ResolvedOptions {
  readonly estimation: EstimationOptions;
  readonly aggregations: AggregationsConfig;
}

/** A bad option; `field` is its name in RecommenderOptions. */
export class OptionsError extends Error {
  override name = 'OptionsError';
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

type NumberRule = 'finite' | 'nonNegative' | 'positiveInteger' | 'nonNegativeInteger';

function num(
  o: RecommenderOptions,
  field: keyof RecommenderOptions,
  fallback: number,
  rule: NumberRule,
): number {
  const v = o[field];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new OptionsError(field, 'must be a finite number');
  if (rule === 'nonNegative' && v < 0) throw new OptionsError(field, 'must not be negative');
  if (rule === 'positiveInteger' && !(Number.isSafeInteger(v) && v > 0))
    throw new OptionsError(field, 'must be a positive integer');
  if (rule === 'nonNegativeInteger' && !(Number.isSafeInteger(v) && v >= 0))
    throw new OptionsError(field, 'must be a non-negative integer');
  return v;
}

function duration(o: RecommenderOptions, field: keyof RecommenderOptions, fallback: GoDuration): GoDuration {
  const v = o[field];
  if (v === undefined) return fallback;
  if (typeof v !== 'string') throw new OptionsError(field, 'must be a Go duration string such as "24h"');
  let d: GoDuration;
  try {
    d = parseGoDuration(v);
  } catch (e) {
    if (e instanceof DurationError) throw new OptionsError(field, `not a Go duration: ${e.message}`);
    throw e;
  }
  if (d <= 0n) throw new OptionsError(field, 'must be a positive duration');
  return d;
}

/** Validates options and fills upstream's defaults. Throws OptionsError naming the bad field. */
export function resolveOptions(options: RecommenderOptions = {}): ResolvedOptions {
  if (options.oomMinBumpUp !== undefined && options.oomMinBumpUpBytes !== undefined)
    throw new OptionsError('oomMinBumpUpBytes', 'give oomMinBumpUp or oomMinBumpUpBytes, not both');
  return { estimation: resolveEstimation(options), aggregations: resolveAggregations(options) };
}

/** The estimators' settings: percentiles, margin, pod minimums, confidence, rounding, caps. */
function resolveEstimation(o: RecommenderOptions): ResolvedOptions['estimation'] {
  const e = DEFAULT_ESTIMATION_OPTIONS;
  const globalMaxAllowed: { cpu?: number; memory?: number } = {};
  if (o.containerRecommendationMaxAllowedCpu !== undefined)
    globalMaxAllowed.cpu = num(o, 'containerRecommendationMaxAllowedCpu', 0, 'nonNegativeInteger');
  if (o.containerRecommendationMaxAllowedMemory !== undefined)
    globalMaxAllowed.memory = num(o, 'containerRecommendationMaxAllowedMemory', 0, 'nonNegativeInteger');
  return Object.freeze({
    targetCpuPercentile: num(o, 'targetCpuPercentile', e.targetCpuPercentile, 'finite'),
    lowerBoundCpuPercentile: num(
      o,
      'recommendationLowerBoundCpuPercentile',
      e.lowerBoundCpuPercentile,
      'finite',
    ),
    upperBoundCpuPercentile: num(
      o,
      'recommendationUpperBoundCpuPercentile',
      e.upperBoundCpuPercentile,
      'finite',
    ),
    targetMemoryPercentile: num(o, 'targetMemoryPercentile', e.targetMemoryPercentile, 'finite'),
    lowerBoundMemoryPercentile: num(
      o,
      'recommendationLowerBoundMemoryPercentile',
      e.lowerBoundMemoryPercentile,
      'finite',
    ),
    upperBoundMemoryPercentile: num(
      o,
      'recommendationUpperBoundMemoryPercentile',
      e.upperBoundMemoryPercentile,
      'finite',
    ),
    marginFraction: num(o, 'recommendationMarginFraction', e.marginFraction, 'finite'),
    podMinCpuMillicores: num(o, 'podRecommendationMinCpuMillicores', e.podMinCpuMillicores, 'nonNegative'),
    podMinMemoryMb: num(o, 'podRecommendationMinMemoryMb', e.podMinMemoryMb, 'nonNegative'),
    confidenceIntervalCpu: duration(o, 'confidenceIntervalCpu', e.confidenceIntervalCpu),
    confidenceIntervalMemory: duration(o, 'confidenceIntervalMemory', e.confidenceIntervalMemory),
    roundCpuMillicores: num(o, 'roundCpuMillicores', e.roundCpuMillicores, 'positiveInteger'),
    roundMemoryBytes: num(o, 'roundMemoryBytes', e.roundMemoryBytes, 'positiveInteger'),
    globalMaxAllowed: Object.freeze(globalMaxAllowed),
  });
}

/** How samples are aggregated: memory peaks' intervals, histogram decay, OOM bump-up. */
function resolveAggregations(o: RecommenderOptions): ResolvedOptions['aggregations'] {
  const a = DEFAULT_AGGREGATIONS_CONFIG;
  return Object.freeze({
    memoryAggregationInterval: duration(o, 'memoryAggregationInterval', a.memoryAggregationInterval),
    memoryAggregationIntervalCount: num(
      o,
      'memoryAggregationIntervalCount',
      a.memoryAggregationIntervalCount,
      'positiveInteger',
    ),
    cpuHistogramDecayHalfLife: duration(o, 'cpuHistogramDecayHalfLife', a.cpuHistogramDecayHalfLife),
    memoryHistogramDecayHalfLife: duration(o, 'memoryHistogramDecayHalfLife', a.memoryHistogramDecayHalfLife),
    oomBumpUpRatio: num(o, 'oomBumpUpRatio', a.oomBumpUpRatio, 'nonNegative'),
    oomMinBumpUp:
      o.oomMinBumpUpBytes !== undefined
        ? num(o, 'oomMinBumpUpBytes', a.oomMinBumpUp, 'nonNegative')
        : num(o, 'oomMinBumpUp', a.oomMinBumpUp, 'nonNegative'),
  });
}
