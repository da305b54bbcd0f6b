/**
 * The optimised paths against the straightforward ones they replace: the number-arithmetic state
 * encoding against the original BigInt implementation (same bytes for every state, same state or same
 * error for every input), over realistic histories and over the corners (nanosecond times, times far
 * apart, custom settings, -0 weights, every bucket filled, values past 2^53).
 */
import { describe, expect, it } from 'vitest';
import type { NodeFacts } from '../../shared/cycle/views.js';
import type { Bytes, EpochMillis, Millicores } from '../../shared/kernel/units.js';
import { ABSENT, membersOf, recommendGroups, scopeValues } from '../../shared/nodescope/groups.js';
import { type DsModel, newNodeRecord } from '../../shared/nodescope/model.js';
import { DsRecommendations } from '../../shared/nodescope/recommend.js';
import { type NodeScopeTarget, scopeOf } from '../../shared/nodescope/targets.js';
import { goExp2, goLdexp, goPow } from '../../shared/recommendation/gomath.js';
import { ZERO_TIME } from '../../shared/recommendation/gotime.js';
import {
  addCpuSample,
  addMemorySample,
  type ContainerPolicy,
  type ContainerToRecommend,
  createState,
  decodeState,
  encodeState,
  fromCheckpoint,
  memorySampleMatters,
  memorySampleThreshold,
  mergeStates,
  type RecommenderOptions,
  recommend,
  recordOom,
  type ScopeState,
  toCheckpoint,
} from '../../shared/recommendation/index.js';
import { referenceDecodeState, referenceEncodeState } from './binary-v1-reference.js';
import * as reference from './gomath-reference.js';
import { prng, snapshot } from './history.js';
import { referenceRecommend } from './recommend-reference.js';

const MiB = 2 ** 20;
const DAY = 86_400_000;

/** A random history through the public API: days of samples every stepMs, noise, jitter, OOMs. */
function randomState(seed: number, options?: RecommenderOptions): ScopeState {
  const r = prng(seed);
  const start = Date.UTC(2024, 0, 1) + Math.floor(r() * 365 * DAY);
  const days = Math.floor(r() * 10);
  const stepMs = [60_000, 300_000, 1_800_000, 17_000][Math.floor(r() * 4)] as number;
  const cpu = 1 + r() * 2000;
  const memory = MiB * (1 + r() * 4000);
  const s = createState((start - Math.floor(r() * 5000)) as EpochMillis, options);
  let t = start;
  for (let i = 0; i < (days * DAY) / stepMs; i++) {
    t += stepMs + Math.floor(r() * 3000) - 1500;
    const daily = 1 + 0.6 * Math.sin((2 * Math.PI * (t % DAY)) / DAY);
    if (r() < 0.97) addCpuSample(s, t as EpochMillis, Math.round(cpu * daily * (0.2 + r())) as Millicores);
    if (r() < 0.97) addMemorySample(s, t as EpochMillis, Math.round(memory * (0.8 + 0.4 * r())) as Bytes);
    if (r() < 0.002) recordOom(s, (t - Math.floor(r() * 60_000)) as EpochMillis, Math.round(memory) as Bytes);
  }
  return s;
}

