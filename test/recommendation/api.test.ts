/**
 * The public surface of shared/recommendation: lossless storage (identical recommendations and identical
 * evolution after a restart), its size budget, upstream checkpoints, merging, expiry, the pod-level
 * assembly and the Go-compatible primitives it rests on.
 */
import { describe, expect, it } from 'vitest';
import type { Bytes, EpochMillis, Millicores } from '../../shared/kernel/units.js';
import { goExp2, goInt64, goLdexp, goPow, MIN_INT64 } from '../../shared/recommendation/gomath.js';
import { formatGoDuration, HOUR, MINUTE, SECOND, timeRound } from '../../shared/recommendation/gotime.js';
import {
  addCpuSample,
  addMemorySample,
  CheckpointError,
  type ContainerRecommendation,
  createState,
  DurationError,
  decodeState,
  encodeState,
  fromCheckpoint,
  isExpired,
  isGarbage,
  mergeStates,
  OptionsError,
  parseGoDuration,
  parseRfc3339,
  type RecommenderOptions,
  recommend,
  recordOom,
  resolveOptions,
  type ScopeState,
  StateDecodeError,
  toCheckpoint,
} from '../../shared/recommendation/index.js';
import {
  feed,
  firstTime,
  generateHistory,
  type HistorySpec,
  latestTime,
  snapshot,
  stateFromHistory,
} from './history.js';

const MiB = 1024 * 1024;
const DAY = 86_400_000;
const ms = (iso: string) => Date.parse(iso) as EpochMillis;

const profiles: Record<string, HistorySpec> = {
  'diurnal agent with OOMs': {
    start: '2024-03-01T00:00:00Z',
    days: 10,
    cpuBaseMillicores: 180,
    cpuDiurnal: 0.6,
    cpuNoise: 0.25,
    memoryStartBytes: 300 * MiB,
    memoryGrowthPerDayBytes: 12 * MiB,
    ooms: [
      { afterHours: 5 * 24 + 12, memoryRequestBytes: 384 * MiB },
      { afterHours: 8 * 24 + 2, memoryRequestBytes: 512 * MiB },
    ],
    seed: 7,
  },
  'bursty collector': {
    start: '2024-05-10T07:30:00Z',
    days: 10,
    cpuBaseMillicores: 400,
    cpuDiurnal: 0.9,
    cpuNoise: 0.8,
    memoryStartBytes: 1200 * MiB,
    memoryGrowthPerDayBytes: 40 * MiB,
    memoryNoise: 0.2,
    seed: 3,
  },
  'tiny sidecar': {
    start: '2024-01-01T00:00:00Z',
    days: 10,
    cpuBaseMillicores: 3,
    cpuNoise: 0.9,
    memoryStartBytes: 20 * MiB,
    seed: 5,
  },
};

const recommendOne = (
  state: ScopeState | ScopeState[],
  options?: RecommenderOptions,
): ContainerRecommendation => recommend([{ name: 'c', state }], options)[0] as ContainerRecommendation;

