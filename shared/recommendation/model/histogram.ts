/**
 * The weighted histogram of upstream util/histogram.go (spec §1.2–§1.4).
 *
 * minBucket/maxBucket bracket the buckets whose weight is at least epsilon. Weights outside that range
 * are kept (a sub-epsilon addition does not move the range), so the full weight array is the state.
 */

import { goRound, goUint32 } from '../gomath.js';
import type { GoTime } from '../gotime.js';
import type { HistogramOptions } from './histogram-options.js';

/** MaxCheckpointWeight: checkpoints scale the largest bucket to this weight. */
export const MAX_CHECKPOINT_WEIGHT = 10000;

/** HistogramCheckpoint without the reference timestamp (a plain histogram has none). */
export interface HistogramCheckpointData {
  totalWeight: number;
  /** Bucket index → weight normalised so that the largest is MAX_CHECKPOINT_WEIGHT. */
  bucketWeights: Map<number, number>;
}

export class CheckpointError extends Error {
  override name = 'CheckpointError';
}

/** What the estimators need from a histogram. */
export interface PercentileSource {
  percentile(p: number): number;
  isEmpty(): boolean;
}

/** The histogram operations shared by the plain and the decaying kind (upstream's Histogram interface). */
export interface SampleHistogram extends PercentileSource {
  addSample(value: number, weight: number, time: GoTime): void;
  subtractSample(value: number, weight: number, time: GoTime): void;
}

/**
 * Zeroed bucket arrays, carved from shared slabs. A Float64Array of its own costs about 1 µs (a typed
 * array past 64 bytes gets an off-heap backing store: calloc plus external-memory bookkeeping), which
 * was most of the cost of decoding a state or merging into a fresh one; a view of a slab costs a few
 * tens of ns. A slab holds 16 arrays of 176 buckets (22.5 KB) and lives as long as any of its views.
 */
const SLAB_LENGTH = 16 * 176;
let slab = new Float64Array(0);
let slabUsed = 0;

export function allocateBuckets(n: number): Float64Array {
  if (n > SLAB_LENGTH / 4) return new Float64Array(n);
  if (slabUsed + n > slab.length) {
    slab = new Float64Array(SLAB_LENGTH);
    slabUsed = 0;
  }
  const view = new Float64Array(slab.buffer, slabUsed * 8, n);
  slabUsed += n;
  return view;
}

export class Histogram implements SampleHistogram {
  bucketWeight: Float64Array;
  totalWeight = 0;
  minBucket: number;
  maxBucket = 0;

  constructor(readonly options: HistogramOptions) {
    this.bucketWeight = allocateBuckets(options.numBuckets);
    this.minBucket = options.numBuckets - 1;
  }

  clone(): Histogram {
    const h = new Histogram(this.options);
    h.bucketWeight.set(this.bucketWeight);
    h.totalWeight = this.totalWeight;
    h.minBucket = this.minBucket;
    h.maxBucket = this.maxBucket;
    return h;
  }

  addSample(value: number, weight: number, _time?: GoTime): void {
    if (!(weight >= 0)) throw new RangeError('sample weight must be non-negative');
    const bucket = this.options.findBucket(value);
    this.bucketWeight[bucket] = (this.bucketWeight[bucket] as number) + weight;
    this.totalWeight += weight;
    const eps = this.options.epsilon;
    if (bucket < this.minBucket && (this.bucketWeight[bucket] as number) >= eps) this.minBucket = bucket;
    if (bucket > this.maxBucket && (this.bucketWeight[bucket] as number) >= eps) this.maxBucket = bucket;
  }

  subtractSample(value: number, weight: number, _time?: GoTime): void {
    if (!(weight >= 0)) throw new RangeError('sample weight must be non-negative');
    const bucket = this.options.findBucket(value);
    const eps = this.options.epsilon;
    this.totalWeight = safeSubtract(this.totalWeight, weight, eps);
    this.bucketWeight[bucket] = safeSubtract(this.bucketWeight[bucket] as number, weight, eps);
    this.updateMinAndMaxBucket();
  }

  /** Adds the other histogram's [min..max] buckets; the options must be the same object. */
  merge(other: Histogram): void {
    if (this.options !== other.options) throw new Error("can't merge histograms with different options");
    for (let b = other.minBucket; b <= other.maxBucket; b++)
      this.bucketWeight[b] = (this.bucketWeight[b] as number) + (other.bucketWeight[b] as number);
    this.totalWeight += other.totalWeight;
    if (other.minBucket < this.minBucket) this.minBucket = other.minBucket;
    if (other.maxBucket > this.maxBucket) this.maxBucket = other.maxBucket;
  }