function corners(): ScopeState[] {
  const out: ScopeState[] = [];
  out.push(createState(Date.UTC(2024, 0, 1) as EpochMillis));
  out.push(createState(0 as EpochMillis));
  out.push(createState(-5 as EpochMillis));
  out.push(
    randomState(1, {
      cpuHistogramDecayHalfLife: '12h',
      memoryHistogramDecayHalfLife: '1h30m',
      memoryAggregationInterval: '6h',
      memoryAggregationIntervalCount: 4,
      oomBumpUpRatio: 1.5,
      oomMinBumpUp: 10 * MiB,
    }),
  );
  out.push(randomState(2, { cpuHistogramDecayHalfLife: '2562047h' }));
  // Checkpoint times with nanoseconds, and a fraction-of-a-millisecond reference.
  const cp = toCheckpoint(randomState(3), Date.UTC(2025, 0, 1) as EpochMillis);
  cp.cpuHistogram.referenceTimestamp = '2024-12-31T00:00:00.000000123Z';
  cp.firstSampleStart = '2024-12-30T01:02:03.5Z';
  cp.lastSampleStart = '2024-12-31T23:59:59.999999999Z';
  out.push(fromCheckpoint(cp, Date.UTC(2025, 0, 1) as EpochMillis));
  cp.memoryHistogram.referenceTimestamp = '0001-01-01T00:00:00.000001Z';
  out.push(fromCheckpoint(cp, Date.UTC(2025, 0, 1) as EpochMillis));
  out.push(mergeStates([randomState(4), randomState(5), randomState(6)]));
  // Hand-made corners: times far apart and at the extremes, -0 and every bucket, values past 2^53.
  const wild = randomState(7);
  wild.aggregate.creationTime = ZERO_TIME + 1n;
  wild.aggregate.firstSampleStart = -(2n ** 62n);
  wild.aggregate.lastSampleStart = 2n ** 62n + 123n;
  wild.container.lastCpuSampleStart = 2n ** 62n;
  wild.container.windowEnd = 253402300799n * 1_000_000_000n;
  wild.container.lastMemorySampleStart = 9_007_199_254_740_993n * 1_000_000n;
  wild.aggregate.cpuUsage.referenceTimestamp = 9_007_199_254_740_991n * 1_000_000n;
  wild.aggregate.memoryPeaks.referenceTimestamp = -9_007_199_254_740_991n * 1_000_000n;
  wild.aggregate.totalSamplesCount = Number.MAX_SAFE_INTEGER;
  wild.container.memoryPeak = 2 ** 40 + 1;
  wild.container.oomPeak = 0;
  const w = wild.aggregate.cpuUsage.histogram.bucketWeight;
  for (let b = 0; b < w.length; b++) w[b] = b % 7 === 0 ? -0 : b * 1e-9 + (b % 3 === 0 ? 5e-324 : 0);
  wild.aggregate.memoryPeaks.histogram.bucketWeight[175] = Number.MAX_VALUE;
  out.push(wild);
  const ms = randomState(8);
  // Whole-millisecond times whose deltas do not fit the number path.
  ms.aggregate.creationTime = 2n ** 60n * 1_000_000n;
  ms.aggregate.lastSampleStart = -(2n ** 60n) * 1_000_000n;
  ms.aggregate.firstSampleStart = 2n ** 51n * 1_000_000n;
  ms.container.lastCpuSampleStart = -(2n ** 51n) * 1_000_000n;
  out.push(ms);
  return out;
}

describe('state encoding: number arithmetic writes and reads what the BigInt implementation did', () => {
  const states = [...corners(), ...Array.from({ length: 120 }, (_, i) => randomState(100 + i))];

  it('writes the same bytes for every state, and decodes them to the same state', () => {
    for (const s of states) {
      const bytes = encodeState(s);
      expect(bytes).toEqual(referenceEncodeState(s));
      const snap = snapshot(referenceDecodeState(bytes));
      expect(snapshot(decodeState(bytes))).toEqual(snap);
      expect(encodeState(decodeState(bytes))).toEqual(bytes);
    }
    // More than 127 non-zero buckets: the count takes two bytes.
    expect(encodeState(states[8] as ScopeState).length).toBeGreaterThan(176 * 9);
  });

  it('throws the same error for every damaged input, or decodes it to the same state', () => {
    const r = prng(42);
    const errorOf = (f: () => unknown): string | undefined => {
      try {
        f();
        return undefined;
      } catch (e) {
        return `${(e as Error).name}: ${(e as Error).message}`;
      }
    };
    let decoded = 0;
    let failed = 0;
    for (let i = 0; i < 6000; i++) {
      const base = encodeState(states[Math.floor(r() * states.length)] as ScopeState);
      const bytes = Array.from(base);
      const edits = 1 + Math.floor(r() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(r() * bytes.length);
        const kind = r();
        if (kind < 0.5) bytes[at] = Math.floor(r() * 256);
        else if (kind < 0.65) bytes[at] = (bytes[at] as number) | 0x80;
        else if (kind < 0.8) bytes.splice(at, 1 + Math.floor(r() * 4));
        else if (kind < 0.9)
          bytes.splice(at, 0, ...Array.from({ length: 1 + Math.floor(r() * 12) }, () => 0xff));
        else bytes.length = at;
      }
      const input = new Uint8Array(bytes);
      const want = errorOf(() => referenceDecodeState(input));
      const got = errorOf(() => decodeState(input));
      expect(got).toBe(want);
      if (want === undefined) {
        decoded++;
        expect(snapshot(decodeState(input))).toEqual(snapshot(referenceDecodeState(input)));
      } else failed++;
    }
    expect(decoded).toBeGreaterThan(100);
    expect(failed).toBeGreaterThan(100);
  });
});

