/**
 * fleetscope's own storage form of a scope's state (a DynamoDB Binary attribute): lossless, so a state
 * decoded after a restart recommends and evolves exactly as if there had been no restart. Unlike the
 * upstream checkpoint, nothing is quantised and the memory window in progress is kept.
 *
 * Layout (version 1), all integers LEB128 varints, floats IEEE-754 float64 little-endian:
 *   u8 format version (1) | u8 flags (bit 0: non-default aggregation settings follow)
 *   [settings: cpu half-life ns, memory half-life ns, interval ns, interval count, f64 OOM ratio, f64 OOM min bump]
 *   8 times: creation, lastSampleStart, firstSampleStart, lastCpuSampleStart, windowEnd,
 *            lastMemorySampleStart, CPU reference, memory reference; each is 0 for Go's zero time, else
 *            (zigzag(delta from the previous non-zero time) << 2) | 1 in ms, or | 2 in ns when not whole ms
 *   totalSamplesCount | memoryPeak | oomPeak
 *   2 histograms (CPU, memory): f64 total | u8 minBucket | u8 maxBucket | n | n × (index gap, f64 weight)
 * Every non-zero bucket is kept, including sub-epsilon ones outside [min..max], since a later sample in
 * such a bucket adds to its weight.
 *
 * Speed (nodescope encodes and decodes every state of a DaemonSet at each fold): varints are number
 * arithmetic, exact for every integer-valued float (% and / by 128 are exact), with bigint only where a
 * value may pass 2^53 (nanosecond time deltas, settings in ns); times are converted to milliseconds
 * once and their deltas taken as numbers; the writer reuses one scratch buffer. The bytes are exactly
 * those of the original BigInt implementation (test/recommendation/binary-v1-reference.ts checks it),
 * so the format version did not change.
 */
import { type GoTime, MILLISECOND, ZERO_TIME } from '../gotime.js';
import { AggregateContainerState } from '../model/aggregate.js';
import {
  type AggregationsConfig,
  DEFAULT_AGGREGATIONS_CONFIG,
  isDefaultAggregationsConfig,
} from '../model/aggregations-config.js';
import { ContainerState } from '../model/container.js';
import type { Histogram } from '../model/histogram.js';
import { ScopeState } from '../model/scope.js';

const FORMAT_VERSION = 1;
const FLAG_CUSTOM_CONFIG = 1;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** A millisecond delta below this zigzags and shifts into a safe integer (2^50 ms is 35,000 years). */
const MAX_NUMBER_DELTA = 2 ** 50;

export class StateDecodeError extends Error {
  override name = 'StateDecodeError';
}

// ---------------------------------------------------------------------------------------------------
// Writer: one module-level scratch buffer (encoding is synchronous and not re-entrant). The largest
// possible state is about 4.3 KB (176 buckets in both histograms at 10 bytes each, every varint at its
// longest), so 16 KiB never grows; the final length check guards that bound.

const SCRATCH = new Uint8Array(16 * 1024);
const SCRATCH_VIEW = new DataView(SCRATCH.buffer);
let wpos = 0;