  /** The end of the first bucket whose cumulative weight reaches p·total (no interpolation). */
  percentile(p: number): number {
    if (this.isEmpty()) return 0;
    let partialSum = 0;
    const threshold = p * this.totalWeight;
    let bucket = this.minBucket;
    for (; bucket < this.maxBucket; bucket++) {
      partialSum += this.bucketWeight[bucket] as number;
      if (partialSum >= threshold) break;
    }
    // The last bucket has no end, so its start is returned.
    if (bucket < this.options.numBuckets - 1) return this.options.getBucketStart(bucket + 1);
    return this.options.getBucketStart(bucket);
  }

  isEmpty(): boolean {
    return (this.bucketWeight[this.minBucket] as number) < this.options.epsilon;
  }

  /** Multiplies every weight in [min..max] and the total by factor, then trims sub-epsilon edges. */
  scale(factor: number): void {
    if (!(factor >= 0)) throw new RangeError('scale factor must be non-negative');
    for (let b = this.minBucket; b <= this.maxBucket; b++)
      this.bucketWeight[b] = (this.bucketWeight[b] as number) * factor;
    this.totalWeight *= factor;
    this.updateMinAndMaxBucket();
  }

  updateMinAndMaxBucket(): void {
    const eps = this.options.epsilon;
    const lastBucket = this.options.numBuckets - 1;
    while ((this.bucketWeight[this.minBucket] as number) < eps && this.minBucket < lastBucket)
      this.minBucket++;
    while ((this.bucketWeight[this.maxBucket] as number) < eps && this.maxBucket > 0) this.maxBucket--;
  }

  /** SaveToChekpoint: weights scaled so the largest is 10000, rounded, zeros dropped; exact total. */
  saveToCheckpoint(): HistogramCheckpointData {
    const bucketWeights = new Map<number, number>();
    let max = 0;
    for (let b = this.minBucket; b <= this.maxBucket; b++)
      if ((this.bucketWeight[b] as number) > max) max = this.bucketWeight[b] as number;
    const ratio = MAX_CHECKPOINT_WEIGHT / max;
    for (let b = this.minBucket; b <= this.maxBucket; b++) {
      const w = goUint32(goRound((this.bucketWeight[b] as number) * ratio));
      if (w > 0) bucketWeights.set(b, w);
    }
    return { totalWeight: this.totalWeight, bucketWeights };
  }

  /**
   * LoadFromCheckpoint: ADDS the checkpoint's weights, rescaled so they sum to its total, then trims
   * sub-epsilon edges (the kubernetes/autoscaler#7726 fix). A checkpoint whose weights sum to 0 is a no-op.
   */
  loadFromCheckpoint(checkpoint: HistogramCheckpointData | null | undefined): void {
    if (!checkpoint) throw new CheckpointError('cannot load from empty checkpoint');
    if (checkpoint.totalWeight < 0)
      throw new CheckpointError(`cannot load checkpoint with negative weight ${checkpoint.totalWeight}`);
    let sum = 0n;
    for (const [bucket, weight] of checkpoint.bucketWeights) {
      if (!Number.isInteger(weight) || weight < 0 || weight > 0xffffffff)
        throw new CheckpointError(`checkpoint bucket ${bucket} has weight ${weight}, not a uint32`);
      sum += BigInt(weight);
      if (bucket >= this.options.numBuckets)
        throw new CheckpointError(
          `checkpoint has bucket ${bucket} that is exceeding histogram buckets ${this.options.numBuckets}`,
        );
      if (bucket < 0) throw new CheckpointError(`checkpoint has a negative bucket ${bucket}`);
      if (!Number.isInteger(bucket))
        throw new CheckpointError(`checkpoint bucket ${bucket} is not an integer`);
    }
    if (sum === 0n) return;
    const ratio = checkpoint.totalWeight / Number(sum);
    for (const [bucket, weight] of checkpoint.bucketWeights) {
      if (bucket < this.minBucket) this.minBucket = bucket;
      if (bucket > this.maxBucket) this.maxBucket = bucket;
      this.bucketWeight[bucket] = (this.bucketWeight[bucket] as number) + weight * ratio;
    }
    this.totalWeight += checkpoint.totalWeight;
    this.updateMinAndMaxBucket();
  }

  /** Upstream's Equals: same options and range, bucket weights within 1e-15. */
  equals(other: Histogram): boolean {
    if (
      this.options !== other.options ||
      this.minBucket !== other.minBucket ||
      this.maxBucket !== other.maxBucket
    )
      return false;
    for (let b = this.minBucket; b <= this.maxBucket; b++) {
      const diff = (this.bucketWeight[b] as number) - (other.bucketWeight[b] as number);
      if (diff > 1e-15 || diff < -1e-15) return false;
    }
    return true;
  }
}

function safeSubtract(value: number, sub: number, epsilon: number): number {
  const v = value - sub;
  return v < epsilon ? 0 : v;
}