describe('Go float primitives: the fast paths give the original bit for bit', () => {
  const r = prng(9);
  const same = (got: number, want: number) => {
    if (!Object.is(got, want)) expect(got).toBe(want);
  };
  const interesting = [0, -0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.5, 1, 2];
  const randomDouble = (): number => {
    const k = r();
    if (k < 0.2) return interesting[Math.floor(r() * interesting.length)] as number;
    const sign = r() < 0.5 ? -1 : 1;
    if (k < 0.4) return sign * r() * 2 ** (Math.floor(r() * 2100) - 1075);
    return sign * (0.5 + r());
  };

  it('goLdexp', () => {
    for (let i = 0; i < 200_000; i++) {
      const frac = randomDouble();
      const exp = r() < 0.5 ? Math.floor(r() * 240) - 120 : Math.floor(r() * 4400) - 2200;
      same(goLdexp(frac, exp), reference.goLdexp(frac, exp));
    }
    for (const f of [Number.NaN, Infinity, -Infinity]) same(goLdexp(f, 3), reference.goLdexp(f, 3));
  });

  it('goExp2 (the decay factors) and goPow (bucket starts, confidence factors)', () => {
    for (let i = 0; i < 200_000; i++) {
      const x = r() < 0.9 ? (r() - 0.5) * 240 : (r() - 0.5) * 2200;
      same(goExp2(x), reference.goExp2(x));
    }
    for (let i = 0; i < 100_000; i++) {
      const x = r() < 0.7 ? 1 + r() * 3 : randomDouble();
      const yKind = r();
      const y =
        yKind < 0.5
          ? Math.floor(r() * 400) - 200
          : yKind < 0.7
            ? [1, -1, 2, -2, 0.5, -0.5, 2 ** 62, 2 ** 63, -(2 ** 63)][Math.floor(r() * 9)]
            : (r() - 0.5) * 50;
      same(goPow(x, y as number), reference.goPow(x, y as number));
    }
  });
});

describe('recommend: the same results as merging every container into a fresh aggregate', () => {
  const r = prng(11);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const amount = (scale: number) => Math.floor(r() * scale);
  const maybe = <T>(v: T): T | undefined => (r() < 0.5 ? v : undefined);
  const states = [
    ...corners().filter((_, i) => i !== 8 && i !== 9),
    ...Array.from({ length: 60 }, (_, i) => randomState(300 + i)),
  ];
  // A state restored from a checkpoint whose reference is not a multiple of the half-life.
  const odd = toCheckpoint(randomState(17), Date.UTC(2025, 0, 1) as EpochMillis);
  odd.cpuHistogram.referenceTimestamp = '2024-12-30T13:17:42.5Z';
  odd.memoryHistogram.referenceTimestamp = '2024-12-29T11:59:59Z';
  states.push(fromCheckpoint(odd, Date.UTC(2025, 0, 1) as EpochMillis));
  const optionSets: (RecommenderOptions | undefined)[] = [
    undefined,
    {},
    { targetCpuPercentile: 0.5, recommendationMarginFraction: 0.3, confidenceIntervalCpu: '36h' },
    { roundCpuMillicores: 50, roundMemoryBytes: 4 * MiB, podRecommendationMinCpuMillicores: 400 },
    {
      containerRecommendationMaxAllowedCpu: 300 as Millicores,
      containerRecommendationMaxAllowedMemory: (300 * MiB) as Bytes,
    },
  ];
  const policy = (): ContainerPolicy | undefined =>
    r() < 0.4
      ? undefined
      : ({
          ...(r() < 0.1 ? { mode: 'Off' as const } : {}),
          ...(r() < 0.4 ? { minAllowed: { cpu: maybe(amount(500)), memory: maybe(amount(800 * MiB)) } } : {}),
          ...(r() < 0.4
            ? { maxAllowed: { cpu: maybe(amount(3000)), memory: maybe(amount(4000 * MiB)) } }
            : {}),
          ...(r() < 0.2
            ? { controlledResources: pick([['cpu'], ['memory'], ['memory', 'cpu']] as const) }
            : {}),
          ...(r() < 0.5 ? { controlledValues: pick(['RequestsOnly', 'RequestsAndLimits'] as const) } : {}),
        } as ContainerPolicy);
  const resources = (scale: number) =>
    r() < 0.3
      ? undefined
      : {
          cpu: maybe(pick([0, amount(2000), 2 ** 40 + amount(1000)])),
          memory: maybe(pick([0, amount(scale), 2 ** 52 + amount(1000)])),
        };

  it('for single states used as they are, merged lists, policies, limits and options', () => {
    let compared = 0;
    for (let i = 0; i < 1500; i++) {
      const containers: ContainerToRecommend[] = [];
      const n = 1 + Math.floor(r() * 3);
      for (let k = 0; k < n; k++) {
        const one = pick(states);
        const state = r() < 0.7 ? (r() < 0.8 ? one : [one]) : [one, pick(states), pick(states)];
        const p = policy();
        containers.push({
          name: `c${k}`,
          state,
          ...(p ? { policy: p } : {}),
          ...(r() < 0.7 ? { requests: resources(2000 * MiB) } : {}),
          ...(r() < 0.7 ? { limits: resources(8000 * MiB) } : {}),
        } as ContainerToRecommend);
      }
      const options = pick(optionSets);
      let want: unknown;
      try {
        want = referenceRecommend(containers, options);
      } catch (e) {
        // States merged across different settings: both refuse.
        expect(() => recommend(containers, options)).toThrow((e as Error).message);
        continue;
      }
      expect(recommend(containers, options)).toEqual(want);
      compared++;
    }
    expect(compared).toBeGreaterThan(1000);
  });
});

