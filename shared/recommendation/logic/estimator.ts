/**
 * Estimators (upstream logic/estimator.go, spec §4.2–§4.3). Each is a function from a state to one
 * integer ResourceAmount, and every step truncates, in this order: percentile, margin, confidence
 * multiplier (bounds only), minimum.
 */
import { goPow } from '../gomath.js';
import { durationMinutes, type GoDuration, type GoTime, timeSub } from '../gotime.js';
import type { PercentileSource } from '../model/histogram.js';
import {
  cpuAmountFromCores,
  memoryAmountFromBytes,
  type ResourceAmount,
  resourceAmountMax,
  scaleResource,
} from '../model/types.js';

/** What the estimators read from an AggregateContainerState. */
export interface EstimationInput {
  readonly cpuUsage: PercentileSource;
  readonly memoryPeaks: PercentileSource;
  readonly firstSampleStart: GoTime;
  readonly lastSampleStart: GoTime;
  readonly totalSamplesCount: number;
}

export type Estimator = (s: EstimationInput) => ResourceAmount;

/** CPU: the usage percentile in cores, × 1000 and truncated to millicores. */
export const percentileCpuEstimator =
  (percentile: number): Estimator =>
  (s) =>
    cpuAmountFromCores(s.cpuUsage.percentile(percentile));

/** Memory: the peak percentile in bytes, truncated. */
export const percentileMemoryEstimator =
  (percentile: number): Estimator =>
  (s) =>
    memoryAmountFromBytes(s.memoryPeaks.percentile(percentile));

/** base + trunc(base × fraction). */
export const withMargin =
  (marginFraction: number, base: Estimator): Estimator =>
  (s) => {
    const b = base(s);
    return b + scaleResource(b, marginFraction);
  };

let lastInterval: GoDuration | undefined;
let lastIntervalNs = 0;
let lastIntervalMinutes = 0;

/**
 * getConfidence: min(span of CPU samples / interval, CPU sample count / interval-in-minutes). At one
 * sample a minute it is the number of days (for a 24h interval) of history.
 */
export function getConfidence(s: EstimationInput, confidenceInterval: GoDuration): number {
  if (confidenceInterval !== lastInterval) {
    // The interval's float forms, computed once per interval rather than at every estimate.
    lastIntervalNs = Number(confidenceInterval);
    lastIntervalMinutes = durationMinutes(confidenceInterval);
    lastInterval = confidenceInterval;
  }
  const lifespan = Number(timeSub(s.lastSampleStart, s.firstSampleStart)) / lastIntervalNs;
  const samplesAmount = s.totalSamplesCount / lastIntervalMinutes;
  return Math.min(lifespan, samplesAmount);
}

/**
 * × (1 + multiplier/confidence)^exponent. With no CPU samples the confidence is 0 and the factor is
 * +Inf (upper bound, capped at 1e14) or 0 (lower bound); a base of 0 times +Inf is NaN, which Go on
 * amd64 turns into MinInt64, and the minimum step then lifts it to the minimum (spec §4.3).
 */
export const withConfidenceMultiplier =
  (multiplier: number, exponent: number, confidenceInterval: GoDuration, base: Estimator): Estimator =>
  (s) => {
    const confidence = getConfidence(s, confidenceInterval);
    return scaleResource(base(s), goPow(1 + multiplier / confidence, exponent));
  };

/** max(value, min). */
export const withMinResource =
  (minResource: ResourceAmount, base: Estimator): Estimator =>
  (s) =>
    resourceAmountMax(base(s), minResource);