/** A non-negative integer-valued number, exact at any magnitude (no BigInt). */
function writeUvarint(v: number): void {
  if (!Number.isInteger(v)) throw new RangeError(`uvarint of a non-integer ${v}`);
  if (v < 0) throw new RangeError(`uvarint of a negative value ${v}`);
  if (v <= 0x7f) {
    SCRATCH[wpos++] = v;
    return;
  }
  if (v <= 0xffffffff) {
    while (v > 0x7f) {
      SCRATCH[wpos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
  } else {
    while (v > 0x7f) {
      SCRATCH[wpos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
  }
  SCRATCH[wpos++] = v;
}

function writeBigUvarint(v: bigint): void {
  if (v < 0n) throw new RangeError(`uvarint of a negative value ${v}`);
  let x = v;
  do {
    const byte = Number(x & 0x7fn);
    x >>= 7n;
    SCRATCH[wpos++] = x === 0n ? byte : byte | 0x80;
  } while (x !== 0n);
}

function writeF64(v: number): void {
  SCRATCH_VIEW.setFloat64(wpos, v, true);
  wpos += 8;
}

const bigZigzag = (v: bigint): bigint => (v >= 0n ? v << 1n : (-v << 1n) - 1n);
const bigUnzigzag = (v: bigint): bigint => ((v & 1n) === 0n ? v >> 1n : -((v + 1n) >> 1n));

/** The delta chain of the times: the previous non-zero time, and its milliseconds when whole and safe. */
let prevTime: GoTime = 0n;
let prevMs = 0;
let prevWholeMs = true;

function writeTime(t: GoTime): void {
  if (t === ZERO_TIME) {
    SCRATCH[wpos++] = 0;
    return;
  }
  if (t === prevTime) {
    // A zero delta: zigzag(0) << 2 | 1.
    SCRATCH[wpos++] = 1;
    return;
  }
  const whole = t % MILLISECOND === 0n;
  let ms = 0;
  let wholeSafe = false;
  if (whole) {
    ms = Number(t / MILLISECOND);
    wholeSafe = ms >= -MAX_SAFE && ms <= MAX_SAFE;
  }
  if (wholeSafe && prevWholeMs) {
    const delta = ms - prevMs;
    if (delta < MAX_NUMBER_DELTA && delta > -MAX_NUMBER_DELTA) {
      writeUvarint((delta >= 0 ? delta * 2 : -delta * 2 - 1) * 4 + 1);
      prevTime = t;
      prevMs = ms;
      return;
    }
  }
  // Any other case, exactly as the BigInt implementation: a delta of whole ms is written in ms.
  const delta = t - prevTime;
  if (delta % MILLISECOND === 0n) writeBigUvarint((bigZigzag(delta / MILLISECOND) << 2n) | 1n);
  else writeBigUvarint((bigZigzag(delta) << 2n) | 2n);
  prevTime = t;
  prevMs = ms;
  prevWholeMs = wholeSafe;
}

function writeHistogram(h: Histogram): void {
  const weights = h.bucketWeight;
  writeF64(h.totalWeight);
  SCRATCH[wpos++] = h.minBucket;
  SCRATCH[wpos++] = h.maxBucket;
  // One pass: the count takes one byte unless there are more than 127 buckets (then shift by one).
  const countAt = wpos++;
  let count = 0;
  let previous = -1;
  for (let b = 0; b < weights.length; b++) {
    const w = weights[b] as number;
    // Every weight but +0 is kept: a -0 (never produced, but lossless is lossless) and NaN too.
    if (w === 0 && 1 / w > 0) continue;
    writeUvarint(b - previous - 1);
    writeF64(w);
    previous = b;
    count++;
  }
  if (count <= 0x7f) SCRATCH[countAt] = count;
  else {
    SCRATCH.copyWithin(countAt + 2, countAt + 1, wpos);
    wpos++;
    SCRATCH[countAt] = (count & 0x7f) | 0x80;
    SCRATCH[countAt + 1] = count >>> 7;
  }
}

/** Encodes a scope's state losslessly (about 0.1–0.7 KiB for a realistic 8-day history). */
export function encodeState(state: ScopeState): Uint8Array {
  wpos = 0;
  prevTime = 0n;
  prevMs = 0;
  prevWholeMs = true;
  const a = state.aggregate;
  const c = state.container;
  const custom = !isDefaultAggregationsConfig(a.config);
  SCRATCH[wpos++] = FORMAT_VERSION;
  SCRATCH[wpos++] = custom ? FLAG_CUSTOM_CONFIG : 0;
  if (custom) {
    writeBigUvarint(a.config.cpuHistogramDecayHalfLife);
    writeBigUvarint(a.config.memoryHistogramDecayHalfLife);
    writeBigUvarint(a.config.memoryAggregationInterval);
    writeUvarint(a.config.memoryAggregationIntervalCount);
    writeF64(a.config.oomBumpUpRatio);
    writeF64(a.config.oomMinBumpUp);
  }
  writeTime(a.creationTime);
  writeTime(a.lastSampleStart);
  writeTime(a.firstSampleStart);
  writeTime(c.lastCpuSampleStart);
  writeTime(c.windowEnd);
  writeTime(c.lastMemorySampleStart);
  writeTime(a.cpuUsage.referenceTimestamp);
  writeTime(a.memoryPeaks.referenceTimestamp);
  writeUvarint(a.totalSamplesCount);
  writeUvarint(c.memoryPeak);
  writeUvarint(c.oomPeak);
  writeHistogram(a.cpuUsage.histogram);
  writeHistogram(a.memoryPeaks.histogram);
  if (wpos > SCRATCH.length) throw new Error(`state encoding overran its ${SCRATCH.length}-byte buffer`);
  return SCRATCH.slice(0, wpos);
}

// ---------------------------------------------------------------------------------------------------
// Reader

class Reader {
  pos = 0;
  private readonly view: DataView;
  // The delta chain of the times, as in the writer.
  private previous: GoTime = 0n;
  private previousMs = 0;
  private msChain = true;

  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  u8(): number {
    if (this.pos >= this.buf.length) throw new StateDecodeError('truncated state');
    return this.buf[this.pos++] as number;
  }

  /**
   * A varint as a number: exact when at most MAX_SAFE, else some value above MAX_SAFE (re-read it with
   * bigUvarint). Throws as the BigInt reader does on truncation and on more than 21 bytes.
   */
  uvarint(): number {
    const buf = this.buf;
    let pos = this.pos;
    if (pos >= buf.length) throw new StateDecodeError('truncated state');
    let b = buf[pos++] as number;
    if (b < 0x80) {
      this.pos = pos;
      return b;
    }
    let x = b & 0x7f;
    let mul = 0x80;
    let shift = 7;
    for (;;) {
      if (pos >= buf.length) {
        this.pos = pos;
        throw new StateDecodeError('truncated state');
      }
      b = buf[pos++] as number;
      x += (b & 0x7f) * mul;
      if (b < 0x80) {
        this.pos = pos;
        return x;
      }
      shift += 7;
      if (shift > 140) {
        this.pos = pos;
        throw new StateDecodeError('varint too long');
      }
      mul *= 0x80;
    }
  }

  bigUvarint(): bigint {
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
    const start = this.pos;
    const v = this.uvarint();
    if (v <= MAX_SAFE) return v;
    this.pos = start;
    throw new StateDecodeError(`integer ${this.bigUvarint()} too large`);
  }

  f64(): number {
    if (this.pos + 8 > this.buf.length) throw new StateDecodeError('truncated state');
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  time(): GoTime {
    const start = this.pos;
    const v = this.uvarint();
    if (v === 0) return ZERO_TIME;
    if (v <= MAX_SAFE) {
      const tag = v % 4;
      if (tag !== 1 && tag !== 2) throw new StateDecodeError('bad time tag');
      const z = (v - tag) / 4;
      const delta = z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      if (delta === 0) return this.previous;
      if (tag === 1 && this.msChain) {
        const ms = this.previousMs + delta;
        if (ms >= -MAX_SAFE && ms <= MAX_SAFE) {
          this.previousMs = ms;
          this.previous = BigInt(ms) * MILLISECOND;
          return this.previous;
        }
      }
      this.msChain = false;
      this.previous += tag === 1 ? BigInt(delta) * MILLISECOND : BigInt(delta);
      return this.previous;
    }
    // Beyond 2^53: the BigInt way.
    this.pos = start;
    const big = this.bigUvarint();
    const tag = big & 3n;
    if (tag !== 1n && tag !== 2n) throw new StateDecodeError('bad time tag');
    this.msChain = false;
    this.previous += bigUnzigzag(big >> 2n) * (tag === 1n ? MILLISECOND : 1n);
    return this.previous;
  }

  end(): void {
    if (this.pos !== this.buf.length)
      throw new StateDecodeError(`${this.buf.length - this.pos} trailing bytes`);
  }
}

function readHistogram(r: Reader, h: Histogram): void {
  const weights = h.bucketWeight;
  const n = weights.length;
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
    weights[b] = r.f64();
  }
}

/** Decodes encodeState's output; throws StateDecodeError on anything else. */
export function decodeState(bytes: Uint8Array): ScopeState {
  const r = new Reader(bytes);
  const version = r.u8();
  if (version !== FORMAT_VERSION) throw new StateDecodeError(`unsupported state format version ${version}`);
  const flags = r.u8();
  if ((flags & ~FLAG_CUSTOM_CONFIG) !== 0) throw new StateDecodeError(`unknown flags ${flags}`);
  let config: AggregationsConfig = DEFAULT_AGGREGATIONS_CONFIG;
  if (flags & FLAG_CUSTOM_CONFIG) {
    const cpuHistogramDecayHalfLife = r.bigUvarint();
    const memoryHistogramDecayHalfLife = r.bigUvarint();
    const memoryAggregationInterval = r.bigUvarint();
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
  const creationTime = r.time();
  const a = new AggregateContainerState(config, creationTime);
  const c = new ContainerState(a);
  a.lastSampleStart = r.time();
  a.firstSampleStart = r.time();
  c.lastCpuSampleStart = r.time();
  c.windowEnd = r.time();
  c.lastMemorySampleStart = r.time();
  a.cpuUsage.referenceTimestamp = r.time();
  a.memoryPeaks.referenceTimestamp = r.time();
  a.totalSamplesCount = r.safeInt();
  c.memoryPeak = r.safeInt();
  c.oomPeak = r.safeInt();
  readHistogram(r, a.cpuUsage.histogram);
  readHistogram(r, a.memoryPeaks.histogram);
  r.end();
  return new ScopeState(a, c);
}