describe('memory samples that cannot change a state', () => {
  it('replaying them as 0 gives the same state, until the window moves on', () => {
    const r = prng(23);
    let skipped = 0;
    let kept = 0;
    for (let i = 0; i < 300; i++) {
      const real = randomState(500 + i);
      const threshold = memorySampleThreshold(real);
      if (!threshold) {
        expect(real.container.windowEnd).toBe(ZERO_TIME);
        continue;
      }
      const replayed = decodeState(encodeState(real));
      let t = Number(real.container.lastMemorySampleStart / 1_000_000n);
      let moved = false;
      for (let k = 0; k < 400; k++) {
        t += Math.floor(r() * 600_000) - (r() < 0.1 ? 900_000 : 0);
        const kind = r();
        if (kind < 0.2) {
          const cpu = Math.floor(r() * 500) as Millicores;
          expect(addCpuSample(replayed, t as EpochMillis, cpu)).toBe(
            addCpuSample(real, t as EpochMillis, cpu),
          );
        } else if (kind < 0.23) {
          // OOMs are often dated before the samples already seen.
          const at = (t - Math.floor(r() * 3 * 3_600_000)) as EpochMillis;
          const request = Math.floor(r() * 600 * MiB) as Bytes;
          if (at >= threshold.before) moved = true;
          expect(recordOom(replayed, at, request)).toBe(recordOom(real, at, request));
        } else {
          const usage = Math.floor(threshold.atMost * (r() < 0.8 ? r() : 1 + r())) as Bytes;
          if (t >= threshold.before) moved = true;
          const skip = !moved && t < threshold.before && usage <= threshold.atMost;
          if (skip) skipped++;
          else kept++;
          const a = addMemorySample(real, t as EpochMillis, usage);
          expect(addMemorySample(replayed, t as EpochMillis, skip ? (0 as Bytes) : usage)).toBe(a);
        }
      }
      expect(snapshot(replayed)).toEqual(snapshot(real));
    }
    expect(skipped).toBeGreaterThan(5000);
    expect(kept).toBeGreaterThan(5000);
  });

  it('memorySampleMatters: false only where 0 gives the same state', () => {
    const r = prng(29);
    let unimportant = 0;
    for (let i = 0; i < 200; i++) {
      const s = randomState(800 + i);
      const last = Number(s.container.lastMemorySampleStart / 1_000_000n);
      for (let k = 0; k < 20; k++) {
        const t = (last + Math.floor(r() * 3 * DAY) - DAY) as EpochMillis;
        const usage = Math.floor(
          (s.container.getMaxMemoryPeak() || MiB) * 2 * r() - (r() < 0.05 ? 1e9 : 0),
        ) as Bytes;
        if (memorySampleMatters(s, t, usage)) continue;
        unimportant++;
        const a = decodeState(encodeState(s));
        const b = decodeState(encodeState(s));
        expect(addMemorySample(b, t, 0 as Bytes)).toBe(addMemorySample(a, t, usage));
        expect(snapshot(b)).toEqual(snapshot(a));
      }
    }
    expect(unimportant).toBeGreaterThan(500);
  });
});