describe('lossless storage', () => {
  for (const [name, spec] of Object.entries(profiles)) {
    it(`${name}: decode(encode(state)) recommends and evolves exactly as the state`, () => {
      const h = generateHistory(spec);
      const start = firstTime(h);
      const restart = (start + 8 * DAY + 7 * 3_600_000 + 123_000) as EpochMillis;

      const uninterrupted = createState(start);
      feed(uninterrupted, h);

      const before = createState(start);
      feed(before, h, -Infinity, restart);
      const bytes = encodeState(before);
      // The budget: at most 1 KiB per (container, node) scope after 8 days.
      expect(bytes.length).toBeLessThanOrEqual(1024);
      const restored = decodeState(bytes);
      expect(snapshot(restored)).toEqual(snapshot(before));
      expect(encodeState(restored)).toEqual(bytes);
      expect(recommendOne(restored)).toEqual(recommendOne(before));
      expect(toCheckpoint(restored, restart)).toEqual(toCheckpoint(before, restart));

      // Two more days after the restart: exactly as if it had not happened.
      feed(restored, h, restart);
      expect(snapshot(restored)).toEqual(snapshot(uninterrupted));
      expect(encodeState(restored)).toEqual(encodeState(uninterrupted));
      expect(recommendOne(restored)).toEqual(recommendOne(uninterrupted));
    });
  }

  it('keeps custom aggregation settings, fresh states and sub-millisecond checkpoint times', () => {
    const options: RecommenderOptions = {
      cpuHistogramDecayHalfLife: '12h',
      memoryHistogramDecayHalfLife: '1h30m',
      memoryAggregationInterval: '6h',
      memoryAggregationIntervalCount: 4,
      oomBumpUpRatio: 1.5,
      oomMinBumpUp: 10 * MiB,
    };
    const fresh = createState(ms('2024-01-01T00:00:00Z'), options);
    expect(snapshot(decodeState(encodeState(fresh)))).toEqual(snapshot(fresh));
    const s = stateFromHistory(
      generateHistory({ ...profiles['tiny sidecar'], days: 2 } as HistorySpec),
      options,
    );
    const back = decodeState(encodeState(s));
    expect(snapshot(back)).toEqual(snapshot(s));
    expect(back.config.memoryAggregationInterval).toBe(6n * HOUR);
    // A default-settings state does not spend bytes on its settings.
    const d = stateFromHistory(generateHistory({ ...profiles['tiny sidecar'], days: 2 } as HistorySpec));
    expect(encodeState(d).length).toBeLessThan(encodeState(s).length);
  });

  it('rejects what it did not write', () => {
    const bytes = encodeState(
      stateFromHistory(generateHistory({ ...profiles['tiny sidecar'], days: 1 } as HistorySpec)),
    );
    expect(() => decodeState(bytes.slice(0, bytes.length - 3))).toThrow(StateDecodeError);
    expect(() => decodeState(new Uint8Array([...bytes, 0]))).toThrow(StateDecodeError);
    expect(() => decodeState(new Uint8Array([9, ...bytes.slice(1)]))).toThrow(/version/);
    expect(() => decodeState(new Uint8Array())).toThrow(StateDecodeError);
  });
});

