/**
 * The settings that shape a state while samples are added (upstream model/aggregations_config.go and
 * the PerVPAConfig overrides). They live in the state, because changing them mid-history would change
 * what the stored weights mean; the estimator settings are given at recommendation time instead.
 */
import { type GoDuration, HOUR, int64 } from '../gotime.js';

export interface AggregationsConfig {
  /** --memory-aggregation-interval: the length of one memory-peak window. */
  readonly memoryAggregationInterval: GoDuration;
  /** --memory-aggregation-interval-count: windows kept; interval × count is also the expiry age. */
  readonly memoryAggregationIntervalCount: number;
  /** --cpu-histogram-decay-half-life. */
  readonly cpuHistogramDecayHalfLife: GoDuration;
  /** --memory-histogram-decay-half-life. */
  readonly memoryHistogramDecayHalfLife: GoDuration;
  /** --oom-bump-up-ratio. */
  readonly oomBumpUpRatio: number;
  /** --oom-min-bump-up-bytes (a float64 upstream). */
  readonly oomMinBumpUp: number;
}

export const DEFAULT_AGGREGATIONS_CONFIG: AggregationsConfig = Object.freeze({
  memoryAggregationInterval: 24n * HOUR,
  memoryAggregationIntervalCount: 8,
  cpuHistogramDecayHalfLife: 24n * HOUR,
  memoryHistogramDecayHalfLife: 24n * HOUR,
  oomBumpUpRatio: 1.2,
  oomMinBumpUp: 100 * 1024 * 1024,
});

/** GetMemoryAggregationWindowLength: interval × count, an int64 Duration product. */
export function memoryAggregationWindowLength(config: AggregationsConfig): GoDuration {
  return int64(config.memoryAggregationInterval * BigInt(config.memoryAggregationIntervalCount));
}

export function sameAggregationsConfig(a: AggregationsConfig, b: AggregationsConfig): boolean {
  return (
    a.memoryAggregationInterval === b.memoryAggregationInterval &&
    a.memoryAggregationIntervalCount === b.memoryAggregationIntervalCount &&
    a.cpuHistogramDecayHalfLife === b.cpuHistogramDecayHalfLife &&
    a.memoryHistogramDecayHalfLife === b.memoryHistogramDecayHalfLife &&
    Object.is(a.oomBumpUpRatio, b.oomBumpUpRatio) &&
    Object.is(a.oomMinBumpUp, b.oomMinBumpUp)
  );
}

export function isDefaultAggregationsConfig(c: AggregationsConfig): boolean {
  return sameAggregationsConfig(c, DEFAULT_AGGREGATIONS_CONFIG);
}
