/**
 * ContainerState (upstream model/container.go): the per-container-instance bookkeeping in front of the
 * aggregate. It drops out-of-order CPU samples, keeps one memory peak per aggregation window (spec §3.3)
 * and turns OOM kills into bumped memory peaks (spec §3.4, the HEAD staleness rule of #8548).
 */
import { durationTruncate, type GoTime, isZeroTime, timeSub, ZERO_TIME } from '../gotime.js';
import type { AggregateContainerState, ContainerUsageSample } from './aggregate.js';
import { memoryAmountFromBytes, type ResourceAmount, resourceAmountMax, scaleResource } from './types.js';

export class ContainerState {
  /** Start of the last accepted CPU sample; later samples must be strictly after it. */
  lastCpuSampleStart: GoTime = ZERO_TIME;
  /** The usage peak of the current window (0 when none). */
  memoryPeak: ResourceAmount = 0;
  /** The OOM-bumped peak of the current window (0 when none). */
  oomPeak: ResourceAmount = 0;
  /** End of the current memory window; peaks are recorded at this time. Zero until the first sample. */
  windowEnd: GoTime = ZERO_TIME;
  /** Time of the last accepted memory sample (OOM samples included). */
  lastMemorySampleStart: GoTime = ZERO_TIME;

  constructor(public aggregator: AggregateContainerState) {}

  clone(aggregator: AggregateContainerState): ContainerState {
    const c = new ContainerState(aggregator);
    c.lastCpuSampleStart = this.lastCpuSampleStart;
    c.memoryPeak = this.memoryPeak;
    c.oomPeak = this.oomPeak;
    c.windowEnd = this.windowEnd;
    c.lastMemorySampleStart = this.lastMemorySampleStart;
    return c;
  }

  /** AddSample: false when the sample is invalid, a duplicate or out of order. */
  addSample(sample: ContainerUsageSample): boolean {
    return sample.resource === 'cpu' ? this.addCpuSample(sample) : this.addMemorySample(sample, false);
  }

  getMaxMemoryPeak(): ResourceAmount {
    return resourceAmountMax(this.memoryPeak, this.oomPeak);
  }

  private addCpuSample(sample: ContainerUsageSample): boolean {
    if (!(sample.usage >= 0) || !(sample.measureStart > this.lastCpuSampleStart)) return false;
    this.aggregator.addSample(sample);
    this.lastCpuSampleStart = sample.measureStart;
    return true;
  }

  private addMemorySample(sample: ContainerUsageSample, isOom: boolean): boolean {
    const ts = sample.measureStart;
    // OOM samples skip the ordering check: their kill time may precede the last usage sample.
    if (!(sample.usage >= 0) || (!isOom && ts < this.lastMemorySampleStart)) return false;
    this.lastMemorySampleStart = ts;
    if (isZeroTime(this.windowEnd)) this.windowEnd = ts;

    let addNewPeak = false;
    if (ts < this.windowEnd) {
      // Same window: replace the peak when higher. A window whose peak is 0 keeps it (upstream quirk).
      const oldMaxMem = this.getMaxMemoryPeak();
      if (oldMaxMem !== 0 && sample.usage > oldMaxMem) {
        this.aggregator.subtractSample({
          measureStart: this.windowEnd,
          usage: oldMaxMem,
          resource: 'memory',
        });
        addNewPeak = true;
      }
    } else {
      // A later window: window ends stay aligned to the first sample time plus whole intervals.
      const interval = this.aggregator.config.memoryAggregationInterval;
      const shift = durationTruncate(timeSub(ts, this.windowEnd), interval) + interval;
      this.windowEnd += shift;
      this.memoryPeak = 0;
      this.oomPeak = 0;
      addNewPeak = true;
    }
    if (addNewPeak) {
      this.aggregator.addSample({ measureStart: this.windowEnd, usage: sample.usage, resource: 'memory' });
      if (isOom) this.oomPeak = sample.usage;
      else this.memoryPeak = sample.usage;
    }
    return true;
  }

  /**
   * RecordOOM: the kill is recorded as a memory peak of max(used + minBump, used × ratio), where used is
   * max(request, this window's usage peak); the OOM peak itself is left out so repeated OOMs do not
   * compound. Returns false when the OOM is too old (more than one interval before the last memory
   * sample) or cannot be added.
   */
  recordOom(timestamp: GoTime, requestedMemory: ResourceAmount): boolean {
    const interval = this.aggregator.config.memoryAggregationInterval;
    if (!isZeroTime(this.lastMemorySampleStart) && timestamp < this.lastMemorySampleStart - interval)
      return false;
    const config = this.aggregator.config;
    const memoryUsed = resourceAmountMax(requestedMemory, this.memoryPeak);
    const memoryNeeded = resourceAmountMax(
      memoryUsed + memoryAmountFromBytes(config.oomMinBumpUp),
      scaleResource(memoryUsed, config.oomBumpUpRatio),
    );
    return this.addMemorySample({ measureStart: timestamp, usage: memoryNeeded, resource: 'memory' }, true);
  }
}
