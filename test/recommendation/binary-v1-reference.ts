/**
 * The original (BigInt) implementation of shared/recommendation/checkpoint/binary.ts, kept verbatim as
 * the oracle of the number-arithmetic rewrite: the rewrite must write the very same bytes for every
 * state and decode every input to the same state (or fail with the same message).
 */
import { type GoTime, isZeroTime, MILLISECOND, ZERO_TIME } from '../../shared/recommendation/gotime.js';
import { AggregateContainerState } from '../../shared/recommendation/model/aggregate.js';
import {
  type AggregationsConfig,
  DEFAULT_AGGREGATIONS_CONFIG,
  isDefaultAggregationsConfig,
} from '../../shared/recommendation/model/aggregations-config.js';
import { ContainerState } from '../../shared/recommendation/model/container.js';
import type { Histogram } from '../../shared/recommendation/model/histogram.js';
import { ScopeState } from '../../shared/recommendation/model/scope.js';

const FORMAT_VERSION = 1;
const FLAG_CUSTOM_CONFIG = 1;

class StateDecodeError extends Error {
  override name = 'StateDecodeError';
}

class Writer {
  private buf = new Uint8Array(512);
  private view = new DataView(this.buf.buffer);
  length = 0;

  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf);
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.length++] = v;
  }

  uvarint(v: bigint | number): void {
    let x = BigInt(v);
    if (x < 0n) throw new RangeError(`uvarint of a negative value ${x}`);
    do {
      const byte = Number(x & 0x7fn);
      x >>= 7n;
      this.u8(x === 0n ? byte : byte | 0x80);
    } while (x !== 0n);
  }

  f64(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.length, v, true);
    this.length += 8;
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

class Reader {
  private pos = 0;
  private readonly view: DataView;

  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  u8(): number {
    if (this.pos >= this.buf.length) throw new StateDecodeError('truncated state');
    return this.buf[this.pos++] as number;
  }

  uvarint(): bigint {
    let x = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.u8();
      x |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return x;
      shift += 7n;
      if (shift > 140n) throw new StateDecodeError('varint too long');
    }
  }

  safeInt(): number {
    const v = this.uvarint();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new StateDecodeError(`integer ${v} too large`);
    return Number(v);
  }

  f64(): number {
    if (this.pos + 8 > this.buf.length) throw new StateDecodeError('truncated state');
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  end(): void {
    if (this.pos !== this.buf.length)
      throw new StateDecodeError(`${this.buf.length - this.pos} trailing bytes`);
  }
}

const zigzag = (v: bigint): bigint => (v >= 0n ? v << 1n : (-v << 1n) - 1n);
const unzigzag = (v: bigint): bigint => ((v & 1n) === 0n ? v >> 1n : -((v + 1n) >> 1n));

class TimeCodec {
  private previous = 0n;

  write(w: Writer, t: GoTime): void {
    if (isZeroTime(t)) {
      w.u8(0);
      return;
    }
    const delta = t - this.previous;
    this.previous = t;
    if (delta % MILLISECOND === 0n) w.uvarint((zigzag(delta / MILLISECOND) << 2n) | 1n);
    else w.uvarint((zigzag(delta) << 2n) | 2n);
  }

  read(r: Reader): GoTime {
    const v = r.uvarint();
    if (v === 0n) return ZERO_TIME;
    const tag = v & 3n;
    if (tag !== 1n && tag !== 2n) throw new StateDecodeError('bad time tag');
    const delta = unzigzag(v >> 2n) * (tag === 1n ? MILLISECOND : 1n);
    this.previous += delta;
    return this.previous;
  }
}

function writeHistogram(w: Writer, h: Histogram): void {
  w.f64(h.totalWeight);
  w.u8(h.minBucket);
  w.u8(h.maxBucket);
  const buckets: number[] = [];
  h.bucketWeight.forEach((weight, b) => {
    // Object.is keeps a -0 weight (never produced, but lossless is lossless).
    if (!Object.is(weight, 0)) buckets.push(b);
  });
  w.uvarint(buckets.length);
  let previous = -1;
  for (const b of buckets) {
    w.uvarint(b - previous - 1);
    w.f64(h.bucketWeight[b] as number);
    previous = b;
  }
}

