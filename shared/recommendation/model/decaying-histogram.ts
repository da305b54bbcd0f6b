/**
 * The exponentially decaying histogram of upstream util/decaying_histogram.go (spec §2).
 *
 * A sample's weight is multiplied by 2^((t − referenceTimestamp)/halfLife), so newer samples weigh more
 * and percentiles do not depend on the reference. When a sample lies more than 100 half-lives past the
 * reference, the reference moves to that sample's time (rounded to a multiple of halfLife from Go's zero
 * time) and all weights are scaled down accordingly. The reference starts at the zero time, so the first
 * sample always moves it.
 */
import { goExp2, goLdexp, goRound } from '../gomath.js';
import { type GoDuration, type GoTime, int64, timeRound, timeSub, ZERO_TIME } from '../gotime.js';
import { Histogram, type HistogramCheckpointData, type SampleHistogram } from './histogram.js';
import type { HistogramOptions } from './histogram-options.js';

/** maxDecayExponent: how many half-lives past the reference a sample may lie before a shift. */
export const MAX_DECAY_EXPONENT = 100n;

export interface DecayingHistogramCheckpointData extends HistogramCheckpointData {
  referenceTimestamp: GoTime;
}

export class DecayingHistogram implements SampleHistogram {
  histogram: Histogram;
  private reference: GoTime = ZERO_TIME;
  /** reference + int64(halfLife × maxDecayExponent): a sample past it shifts the reference. */
  private maxAllowed: GoTime;
  /** int64(halfLife × maxDecayExponent) and float64(halfLife), computed once, not at every sample. */
  private readonly maxDecay: GoDuration;
  private readonly halfLifeNs: number;

  constructor(
    readonly options: HistogramOptions,
    readonly halfLife: GoDuration,
  ) {
    if (halfLife <= 0n) throw new RangeError('the decay half-life must be positive');
    this.histogram = new Histogram(options);
    this.maxDecay = int64(halfLife * MAX_DECAY_EXPONENT);
    this.halfLifeNs = Number(halfLife);
    this.maxAllowed = this.reference + this.maxDecay;
  }

  get referenceTimestamp(): GoTime {
    return this.reference;
  }

  set referenceTimestamp(t: GoTime) {
    this.reference = t;
    this.maxAllowed = t + this.maxDecay;
  }

  clone(): DecayingHistogram {
    const h = new DecayingHistogram(this.options, this.halfLife);
    h.histogram = this.histogram.clone();
    h.referenceTimestamp = this.referenceTimestamp;
    return h;
  }

  percentile(p: number): number {
    return this.histogram.percentile(p);
  }

  isEmpty(): boolean {
    return this.histogram.isEmpty();
  }

  addSample(value: number, weight: number, time: GoTime): void {
    this.histogram.addSample(value, weight * this.decayFactor(time));
  }

  subtractSample(value: number, weight: number, time: GoTime): void {
    this.histogram.subtractSample(value, weight * this.decayFactor(time));
  }

  /**
   * Merges other into this. As upstream, the histogram with the older reference is first shifted to the
   * younger one; upstream shifts `other` in place when it is the older, here `other` is left untouched
   * and a copy is shifted (the merged weights are the same).
   */
  merge(other: DecayingHistogram): void {
    if (this.halfLife !== other.halfLife)
      throw new Error("can't merge decaying histograms with different half life periods");
    let o = other;
    if (this.referenceTimestamp < o.referenceTimestamp) this.shiftReferenceTimestamp(o.referenceTimestamp);
    else if (o.referenceTimestamp < this.referenceTimestamp) {
      o = o.clone();
      o.shiftReferenceTimestamp(this.referenceTimestamp);
    }
    this.histogram.merge(o.histogram);
  }

  /** Moves the reference to newReference rounded to the half-life, scaling weights by 2^(Δ/halfLife). */
  shiftReferenceTimestamp(newReference: GoTime): void {
    const rounded = timeRound(newReference, this.halfLife);
    // Sub saturates: from the zero time the exponent is about −106752 (24h), which zeroes the weights.
    const exponent = goRound(Number(timeSub(this.reference, rounded)) / this.halfLifeNs);
    this.histogram.scale(goLdexp(1, exponent));
    this.referenceTimestamp = rounded;
  }

  private decayFactor(time: GoTime): number {
    if (time > this.maxAllowed) this.shiftReferenceTimestamp(time);
    return goExp2(Number(timeSub(time, this.reference)) / this.halfLifeNs);
  }

  saveToCheckpoint(): DecayingHistogramCheckpointData {
    return { ...this.histogram.saveToCheckpoint(), referenceTimestamp: this.referenceTimestamp };
  }

  /** Loads (adds) the weights, then takes the checkpoint's reference verbatim, not re-rounded. */
  loadFromCheckpoint(checkpoint: DecayingHistogramCheckpointData | null | undefined): void {
    this.histogram.loadFromCheckpoint(checkpoint);
    if (checkpoint) this.referenceTimestamp = checkpoint.referenceTimestamp;
  }

  equals(other: DecayingHistogram): boolean {
    return (
      this.halfLife === other.halfLife &&
      this.referenceTimestamp === other.referenceTimestamp &&
      this.histogram.equals(other.histogram)
    );
  }
}