describe('upstream checkpoints', () => {
  const h = generateHistory({ ...profiles['diurnal agent with OOMs'], days: 8 } as HistorySpec);
  const state = stateFromHistory(h);
  const now = latestTime(h);

  it('has the v3 shape: max weight 10000, exact totals, second-precision times', () => {
    const cp = toCheckpoint(state, now);
    expect(cp.version).toBe('v3');
    // The OOM two hours into day 9 is the latest event of this history.
    expect(cp.lastUpdateTime).toBe('2024-03-09T02:00:17Z');
    expect(cp.firstSampleStart).toBe('2024-03-01T00:00:00Z');
    expect(cp.totalSamplesCount).toBe(11520);
    expect(Math.max(...Object.values(cp.cpuHistogram.bucketWeights ?? {}))).toBe(10000);
    expect(cp.cpuHistogram.totalWeight).toBe(state.aggregate.cpuUsage.histogram.totalWeight);
    expect(cp.cpuHistogram.referenceTimestamp).toBe('2024-03-01T00:00:00Z');
    // JSON round trip is lossless for the document itself.
    expect(JSON.parse(JSON.stringify(cp))).toEqual(cp);
  });

  it('leaves out the memory peak of the window in progress, and only while it is in progress', () => {
    const windowEnd = Number(state.container.windowEnd / 1_000_000n) as EpochMillis;
    const during = toCheckpoint(state, now);
    const after = toCheckpoint(state, windowEnd);
    const inProgress = state.aggregate.memoryPeaks.histogram.totalWeight;
    expect(after.memoryHistogram.totalWeight).toBe(inProgress);
    expect(during.memoryHistogram.totalWeight as number).toBeLessThan(inProgress);
    // The live state is not touched by writing a checkpoint.
    expect(state.aggregate.memoryPeaks.histogram.totalWeight).toBe(inProgress);
  });

  it('restores as upstream does: close to the original, merged with the live state afterwards', () => {
    // At the window's end nothing is in progress, so only the quantisation differs.
    const windowEnd = Number(state.container.windowEnd / 1_000_000n) as EpochMillis;
    const restored = fromCheckpoint(JSON.parse(JSON.stringify(toCheckpoint(state, windowEnd))), now);
    const original = recommendOne(state);
    const again = recommendOne(restored);
    // Quantised weights may move a percentile by at most a bucket (5%).
    for (const k of ['cpu', 'memory'] as const) {
      expect(Math.abs((again.target[k] as number) / (original.target[k] as number) - 1)).toBeLessThan(0.06);
    }
    // After a restart upstream feeds a new state and merges the checkpoint into each recommendation.
    const live = createState(now);
    addCpuSample(live, (now + 60_000) as EpochMillis, 200 as Millicores);
    const merged = recommendOne([restored, live]);
    expect(merged.target.cpu).toBeGreaterThan(0);
    expect(() => fromCheckpoint({ ...toCheckpoint(state, now), version: 'v2' }, now)).toThrow(
      CheckpointError,
    );
    expect(() =>
      fromCheckpoint(
        {
          ...toCheckpoint(state, now),
          cpuHistogram: { referenceTimestamp: null, bucketWeights: { '176': 1 }, totalWeight: 1 },
        },
        now,
      ),
    ).toThrow(CheckpointError);
  });
});

describe('merging node states', () => {
  const a = stateFromHistory(
    generateHistory({ ...profiles['diurnal agent with OOMs'], days: 6 } as HistorySpec),
  );
  const b = stateFromHistory(
    generateHistory({
      ...profiles['diurnal agent with OOMs'],
      start: '2024-03-04T09:00:00Z',
      days: 5,
      seed: 9,
    } as HistorySpec),
  );

  it('aligns the older reference to the younger one and adds the weights, as upstream', () => {
    const beforeA = encodeState(a);
    const beforeB = encodeState(b);
    const m = mergeStates([a, b]);
    const ha = a.aggregate.cpuUsage;
    const hb = b.aggregate.cpuUsage;
    expect(ha.referenceTimestamp < hb.referenceTimestamp).toBe(true);
    expect(m.aggregate.cpuUsage.referenceTimestamp).toBe(hb.referenceTimestamp);
    const k = Number((ha.referenceTimestamp - hb.referenceTimestamp) / (24n * HOUR));
    const merged = m.aggregate.cpuUsage.histogram.bucketWeight;
    for (let i = 0; i < merged.length; i++) {
      const want =
        goLdexp(ha.histogram.bucketWeight[i] as number, k) + (hb.histogram.bucketWeight[i] as number);
      if (i >= m.aggregate.cpuUsage.histogram.minBucket && i <= m.aggregate.cpuUsage.histogram.maxBucket)
        expect(merged[i]).toBe(want);
    }
    expect(m.aggregate.totalSamplesCount).toBe(a.aggregate.totalSamplesCount + b.aggregate.totalSamplesCount);
    expect(m.aggregate.firstSampleStart).toBe(a.aggregate.firstSampleStart);
    expect(m.aggregate.lastSampleStart).toBe(b.aggregate.lastSampleStart);
    // Inputs untouched (upstream shifts the older argument in place; that changes nothing merged).
    expect(encodeState(a)).toEqual(beforeA);
    expect(encodeState(b)).toEqual(beforeB);
  });

  it('gives the DaemonSet-wide recommendation from all nodes, whatever the order', () => {
    const ab = recommendOne([a, b]);
    const ba = recommendOne([b, a]);
    expect(ab).toEqual(ba);
    expect(recommendOne(mergeStates([a, b]))).toEqual(ab);
  });
});