function readHistogram(r: Reader, h: Histogram): void {
  const n = h.options.numBuckets;
  h.totalWeight = r.f64();
  h.minBucket = r.u8();
  h.maxBucket = r.u8();
  if (h.minBucket >= n || h.maxBucket >= n) throw new StateDecodeError('bucket range out of bounds');
  const count = r.safeInt();
  if (count > n) throw new StateDecodeError('too many buckets');
  let b = -1;
  for (let i = 0; i < count; i++) {
    b += r.safeInt() + 1;
    if (b >= n) throw new StateDecodeError('bucket index out of bounds');
    h.bucketWeight[b] = r.f64();
  }
}

/** Encodes a scope's state losslessly (about 0.3–0.7 KiB for a realistic 8-day history). */
export function referenceEncodeState(state: ScopeState): Uint8Array {
  const w = new Writer();
  const a = state.aggregate;
  const c = state.container;
  const custom = !isDefaultAggregationsConfig(a.config);
  w.u8(FORMAT_VERSION);
  w.u8(custom ? FLAG_CUSTOM_CONFIG : 0);
  if (custom) {
    w.uvarint(a.config.cpuHistogramDecayHalfLife);
    w.uvarint(a.config.memoryHistogramDecayHalfLife);
    w.uvarint(a.config.memoryAggregationInterval);
    w.uvarint(a.config.memoryAggregationIntervalCount);
    w.f64(a.config.oomBumpUpRatio);
    w.f64(a.config.oomMinBumpUp);
  }
  const times = new TimeCodec();
  for (const t of [
    a.creationTime,
    a.lastSampleStart,
    a.firstSampleStart,
    c.lastCpuSampleStart,
    c.windowEnd,
    c.lastMemorySampleStart,
    a.cpuUsage.referenceTimestamp,
    a.memoryPeaks.referenceTimestamp,
  ])
    times.write(w, t);
  w.uvarint(a.totalSamplesCount);
  w.uvarint(c.memoryPeak);
  w.uvarint(c.oomPeak);
  writeHistogram(w, a.cpuUsage.histogram);
  writeHistogram(w, a.memoryPeaks.histogram);
  return w.bytes();
}

/** Decodes encodeState's output; throws StateDecodeError on anything else. */
export function referenceDecodeState(bytes: Uint8Array): ScopeState {
  const r = new Reader(bytes);
  const version = r.u8();
  if (version !== FORMAT_VERSION) throw new StateDecodeError(`unsupported state format version ${version}`);
  const flags = r.u8();
  if ((flags & ~FLAG_CUSTOM_CONFIG) !== 0) throw new StateDecodeError(`unknown flags ${flags}`);
  let config: AggregationsConfig = DEFAULT_AGGREGATIONS_CONFIG;
  if (flags & FLAG_CUSTOM_CONFIG) {
    const cpuHistogramDecayHalfLife = r.uvarint();
    const memoryHistogramDecayHalfLife = r.uvarint();
    const memoryAggregationInterval = r.uvarint();
    const memoryAggregationIntervalCount = r.safeInt();
    config = Object.freeze({
      cpuHistogramDecayHalfLife,
      memoryHistogramDecayHalfLife,
      memoryAggregationInterval,
      memoryAggregationIntervalCount,
      oomBumpUpRatio: r.f64(),
      oomMinBumpUp: r.f64(),
    });
    if (
      cpuHistogramDecayHalfLife <= 0n ||
      memoryHistogramDecayHalfLife <= 0n ||
      memoryAggregationInterval <= 0n
    )
      throw new StateDecodeError('non-positive durations in the settings');
  }
  const times = new TimeCodec();
  const creationTime = times.read(r);
  const a = new AggregateContainerState(config, creationTime);
  const c = new ContainerState(a);
  a.lastSampleStart = times.read(r);
  a.firstSampleStart = times.read(r);
  c.lastCpuSampleStart = times.read(r);
  c.windowEnd = times.read(r);
  c.lastMemorySampleStart = times.read(r);
  a.cpuUsage.referenceTimestamp = times.read(r);
  a.memoryPeaks.referenceTimestamp = times.read(r);
  a.totalSamplesCount = r.safeInt();
  c.memoryPeak = r.safeInt();
  c.oomPeak = r.safeInt();
  readHistogram(r, a.cpuUsage.histogram);
  readHistogram(r, a.memoryPeaks.histogram);
  r.end();
  return new ScopeState(a, c);
}
