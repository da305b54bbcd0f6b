/**
 * Bucket schemes (upstream util/histogram_options.go, model/aggregations_config.go).
 *
 * Exponential buckets: bucket n ≥ 1 starts at firstBucketSize·(ratio^n − 1)/(ratio − 1), computed with
 * Go's math.Pow (goPow), and a value lands in trunc(log(v·(ratio−1)/first + 1)/log(ratio)); a value equal
 * to a computed start therefore falls into the previous bucket, exactly as upstream (spec §1.1).
 */
import { goInt64, goPow } from '../gomath.js';

export interface HistogramOptions {
  readonly kind: 'linear' | 'exponential';
  readonly numBuckets: number;
  readonly epsilon: number;
  /** The bucket holding the value; values beyond the range go to the first or last bucket. */
  findBucket(value: number): number;
  /** The lower end of a bucket; the last bucket is open-ended. */
  getBucketStart(bucket: number): number;
}

export class HistogramOptionsError extends Error {
  override name = 'HistogramOptionsError';
}

function checkBucket(bucket: number, numBuckets: number): void {
  if (!Number.isInteger(bucket) || bucket < 0 || bucket >= numBuckets)
    throw new RangeError(`index ${bucket} out of range [0..${numBuckets - 1}]`);
}

class LinearHistogramOptions implements HistogramOptions {
  readonly kind = 'linear';
  constructor(
    readonly numBuckets: number,
    readonly bucketSize: number,
    readonly epsilon: number,
  ) {}

  findBucket(value: number): number {
    // Go's int() of an out-of-range quotient is MinInt64 on amd64, which the < 0 check maps to bucket 0.
    const bucket = goInt64(value / this.bucketSize);
    if (bucket < 0) return 0;
    if (bucket >= this.numBuckets) return this.numBuckets - 1;
    return bucket;
  }

  getBucketStart(bucket: number): number {
    checkBucket(bucket, this.numBuckets);
    return bucket * this.bucketSize;
  }
}

class ExponentialHistogramOptions implements HistogramOptions {
  readonly kind = 'exponential';
  private readonly starts: Float64Array;
  private readonly logRatio: number;

  constructor(
    readonly numBuckets: number,
    readonly firstBucketSize: number,
    readonly ratio: number,
    readonly epsilon: number,
  ) {
    this.logRatio = Math.log(ratio);
    // Precomputed once: percentiles read starts on every call, and goPow is slow-ish.
    this.starts = new Float64Array(numBuckets);
    for (let b = 1; b < numBuckets; b++)
      this.starts[b] = (firstBucketSize * (goPow(ratio, b) - 1)) / (ratio - 1);
  }

  findBucket(value: number): number {
    if (value < this.firstBucketSize) return 0;
    const bucket = goInt64(Math.log((value * (this.ratio - 1)) / this.firstBucketSize + 1) / this.logRatio);
    if (bucket >= this.numBuckets) return this.numBuckets - 1;
    // Only NaN or ±Inf get here with a negative index; upstream would index out of range and panic.
    if (bucket < 0) throw new RangeError(`cannot find a bucket for ${value}`);
    return bucket;
  }

  getBucketStart(bucket: number): number {
    checkBucket(bucket, this.numBuckets);
    return this.starts[bucket] as number;
  }
}

/** NewLinearHistogramOptions: numBuckets = ceil(maxValue/bucketSize) + 1. */
export function newLinearHistogramOptions(
  maxValue: number,
  bucketSize: number,
  epsilon: number,
): HistogramOptions {
  if (!(maxValue > 0) || !(bucketSize > 0) || !(epsilon > 0))
    throw new HistogramOptionsError('maxValue and bucketSize must both be positive');
  return new LinearHistogramOptions(goInt64(Math.ceil(maxValue / bucketSize)) + 1, bucketSize, epsilon);
}

/** NewExponentialHistogramOptions: numBuckets = ceil(log_ratio(maxValue·(ratio−1)/first + 1)) + 1. */
export function newExponentialHistogramOptions(
  maxValue: number,
  firstBucketSize: number,
  ratio: number,
  epsilon: number,
): HistogramOptions {
  if (!(maxValue > 0) || !(firstBucketSize > 0) || !(ratio > 1) || !(epsilon > 0))
    throw new HistogramOptionsError(
      'maxValue, firstBucketSize and epsilon must be > 0.0, ratio must be > 1.0',
    );
  const n =
    goInt64(Math.ceil(Math.log((maxValue * (ratio - 1)) / firstBucketSize + 1) / Math.log(ratio))) + 1;
  return new ExponentialHistogramOptions(n, firstBucketSize, ratio, epsilon);
}

/** minSampleWeight: the weight of one CPU sample, and the base of the histogram epsilon. */
export const MIN_SAMPLE_WEIGHT = 0.1;
/** epsilon = 0.001 × minSampleWeight: weights below it count as empty. */
export const HISTOGRAM_EPSILON = 0.001 * MIN_SAMPLE_WEIGHT;
/** DefaultHistogramBucketSizeGrowth: each bucket is 5% wider than the previous one. */
export const HISTOGRAM_BUCKET_SIZE_GROWTH = 0.05;

/**
 * CPU usage in cores: first bucket 10m, up to 1000 cores, 176 buckets. Tied to checkpoint version v3.
 * One shared instance, because histograms only merge when their options are the same object.
 */
export const CPU_HISTOGRAM_OPTIONS: HistogramOptions = newExponentialHistogramOptions(
  1000.0,
  0.01,
  1.0 + HISTOGRAM_BUCKET_SIZE_GROWTH,
  HISTOGRAM_EPSILON,
);

/** Memory peaks in bytes: first bucket 1e7 bytes, up to 1e12 bytes, 176 buckets. */
export const MEMORY_HISTOGRAM_OPTIONS: HistogramOptions = newExponentialHistogramOptions(
  1e12,
  1e7,
  1.0 + HISTOGRAM_BUCKET_SIZE_GROWTH,
  HISTOGRAM_EPSILON,
);