describe('recommend', () => {
  const t0 = ms('2024-01-01T00:00:00Z');
  const tiny = () => {
    const s = createState(t0);
    for (let i = 0; i < 60; i++) addCpuSample(s, (t0 + i * 60_000) as EpochMillis, 1 as Millicores);
    addMemorySample(s, t0, (1 * MiB) as Bytes);
    return s;
  };

  it('splits the pod minimum across the recommended containers only', () => {
    const two = recommend([
      { name: 'b', state: tiny() },
      { name: 'a', state: tiny() },
      { name: 'off', state: tiny(), policy: { mode: 'Off' } },
      { name: 'silent', state: createState(t0) },
    ]);
    expect(two.map((r) => r.name)).toEqual(['a', 'b']);
    expect(two[0]?.target).toEqual({ cpu: 12, memory: 131072000 });
    const one = recommend([{ name: 'a', state: tiny() }]);
    expect(one[0]?.target).toEqual({ cpu: 25, memory: 262144000 });
    expect(() =>
      recommend([
        { name: 'a', state: tiny() },
        { name: 'a', state: tiny() },
      ]),
    ).toThrow(/twice/);
  });

  it('caps with the policy first and the global maximum for what the policy leaves out', () => {
    const s = stateFromHistory(generateHistory({ ...profiles['bursty collector'], days: 3 } as HistorySpec));
    const raw = recommendOne(s);
    const capped = recommend([{ name: 'c', state: s, policy: { maxAllowed: { cpu: 100 as Millicores } } }], {
      containerRecommendationMaxAllowedCpu: 50 as Millicores,
      containerRecommendationMaxAllowedMemory: (100 * MiB) as Bytes,
    })[0] as ContainerRecommendation;
    expect(capped.target).toEqual({ cpu: 100, memory: 100 * MiB });
    expect(capped.upperBound).toEqual({ cpu: 100, memory: 100 * MiB });
    expect(capped.uncappedTarget).toEqual(raw.target);
    const rounded = recommendOne(s, { roundCpuMillicores: 100, roundMemoryBytes: 64 * MiB });
    expect((rounded.target.cpu as number) % 100).toBe(0);
    expect((rounded.target.memory as number) % (64 * MiB)).toBe(0);
    expect(rounded.target.cpu as number).toBeGreaterThanOrEqual(raw.target.cpu as number);
  });

  it('keeps limits proportional for RequestsAndLimits and caps to the limit for RequestsOnly', () => {
    const s = stateFromHistory(
      generateHistory({ ...profiles['diurnal agent with OOMs'], days: 3 } as HistorySpec),
    );
    const current = {
      requests: { cpu: 100 as Millicores, memory: (200 * MiB) as Bytes },
      limits: { cpu: 300 as Millicores, memory: (300 * MiB) as Bytes },
    };
    const rl = recommend([{ name: 'c', state: s, ...current }])[0] as ContainerRecommendation;
    expect(rl.limits?.cpu).toBe(Math.floor(((rl.target.cpu as number) * 300) / 100));
    expect(rl.limits?.memory).toBe(Math.floor(((rl.target.memory as number) * 300) / 200));
    const ro = recommend([
      { name: 'c', state: s, policy: { controlledValues: 'RequestsOnly' }, ...current },
    ])[0];
    expect(ro?.limits).toBeUndefined();
    expect(ro?.target.memory).toBe(300 * MiB);
    expect(ro?.annotations).toContain('memory capped to container limit');
    expect(ro?.uncappedTarget).toEqual(rl.uncappedTarget);
  });

  it('widens the bounds while history is short (confidence in days of CPU samples)', () => {
    const day = stateFromHistory(
      generateHistory({ ...profiles['diurnal agent with OOMs'], days: 1 } as HistorySpec),
    );
    const week = stateFromHistory(
      generateHistory({ ...profiles['diurnal agent with OOMs'], days: 7 } as HistorySpec),
    );
    const r1 = recommendOne(day);
    const r7 = recommendOne(week);
    const ratio = (r: ContainerRecommendation) => (r.upperBound.cpu as number) / (r.target.cpu as number);
    expect(ratio(r1)).toBeGreaterThan(ratio(r7));
    // No CPU samples at all: upstream gives no recommendation.
    const memOnly = createState(t0);
    addMemorySample(memOnly, t0, (100 * MiB) as Bytes);
    expect(recommend([{ name: 'c', state: memOnly }])).toEqual([]);
  });
});

