/**
 * AggregateContainerState (upstream model/aggregate_container_state.go): the decaying CPU-usage
 * histogram, the decaying memory-peak histogram and the CPU sample statistics that confidence uses.
 * Upstream keys one per (namespace, container name, pod labels); fleetscope keys one per
 * (DaemonSet container, node), which is what KEP-4943's per-node scope amounts to (spec §8).
 */
import { type GoTime, isZeroTime, timeSub, ZERO_TIME } from '../gotime.js';
import { type AggregationsConfig, memoryAggregationWindowLength } from './aggregations-config.js';
import { DecayingHistogram, type DecayingHistogramCheckpointData } from './decaying-histogram.js';
import { CheckpointError } from './histogram.js';
import { CPU_HISTOGRAM_OPTIONS, MEMORY_HISTOGRAM_OPTIONS, MIN_SAMPLE_WEIGHT } from './histogram-options.js';
import {
  bytesFromMemoryAmount,
  coresFromCpuAmount,
  type ResourceAmount,
  type ResourceName,
} from './types.js';

/** SupportedCheckpointVersion. */
export const SUPPORTED_CHECKPOINT_VERSION = 'v3';

/** One usage observation (ContainerUsageSample; the Request field no longer exists at HEAD). */
export interface ContainerUsageSample {
  measureStart: GoTime;
  usage: ResourceAmount;
  resource: ResourceName;
}

/** VerticalPodAutoscalerCheckpointStatus, with Go types (times in ns, weights as a Map). */
export interface CheckpointStatusData {
  lastUpdateTime: GoTime;
  version: string;
  cpuHistogram: DecayingHistogramCheckpointData;
  memoryHistogram: DecayingHistogramCheckpointData;
  firstSampleStart: GoTime;
  lastSampleStart: GoTime;
  totalSamplesCount: number;
}

export class AggregateContainerState {
  cpuUsage: DecayingHistogram;
  memoryPeaks: DecayingHistogram;
  /** Start of the first CPU sample (zero time until one arrives). */
  firstSampleStart: GoTime = ZERO_TIME;
  /** Start of the latest CPU sample. */
  lastSampleStart: GoTime = ZERO_TIME;
  /** CPU samples only: memory peaks do not count (spec §3.3). */
  totalSamplesCount = 0;

  constructor(
    readonly config: AggregationsConfig,
    /** When the state was created; expiry of a state without CPU samples counts from it. */
    public creationTime: GoTime,
  ) {
    this.cpuUsage = new DecayingHistogram(CPU_HISTOGRAM_OPTIONS, config.cpuHistogramDecayHalfLife);
    this.memoryPeaks = new DecayingHistogram(MEMORY_HISTOGRAM_OPTIONS, config.memoryHistogramDecayHalfLife);
  }

  clone(): AggregateContainerState {
    const a = new AggregateContainerState(this.config, this.creationTime);
    a.cpuUsage = this.cpuUsage.clone();
    a.memoryPeaks = this.memoryPeaks.clone();
    a.firstSampleStart = this.firstSampleStart;
    a.lastSampleStart = this.lastSampleStart;
    a.totalSamplesCount = this.totalSamplesCount;
    return a;
  }

  addSample(sample: ContainerUsageSample): void {
    if (sample.resource === 'cpu') this.addCpuSample(sample);
    else this.memoryPeaks.addSample(bytesFromMemoryAmount(sample.usage), 1.0, sample.measureStart);
  }

  subtractSample(sample: ContainerUsageSample): void {
    if (sample.resource !== 'memory')
      throw new Error('SubtractSample: only memory samples can be subtracted');
    this.memoryPeaks.subtractSample(bytesFromMemoryAmount(sample.usage), 1.0, sample.measureStart);
  }

  private addCpuSample(sample: ContainerUsageSample): void {
    // Every sample weighs minSampleWeight: the request weighting was removed upstream (#7819, vpa 1.4.0).
    this.cpuUsage.addSample(coresFromCpuAmount(sample.usage), MIN_SAMPLE_WEIGHT, sample.measureStart);
    if (sample.measureStart > this.lastSampleStart) this.lastSampleStart = sample.measureStart;
    if (isZeroTime(this.firstSampleStart) || sample.measureStart < this.firstSampleStart)
      this.firstSampleStart = sample.measureStart;
    this.totalSamplesCount++;
  }

  /** MergeContainerState: histograms merged, counts summed, first/last sample times min/max. */
  mergeContainerState(other: AggregateContainerState): void {
    this.cpuUsage.merge(other.cpuUsage);
    this.memoryPeaks.merge(other.memoryPeaks);
    if (
      isZeroTime(this.firstSampleStart) ||
      (!isZeroTime(other.firstSampleStart) && other.firstSampleStart < this.firstSampleStart)
    )
      this.firstSampleStart = other.firstSampleStart;
    if (other.lastSampleStart > this.lastSampleStart) this.lastSampleStart = other.lastSampleStart;
    this.totalSamplesCount += other.totalSamplesCount;
  }

  /** isEmpty: no CPU samples (memory peaks alone do not make a state non-empty for GC). */
  isEmpty(): boolean {
    return this.totalSamplesCount === 0;
  }

  /** isExpired: no CPU sample (or, without any, no creation) within interval × count (8 days). */
  isExpired(now: GoTime): boolean {
    const window = memoryAggregationWindowLength(this.config);
    if (this.isEmpty()) return timeSub(now, this.creationTime) >= window;
    return timeSub(now, this.lastSampleStart) >= window;
  }

  saveToCheckpoint(lastUpdateTime: GoTime): CheckpointStatusData {
    const memoryHistogram = this.memoryPeaks.saveToCheckpoint();
    const cpuHistogram = this.cpuUsage.saveToCheckpoint();
    return {
      lastUpdateTime,
      version: SUPPORTED_CHECKPOINT_VERSION,
      cpuHistogram,
      memoryHistogram,
      firstSampleStart: this.firstSampleStart,
      lastSampleStart: this.lastSampleStart,
      totalSamplesCount: this.totalSamplesCount,
    };
  }

  /** LoadFromCheckpoint: version must be v3; counts and times copied; histograms loaded additively. */
  loadFromCheckpoint(checkpoint: CheckpointStatusData): void {
    if (checkpoint.version !== SUPPORTED_CHECKPOINT_VERSION)
      throw new CheckpointError(`unsupported checkpoint version ${checkpoint.version}`);
    this.totalSamplesCount = checkpoint.totalSamplesCount;
    this.firstSampleStart = checkpoint.firstSampleStart;
    this.lastSampleStart = checkpoint.lastSampleStart;
    this.memoryPeaks.loadFromCheckpoint(checkpoint.memoryHistogram);
    this.cpuUsage.loadFromCheckpoint(checkpoint.cpuHistogram);
  }
}