describe('groups (AEP-10031): each group recommends from its nodes merged, as the reference does', () => {
  const r = prng(23);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const pool = Array.from({ length: 40 }, (_, i) => randomState(700 + i));
  const labels = ['m5.large', 'c6g.xlarge', '', undefined];
  const containers = ['agent', 'shipper'];
  const target = {
    containers: containers.map((name) => ({ name, requests: {}, limits: {} })),
    policies: {},
    scope: scopeOf('node.kubernetes.io/instance-type', undefined),
  } as unknown as NodeScopeTarget;

  it('for random nodes, label values (absent and empty among them) and histories', () => {
    const hit = {
      absent: 0,
      empty: 0,
      merged: 0,
      single: 0,
      partial: 0,
      nodeWithoutHistory: 0,
      notTheAverage: 0,
      newNodeFromGroup: 0,
    };
    for (let round = 0; round < 60; round++) {
      const model: DsModel = { containers, nodes: new Map() };
      const facts: NodeFacts[] = [];
      for (let i = 0; i < 1 + Math.floor(r() * 8); i++) {
        const name = `node-${round}-${i}`;
        const record = newNodeRecord(name, containers.length);
        // Some nodes have no history, some a container without any.
        if (r() < 0.85) record.states = containers.map(() => (r() < 0.85 ? pick(pool) : undefined));
        model.nodes.set(name, record);
        const value = pick(labels);
        facts.push({
          name,
          labels: value === undefined ? { other: 'x' } : { 'node.kubernetes.io/instance-type': value },
        } as unknown as NodeFacts);
      }
      const eligible = new Set(facts.map((f) => f.name));
      const values = scopeValues(facts, eligible, target.scope.groupLabel);
      const members = membersOf(values);
      const groups = recommendGroups(target, model, members);
      for (const [value, nodes] of members) {
        if (value === ABSENT) hit.absent++;
        if (value === '') hit.empty++;
        const states = containers.map((_, j) =>
          [...nodes].sort().flatMap((n) => model.nodes.get(n)?.states[j] ?? []),
        );
        const inputs = containers.flatMap((name, j) =>
          (states[j] as ScopeState[]).length > 0
            ? [{ name, state: states[j] as ScopeState[], requests: {}, limits: {} }]
            : [],
        );
        const reference = referenceRecommend(inputs);
        if (reference.length === 0) {
          expect(groups.has(value)).toBe(false);
          continue;
        }
        if (reference.length < containers.length) hit.partial++;
        if (nodes.length > 1) hit.merged++;
        else hit.single++;
        const want = Object.fromEntries(
          reference.map((c) => [
            c.name,
            {
              target: c.target,
              lowerBound: c.lowerBound,
              upperBound: c.upperBound,
              uncappedTarget: c.uncappedTarget,
            },
          ]),
        );
        expect(groups.get(value)).toEqual(want);
        // Merging histograms is not averaging the members' own recommendations.
        const own = nodes.flatMap((n) => {
          const st = model.nodes.get(n)?.states[0];
          return st ? (referenceRecommend([{ name: 'agent', state: st }])[0]?.target.cpu ?? []) : [];
        });
        const mean = own.reduce((a, b) => a + b, 0) / own.length;
        const cpu = groups.get(value)?.agent?.target.cpu;
        if (own.length > 1 && cpu !== undefined && Math.abs(cpu - mean) > 1) hit.notTheAverage++;
      }
      // Every node of a label scope gets its group's recommendation; a group without history, the
      // DaemonSet-wide one.
      const entry = { at: 0, gen: 0, containers, samples: [], ooms: [] };
      const recs = DsRecommendations.folded(target, model, entry, eligible, values);
      for (const node of eligible) {
        const value = values.get(node) as string;
        const group = groups.get(value);
        const got = recs.recs.get(node);
        if (model.nodes.get(node)?.states.every((s) => !s)) hit.nodeWithoutHistory++;
        if (group) {
          expect(got).toMatchObject({ source: 'group', group: value });
          for (const [c, rec] of Object.entries(group)) expect(got?.containers[c]).toEqual(rec);
        } else if (got) expect(got).toEqual({ source: 'fallback', containers: recs.dsWide });
      }
      // Per node, the same groups are the second step of a new node's chain: own history, group, DS-wide.
      const perNode = { ...target, scope: scopeOf('node', undefined) } as NodeScopeTarget;
      const own = DsRecommendations.folded(perNode, model, entry, eligible, values);
      for (const node of eligible) {
        const got = own.recs.get(node);
        const group = groups.get(values.get(node) as string);
        if (model.nodes.get(node)?.states.some((st) => st?.aggregate.totalSamplesCount)) {
          expect(got?.source, node).toBe('node');
        } else if (group) {
          hit.newNodeFromGroup++;
          expect(got).toEqual({ source: 'group', group: values.get(node), containers: group });
        } else if (got) expect(got).toEqual({ source: 'fallback', containers: own.dsWide });
      }
    }
    for (const [path, n] of Object.entries(hit)) expect(n, path).toBeGreaterThan(0);
  });
});