describe('ingestion and expiry', () => {
  const t0 = ms('2024-01-01T00:00:00Z');

  it('drops out-of-order and negative samples and stale OOMs, as upstream', () => {
    const s = createState(t0);
    expect(addCpuSample(s, t0, 100 as Millicores)).toBe(true);
    expect(addCpuSample(s, t0, 100 as Millicores)).toBe(false);
    expect(addCpuSample(s, (t0 + 1) as EpochMillis, -1 as Millicores)).toBe(false);
    expect(addMemorySample(s, (t0 + 10 * 3_600_000) as EpochMillis, (50 * MiB) as Bytes)).toBe(true);
    expect(addMemorySample(s, t0, (50 * MiB) as Bytes)).toBe(false);
    expect(recordOom(s, (t0 - 15 * 3_600_000) as EpochMillis, (64 * MiB) as Bytes)).toBe(false);
    expect(recordOom(s, t0, (64 * MiB) as Bytes)).toBe(true);
    expect(s.container.oomPeak).toBe(164 * MiB);
    expect(() => addCpuSample(s, 1.5 as EpochMillis, 1 as Millicores)).toThrow(RangeError);
  });

  it('expires after interval × count without CPU samples, and collects empty orphans', () => {
    const s = createState(t0);
    addCpuSample(s, t0, 10 as Millicores);
    expect(isExpired(s, (t0 + 8 * DAY - 1) as EpochMillis)).toBe(false);
    expect(isExpired(s, (t0 + 8 * DAY) as EpochMillis)).toBe(true);
    const empty = createState(t0);
    addMemorySample(empty, t0, (10 * MiB) as Bytes);
    expect(isExpired(empty, (t0 + 7 * DAY) as EpochMillis)).toBe(false);
    expect(isGarbage(empty, (t0 + DAY) as EpochMillis, true)).toBe(false);
    expect(isGarbage(empty, (t0 + DAY) as EpochMillis, false)).toBe(true);
    expect(isGarbage(s, (t0 + DAY) as EpochMillis, false)).toBe(false);
    const short = createState(t0, { memoryAggregationInterval: '1h', memoryAggregationIntervalCount: 4 });
    expect(isExpired(short, (t0 + 4 * 3_600_000) as EpochMillis)).toBe(true);
  });
});

describe('options and Go primitives', () => {
  it('validates options by name', () => {
    expect(resolveOptions().estimation.targetCpuPercentile).toBe(0.9);
    expect(
      resolveOptions({ cpuHistogramDecayHalfLife: '1h30m' }).aggregations.cpuHistogramDecayHalfLife,
    ).toBe(90n * MINUTE);
    const bad: Array<[RecommenderOptions, string]> = [
      [{ cpuHistogramDecayHalfLife: '24 hours' }, 'cpuHistogramDecayHalfLife'],
      [{ memoryAggregationInterval: '0s' }, 'memoryAggregationInterval'],
      [{ memoryAggregationIntervalCount: 0 }, 'memoryAggregationIntervalCount'],
      [{ targetCpuPercentile: Number.NaN }, 'targetCpuPercentile'],
      [{ roundCpuMillicores: 2.5 }, 'roundCpuMillicores'],
      [{ oomMinBumpUp: 1, oomMinBumpUpBytes: 2 }, 'oomMinBumpUpBytes'],
    ];
    for (const [o, field] of bad) {
      try {
        resolveOptions(o);
        expect.unreachable(field);
      } catch (e) {
        expect(e).toBeInstanceOf(OptionsError);
        expect((e as OptionsError).field).toBe(field);
      }
    }
  });

  it('parses Go durations as time.ParseDuration does', () => {
    const ok: Array<[string, bigint]> = [
      ['24h', 24n * HOUR],
      ['1h30m', 90n * MINUTE],
      ['500ms', 500_000_000n],
      ['1.5h', 90n * MINUTE],
      ['-1.5s', -1_500_000_000n],
      ['0', 0n],
      ['1µs', 1000n],
      ['1us', 1000n],
      ['.5s', 500_000_000n],
      ['2h45m30.5s', 2n * HOUR + 45n * MINUTE + 30n * SECOND + 500_000_000n],
      ['9223372036854775807ns', (1n << 63n) - 1n],
      ['-9223372036854775808ns', -(1n << 63n)],
    ];
    for (const [s, want] of ok) expect(parseGoDuration(s), s).toBe(want);
    for (const s of ['', '1', '1d', '1.h.', 'h', '.s', '9223372036854775808ns', '3000000h', '1 h'])
      expect(() => parseGoDuration(s), s).toThrow(DurationError);
    expect(formatGoDuration(24n * HOUR)).toBe('24h0m0s');
    expect(formatGoDuration(1_500_000n)).toBe('1.5ms');
  });

  it('parses RFC 3339 and rounds times from Go zero time', () => {
    expect(parseRfc3339('2024-01-01T02:00:00+02:00')).toBe(BigInt(ms('2024-01-01T00:00:00Z')) * 1_000_000n);
    expect(parseRfc3339('2024-01-01T00:00:00.123456789Z')).toBe(
      BigInt(ms('2024-01-01T00:00:00Z')) * 1_000_000n + 123_456_789n,
    );
    for (const bad of [
      '2024-02-30T00:00:00Z',
      '2024-01-01 00:00:00Z',
      '2024-01-01T24:00:00Z',
      '2024-01-01T00:00:00',
    ])
      expect(parseRfc3339(bad), bad).toBeUndefined();
    const t = BigInt(ms('2009-02-18T03:31:30Z')) * 1_000_000n;
    expect(timeRound(t, HOUR)).toBe(BigInt(ms('2009-02-18T04:00:00Z')) * 1_000_000n);
    const half = BigInt(ms('2024-01-01T12:00:00Z')) * 1_000_000n;
    expect(timeRound(half, 24n * HOUR)).toBe(BigInt(ms('2024-01-02T00:00:00Z')) * 1_000_000n);
  });

  it('computes pow, exp2, ldexp and int64 conversions as Go on amd64', () => {
    expect(goPow(1.05, 4)).toBe(1.21550625);
    expect(goPow(17, -2)).toBe(1 / (17 * 17));
    expect(goPow(Infinity, -2)).toBe(0);
    expect(goPow(0, -1)).toBe(Infinity);
    for (let k = -1074; k <= 1023; k += 7) expect(goExp2(k)).toBe(2 ** k);
    for (let i = 0; i < 2000; i++) {
      const x = (i - 1000) / 7.3;
      const v = goExp2(x);
      expect(Math.abs(v / 2 ** x - 1)).toBeLessThan(3e-16);
    }
    expect(goLdexp(1, -1075)).toBe(0);
    expect(goLdexp(1.5, -1074)).toBe(2 ** -1073);
    expect(goInt64(Number.NaN)).toBe(MIN_INT64);
    expect(goInt64(-2.9)).toBe(-2);
  });
});
