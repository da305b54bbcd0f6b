/**
 * The public VPA test vectors (test/fixtures/vpa-vectors.json, spec §7), one test each, dispatched by
 * `kind`. Every key of a vector's `expected` must be checked by its handler (Expected.done), so a vector
 * whose expectations are not understood fails instead of passing silently.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { statusFromJson, statusToJson } from '../../shared/recommendation/checkpoint/vpa-checkpoint.js';
import { MIN_INT64 } from '../../shared/recommendation/gomath.js';
import {
  formatMetaTime,
  type GoTime,
  HOUR,
  parseRfc3339,
  SECOND,
  ZERO_TIME,
} from '../../shared/recommendation/gotime.js';
import {
  applyContainerLimitRange,
  applyVpaPolicy,
  type BoundedResources,
  type ContainerResourcePolicy,
  capForContainer,
  proportionalLimit,
} from '../../shared/recommendation/logic/capping.js';
import {
  type Estimator,
  getConfidence,
  percentileMemoryEstimator,
  withConfidenceMultiplier,
  withMargin,
  withMinResource,
} from '../../shared/recommendation/logic/estimator.js';
import {
  DEFAULT_ESTIMATION_OPTIONS,
  type EstimationOptions,
} from '../../shared/recommendation/logic/options.js';
import {
  getRecommendedPodResources,
  type PodResourceRecommender,
  podMinimums,
  type RecommenderInput,
} from '../../shared/recommendation/logic/recommender.js';
import {
  AggregateContainerState,
  type CheckpointStatusData,
} from '../../shared/recommendation/model/aggregate.js';
import {
  type AggregationsConfig,
  DEFAULT_AGGREGATIONS_CONFIG,
} from '../../shared/recommendation/model/aggregations-config.js';
import { DecayingHistogram } from '../../shared/recommendation/model/decaying-histogram.js';
import { Histogram, type HistogramCheckpointData } from '../../shared/recommendation/model/histogram.js';
import type { HistogramOptions } from '../../shared/recommendation/model/histogram-options.js';
import { mergeAggregates, ScopeState } from '../../shared/recommendation/model/scope.js';
import {
  coresFromCpuAmount,
  cpuAmountFromCores,
  memoryAmountFromBytes,
  type ResourceName,
  type Resources,
} from '../../shared/recommendation/model/types.js';
import {
  amountOf,
  asArray,
  asNumber,
  asObject,
  asString,
  duration,
  Expected,
  expectClose,
  histogramOptions,
  type Json,
  type JsonObject,
  leadingTime,
  numberExpr,
  timeExpr,
  tolerance,
} from './helpers.js';

interface Vector {
  id: string;
  source: string;
  kind: string;
  input: Json;
  expected: JsonObject;
  notes?: string;
}

const VECTORS_URL = new URL('../fixtures/vpa-vectors.json', import.meta.url);
const vectors = JSON.parse(readFileSync(VECTORS_URL, 'utf8')) as Vector[];

/** Go's time.Unix(1234567890, 0), the base time of upstream's util tests. */
const GO_TEST_T0 = 1_234_567_890n * SECOND;
/** Any base time, for tests whose base time does not matter. */
const ANY_TIME = parseRfc3339('2017-04-18T17:35:05Z') as GoTime;

function bases(input: JsonObject): Record<string, GoTime> {
  const out: Record<string, GoTime> = { T0: GO_TEST_T0, T: ANY_TIME };
  if (typeof input.T0 === 'string') out.T0 = leadingTime(input.T0);
  if (typeof input.T === 'string') out.T = leadingTime(input.T);
  return out;
}

function epsVars(input: JsonObject): Record<string, number> {
  const eps = typeof input.eps === 'number' ? input.eps : asNumber(asObject(input.options).epsilon);
  return { eps, epsilon: eps };
}

function plainHistogram(
  options: HistogramOptions,
  samples: Json | undefined,
  vars: Record<string, number>,
): Histogram {
  const h = new Histogram(options);
  for (const s of asArray(samples ?? [], 'samples')) {
    const o = asObject(s);
    h.addSample(asNumber(o.value), numberExpr(o.weight ?? 1, vars));
  }
  return h;
}

function decayingHistogram(
  options: HistogramOptions,
  halfLife: bigint,
  samples: Json | undefined,
  b: Record<string, GoTime>,
  vars: Record<string, number>,
): DecayingHistogram {
  const h = new DecayingHistogram(options, halfLife);
  for (const s of asArray(samples ?? [], 'samples')) {
    const o = asObject(s);
    h.addSample(asNumber(o.value), numberExpr(o.weight ?? 1, vars), timeExpr(asString(o.time), b));
  }
  return h;
}

function checkpointData(v: Json | undefined): HistogramCheckpointData | null {
  if (v === null || v === undefined) return null;
  const o = asObject(v);
  const bucketWeights = new Map<number, number>();
  for (const [k, w] of Object.entries(asObject(o.bucketWeights ?? {})))
    bucketWeights.set(Number(k), asNumber(w));
  return { totalWeight: asNumber(o.totalWeight ?? 0), bucketWeights };
}

function mapOf(m: Map<number, number>): Record<string, number> {
  return Object.fromEntries([...m].sort((a, b) => a[0] - b[0]).map(([k, v]) => [String(k), v]));
}

function throws(f: () => void): boolean {
  try {
    f();
    return false;
  } catch {
    return true;
  }
}

function aggregationsConfig(input: JsonObject): AggregationsConfig {
  const c = { ...DEFAULT_AGGREGATIONS_CONFIG };
  if (typeof input.memoryAggregationInterval === 'string')
    c.memoryAggregationInterval = duration(input.memoryAggregationInterval);
  if (typeof input.memoryAggregationIntervalCount === 'number')
    c.memoryAggregationIntervalCount = input.memoryAggregationIntervalCount;
  if (typeof input.oomBumpUpRatio === 'number') c.oomBumpUpRatio = input.oomBumpUpRatio;
  const minBump = input.oomMinBumpUpBytes ?? input.oomMinBumpUp;
  if (typeof minBump === 'number') c.oomMinBumpUp = minBump;
  if (typeof input.cpuHistogramDecayHalfLife === 'string')
    c.cpuHistogramDecayHalfLife = duration(input.cpuHistogramDecayHalfLife);
  if (typeof input.memoryHistogramDecayHalfLife === 'string')
    c.memoryHistogramDecayHalfLife = duration(input.memoryHistogramDecayHalfLife);
  return c;
}

type Call = [string, number, number, GoTime];

/** Records the calls a state's container logic makes into its histograms (weights before decay). */
function recordCalls(a: AggregateContainerState): { cpu: Call[]; memory: Call[] } {
  const calls = { cpu: [] as Call[], memory: [] as Call[] };
  for (const [which, h] of [
    ['cpu', a.cpuUsage],
    ['memory', a.memoryPeaks],
  ] as const) {
    const add = h.addSample.bind(h);
    const sub = h.subtractSample.bind(h);
    h.addSample = (value, weight, time) => {
      calls[which].push(['AddSample', value, weight, time]);
      add(value, weight, time);
    };
    h.subtractSample = (value, weight, time) => {
      calls[which].push(['SubtractSample', value, weight, time]);
      sub(value, weight, time);
    };
  }
  return calls;
}

function expectCalls(actual: Call[], expected: Json, b: Record<string, GoTime>, what: string): void {
  const want = asArray(expected).map((c) => {
    const [op, value, weight, time] = asArray(c);
    return [asString(op), asNumber(value), asNumber(weight), timeExpr(asString(time), b)] as Call;
  });
  expect(actual, what).toEqual(want);
}

/** Resources from {cpu, memory} numbers (generic units) or quantity strings (millicores / bytes). */
function resources(v: Json | undefined): Resources | undefined {
  if (v === undefined || v === null) return undefined;
  const out: Resources = {};
  for (const [k, q] of Object.entries(asObject(v))) {
    if (k !== 'cpu' && k !== 'memory') throw new Error(`unknown resource ${k}`);
    out[k] = typeof q === 'number' ? q : Number(amountOf(k, asString(q)));
  }
  return out;
}

function bounded(v: Json | undefined): BoundedResources {
  const o = asObject(v ?? {});
  return {
    target: resources(o.target) ?? {},
    lowerBound: resources(o.lowerBound) ?? {},
    upperBound: resources(o.upperBound) ?? {},
  };
}

function policyOf(v: Json | undefined): ContainerResourcePolicy | undefined {
  if (v === undefined || v === null) return undefined;
  const o = asObject(v);
  const p: ContainerResourcePolicy = {};
  const min = resources(o.minAllowed);
  const max = resources(o.maxAllowed);
  if (min) p.minAllowed = min;
  if (max) p.maxAllowed = max;
  if (typeof o.mode === 'string') p.mode = o.mode as 'Auto' | 'Off';
  if (typeof o.controlledValues === 'string') p.controlledValues = o.controlledValues as 'RequestsOnly';
  if (Array.isArray(o.controlledResources)) p.controlledResources = o.controlledResources as ResourceName[];
  return p;
}

const constant =
  (v: number): Estimator =>
  () =>
    v;

const emptyState = (): AggregateContainerState =>
  new AggregateContainerState(DEFAULT_AGGREGATIONS_CONFIG, ANY_TIME);

function constRecommender(cpu: number, memory: number): PodResourceRecommender {
  return {
    targetCpu: constant(cpu),
    targetMemory: constant(memory),
    lowerBoundCpu: constant(cpu),
    lowerBoundMemory: constant(memory),
    upperBoundCpu: constant(cpu),
    upperBoundMemory: constant(memory),
  };
}

function estimationOptions(input: JsonObject): EstimationOptions {
  const o = { ...DEFAULT_ESTIMATION_OPTIONS };
  if (typeof input.podMinCpuMillicores === 'number') o.podMinCpuMillicores = input.podMinCpuMillicores;
  if (typeof input.podMinMemoryMb === 'number') o.podMinMemoryMb = input.podMinMemoryMb;
  return o;
}

type Handler = (input: JsonObject, ex: Expected, v: Vector) => void;

const handlers: Record<string, Handler> = {
  'histogram.percentile'(input, ex) {
    const options = histogramOptions(asObject(input.options));
    const vars = epsVars(input);
    const tol = tolerance(ex.take('tolerance'));
    if (input.steps) {
      const h = new Histogram(options);
      asArray(input.steps).forEach((stepJson, i) => {
        const step = asObject(stepJson);
        for (const s of asArray(step.add ?? [])) {
          const o = asObject(s);
          h.addSample(asNumber(o.value), numberExpr(o.weight ?? 1, vars));
        }
        const want = asObject(ex.get(`step${i + 1}`));
        for (const p of Object.keys(asObject(step.query))) {
          expectClose(h.percentile(Number(p)), asNumber(want[p]), tol, `step${i + 1} p${p}`);
        }
      });
      return;
    }
    const h = plainHistogram(options, input.samples, vars);
    if (ex.has('isEmpty')) expect(h.isEmpty()).toBe(ex.get('isEmpty'));
    const values = asArray(ex.get('values'));
    asArray(input.percentiles).forEach((p, i) => {
      expectClose(h.percentile(asNumber(p)), asNumber(values[i]), tol, `p${p}`);
    });
  },

  'histogram.isEmpty'(input, ex) {
    const options = histogramOptions(asObject(input.options));
    const vars = epsVars(input);
    const h = new Histogram(options);
    const after: boolean[] = [];
    for (const opJson of asArray(input.ops ?? [])) {
      const op = asObject(opJson);
      const value = asNumber(op.value);
      const weight = numberExpr(op.weight ?? 1, vars);
      if (op.op === 'add') h.addSample(value, weight);
      else if (op.op === 'subtract') h.subtractSample(value, weight);
      else throw new Error(`unknown op ${op.op}`);
      after.push(h.isEmpty());
    }
    if (ex.has('isEmptyAfterEachOp')) expect(after).toEqual(ex.get('isEmptyAfterEachOp'));
    if (ex.has('isEmpty')) expect(h.isEmpty()).toBe(ex.get('isEmpty'));
    if (ex.has('percentiles') || ex.has('values')) {
      const values = asArray(ex.take('values') ?? ex.take('percentiles'));
      asArray(input.percentiles).forEach((p, i) => {
        expect(h.percentile(asNumber(p))).toBe(values[i]);
      });
    }
  },

  'histogram.merge'(input, ex) {
    const options = histogramOptions(asObject(input.options));
    const vars = epsVars(input);
    const h1 = plainHistogram(options, input.h1, vars);
    const h2 = plainHistogram(options, input.h2, vars);
    h1.merge(h2);
    const want = plainHistogram(options, ex.get('equalsHistogramOf'), vars);
    expect(h1.equals(want)).toBe(true);
    expect(h1.totalWeight).toBe(want.totalWeight);
  },

  'histogram.checkpoint.save'(input, ex) {
    const h = plainHistogram(histogramOptions(asObject(input.options)), input.samples, epsVars(input));
    const cp = h.saveToCheckpoint();
    expect(cp.totalWeight).toBe(ex.get('totalWeight'));
    if (ex.has('bucketWeights')) expect(mapOf(cp.bucketWeights)).toEqual(ex.get('bucketWeights'));
    if (ex.has('bucketCount')) expect(cp.bucketWeights.size).toBe(ex.get('bucketCount'));
  },

  'histogram.checkpoint.load'(input, ex) {
    const options = histogramOptions(asObject(input.options));
    if (input.cases) {
      const errors = asArray(input.cases).map((c) =>
        throws(() => new Histogram(options).loadFromCheckpoint(checkpointData(asObject(c).checkpoint))),
      );
      expect(errors).toEqual(ex.get('errors'));
      return;
    }
    const h = plainHistogram(options, input.samples, epsVars(input));
    const error = throws(() => h.loadFromCheckpoint(checkpointData(input.checkpoint)));
    if (ex.has('error')) expect(error).toBe(ex.get('error'));
    else expect(error).toBe(false);
    if (ex.has('totalWeight')) expect(h.totalWeight).toBe(ex.get('totalWeight'));
    for (const key of ['bucketWeight', 'bucketWeights']) {
      if (!ex.has(key)) continue;
      for (const [b, w] of Object.entries(asObject(ex.get(key)))) expect(h.bucketWeight[Number(b)]).toBe(w);
    }
    if (ex.has('isEmpty')) expect(h.isEmpty()).toBe(ex.get('isEmpty'));
    if (ex.has('minBucket')) expect(h.minBucket).toBe(ex.get('minBucket'));
    if (ex.has('maxBucket')) expect(h.maxBucket).toBe(ex.get('maxBucket'));
  },

  'histogram.checkpoint.roundtrip'(input, ex) {
    const options = histogramOptions(asObject(input.options));
    const h = plainHistogram(options, input.samples, epsVars(input));
    expect(h.isEmpty()).toBe(ex.get('isEmptyBeforeSave'));
    const restored = new Histogram(options);
    restored.loadFromCheckpoint(h.saveToCheckpoint());
    expect(restored.isEmpty()).toBe(ex.get('isEmptyAfterLoad'));
  },

  'histogram.options'(input, ex) {
    const options = histogramOptions(input);
    checkOptions(options, ex);
  },

  'decaying.percentile'(input, ex) {
    const b = bases(input);
    const h = decayingHistogram(
      histogramOptions(asObject(input.options)),
      duration(asString(input.halfLife)),
      input.samples,
      b,
      epsVars(input),
    );
    const tol = tolerance(ex.take('tolerance'));
    const values = asArray(ex.get('values'));
    asArray(input.percentiles).forEach((p, i) => {
      expectClose(h.percentile(asNumber(p)), asNumber(values[i]), tol, `p${p}`);
    });
  },

  'decaying.merge'(input, ex) {
    const b = bases(input);
    const options = histogramOptions(asObject(input.options));
    const halfLife = duration(asString(input.halfLife));
    const vars = epsVars(input);
    const h1 = decayingHistogram(options, halfLife, input.h1, b, vars);
    const h2 = decayingHistogram(options, halfLife, input.h2, b, vars);
    h1.merge(h2);
    const want = decayingHistogram(options, halfLife, ex.get('equalsHistogramBuiltFrom'), b, vars);
    expect(h1.referenceTimestamp).toBe(want.referenceTimestamp);
    expect(h1.equals(want)).toBe(true);
  },

  'decaying.checkpoint.save'(input, ex) {
    const b = bases(input);
    const h = decayingHistogram(
      histogramOptions(asObject(input.options)),
      duration(asString(input.halfLife)),
      input.samples,
      b,
      epsVars(input),
    );
    if (typeof input.initialReferenceTimestamp === 'string')
      expect(leadingTime(input.initialReferenceTimestamp)).toBe(ZERO_TIME);
    const cp = h.saveToCheckpoint();
    if (ex.has('referenceTimestamp'))
      expect(formatMetaTime(cp.referenceTimestamp)).toBe(ex.get('referenceTimestamp'));
    expect(cp.referenceTimestamp).toBe(h.referenceTimestamp);
    if (ex.has('referenceTimestampNotZero'))
      expect(cp.referenceTimestamp !== ZERO_TIME).toBe(ex.get('referenceTimestampNotZero'));
    if (ex.has('bucketWeightsNonEmpty'))
      expect(cp.bucketWeights.size > 0).toBe(ex.get('bucketWeightsNonEmpty'));
    if (ex.has('totalWeightNonZero')) expect(cp.totalWeight !== 0).toBe(ex.get('totalWeightNonZero'));
  },

  'decaying.checkpoint.load'(input, ex) {
    const h = new DecayingHistogram(
      histogramOptions(asObject(input.options)),
      duration(asString(input.halfLife)),
    );
    const cpJson = asObject(input.checkpoint);
    const data = checkpointData(cpJson) as HistogramCheckpointData;
    h.loadFromCheckpoint({ ...data, referenceTimestamp: leadingTime(asString(cpJson.referenceTimestamp)) });
    if (ex.has('isEmpty')) expect(h.isEmpty()).toBe(ex.get('isEmpty'));
    if (ex.has('referenceTimestamp'))
      expect(formatMetaTime(h.referenceTimestamp)).toBe(ex.get('referenceTimestamp'));
  },

  'estimator.percentile'(input, ex) {
    const build = (key: string): Histogram => {
      const spec = asObject(input[key]);
      if (spec.decaying === true)
        throw new Error('decaying estimator histograms are not described by the vectors');
      return plainHistogram(histogramOptions(asObject(spec.options)), spec.samples, {});
    };
    const cpu = build('cpuHistogram');
    const memory = build('memoryHistogram');
    const cpuRaw = cpu.percentile(asNumber(input.cpuPercentile));
    const memRaw = memory.percentile(asNumber(input.memoryPercentile));
    const cpuMillicores = cpuAmountFromCores(cpuRaw);
    const memoryBytes = memoryAmountFromBytes(memRaw);
    const tol = tolerance(ex.take('tolerance'));
    if (ex.has('cpuCores'))
      expectClose(coresFromCpuAmount(cpuMillicores), asNumber(ex.get('cpuCores')), tol, 'cpu');
    if (ex.has('memoryBytes')) expectClose(memoryBytes, asNumber(ex.get('memoryBytes')), tol, 'memory');
    if (ex.has('exactDerived')) {
      const d = asObject(ex.get('exactDerived'));
      for (const [k, want] of Object.entries(d)) {
        const actual = { cpuMillicores, cpuCores: cpuRaw, memoryBytes, memoryBytesFloat: memRaw }[k];
        if (actual === undefined) throw new Error(`unknown exactDerived.${k}`);
        expect(actual, k).toBe(want);
      }
    }
  },

  'estimator.confidence'(input, ex) {
    const state = emptyState();
    const history = input.history;
    if (history !== 'none' && history !== undefined) {
      const h = asObject(history);
      const spacing = duration(asString(h.spacing ?? '1m'));
      let t = ANY_TIME;
      for (let i = 0; i < asNumber(h.cpuSamples); i++) {
        state.addSample({ measureStart: t, usage: 1000, resource: 'cpu' });
        t += spacing;
      }
    }
    const interval = duration(
      typeof input.confidenceInterval === 'string' ? input.confidenceInterval : '24h',
    );
    const multiplier = asNumber(input.multiplier);
    const exponent = asNumber(input.exponent);
    if (ex.has('confidence')) expect(getConfidence(state, interval)).toBe(ex.get('confidence'));
    const scaled = (base: number) =>
      withConfidenceMultiplier(multiplier, exponent, interval, constant(base))(state);
    const cpu =
      typeof input.baseCpuCores === 'number' ? scaled(cpuAmountFromCores(input.baseCpuCores)) : undefined;
    const memory =
      typeof input.baseMemoryBytes === 'number'
        ? scaled(memoryAmountFromBytes(input.baseMemoryBytes))
        : undefined;
    if (ex.has('cpuMillicores')) expect(cpu).toBe(ex.get('cpuMillicores'));
    if (ex.has('cpuCores')) expect(coresFromCpuAmount(cpu as number)).toBe(ex.get('cpuCores'));
    if (ex.has('memoryBytes')) expect(memory).toBe(ex.get('memoryBytes'));
  },

  'estimator.margin'(input, ex) {
    const fraction = asNumber(input.marginFraction);
    const state = emptyState();
    if (typeof input.baseCpuCores === 'number') {
      const cpu = withMargin(fraction, constant(cpuAmountFromCores(input.baseCpuCores)))(state);
      if (ex.has('cpuMillicores')) expect(cpu).toBe(ex.get('cpuMillicores'));
      if (ex.has('cpuCores')) expect(coresFromCpuAmount(cpu)).toBe(ex.get('cpuCores'));
    }
    if (typeof input.baseMemoryBytes === 'number' && ex.has('memoryBytes'))
      expect(withMargin(fraction, constant(memoryAmountFromBytes(input.baseMemoryBytes)))(state)).toBe(
        ex.get('memoryBytes'),
      );
  },

  'estimator.min'(input, ex) {
    const state = emptyState();
    const cpu = asObject(input.cpu);
    const memory = asObject(input.memory);
    const cpuResult = withMinResource(
      cpuAmountFromCores(asNumber(cpu.minCores)),
      constant(cpuAmountFromCores(asNumber(cpu.baseCores))),
    )(state);
    const memResult = withMinResource(
      memoryAmountFromBytes(asNumber(memory.minBytes)),
      constant(memoryAmountFromBytes(asNumber(memory.baseBytes))),
    )(state);
    if (ex.has('cpuCores')) expect(coresFromCpuAmount(cpuResult)).toBe(ex.get('cpuCores'));
    if (ex.has('cpuMillicores')) expect(cpuResult).toBe(ex.get('cpuMillicores'));
    if (ex.has('memoryBytes')) expect(memResult).toBe(ex.get('memoryBytes'));
  },

  'recommender.min'(input, ex) {
    const n = asNumber(input.containers ?? 1);
    const estimate = asObject(input.estimate);
    const o = estimationOptions(input);
    const r = constRecommender(
      cpuAmountFromCores(asNumber(estimate.cpuCores)),
      memoryAmountFromBytes(asNumber(estimate.memoryBytes)),
    );
    const containers = new Map<string, RecommenderInput>();
    for (let i = 0; i < n; i++) containers.set(`c${i}`, { state: emptyState() });
    const result = getRecommendedPodResources(r, containers, o);
    expect(result.size).toBe(n);
    const want = asObject(ex.get('perContainer'));
    for (const rec of result.values()) {
      for (const [k, value] of Object.entries(want)) {
        const m = /^(target|lowerBound|upperBound)(Cpu|Memory)(Millicores|Bytes)$/.exec(k);
        if (!m) throw new Error(`unknown perContainer.${k}`);
        const bound = rec[m[1] as 'target'];
        expect(bound[m[2] === 'Cpu' ? 'cpu' : 'memory'], k).toBe(value);
      }
    }
  },

  'recommender.controlledResources'(input, ex) {
    // Without controlledResources the default [cpu, memory] applies (TestControlledResourcesFilteredDefault).
    const controlled = input.controlledResources
      ? (asArray(input.controlledResources) as ResourceName[])
      : undefined;
    const entry: RecommenderInput = controlled
      ? { state: emptyState(), controlledResources: controlled }
      : { state: emptyState() };
    const result = getRecommendedPodResources(
      constRecommender(3140, 3.14e9),
      new Map([['c', entry]]),
      DEFAULT_ESTIMATION_OPTIONS,
    );
    const rec = result.get('c');
    if (!rec) throw new Error('no recommendation');
    for (const bound of ['target', 'lowerBound', 'upperBound'] as const)
      expect(Object.keys(rec[bound]).sort()).toEqual(ex.get(`${bound}Keys`));
  },

  'container.samples'(input, ex) {
    const b = bases(input);
    const scope = ScopeState.create(aggregationsConfig(input), ANY_TIME);
    const calls = recordCalls(scope.aggregate);
    const accepted = asArray(input.samples).map((sJson) => {
      const s = asObject(sJson);
      const t = timeExpr(asString(s.t), b);
      if (typeof s.cpuMillicores === 'number')
        return scope.container.addSample({ measureStart: t, usage: s.cpuMillicores, resource: 'cpu' });
      return scope.container.addSample({
        measureStart: t,
        usage: asNumber(s.memoryBytes),
        resource: 'memory',
      });
    });
    if (ex.has('accepted')) expect(accepted).toEqual(ex.get('accepted'));
    if (ex.has('cpuHistogramCalls')) expectCalls(calls.cpu, ex.get('cpuHistogramCalls'), b, 'cpu calls');
    if (ex.has('memoryHistogramCalls'))
      expectCalls(calls.memory, ex.get('memoryHistogramCalls'), b, 'memory calls');
  },

  'container.oom'(input, ex) {
    const b = bases(input);
    const scope = ScopeState.create(aggregationsConfig(input), ANY_TIME);
    const calls = recordCalls(scope.aggregate);
    let oomError = false;
    for (const eJson of asArray(input.events)) {
      const e = asObject(eJson);
      if (e.usage) {
        const u = asObject(e.usage);
        scope.container.addSample({
          measureStart: timeExpr(asString(u.t), b),
          usage: asNumber(u.memoryBytes),
          resource: 'memory',
        });
      } else if (e.oom) {
        const o = asObject(e.oom);
        if (!scope.container.recordOom(timeExpr(asString(o.t), b), asNumber(o.requestBytes))) oomError = true;
      } else throw new Error(`unknown event ${JSON.stringify(e)}`);
    }
    if (ex.has('oomError')) expect(oomError).toBe(ex.get('oomError'));
    else expect(oomError).toBe(false);
    if (ex.has('memoryHistogramCalls'))
      expectCalls(calls.memory, ex.get('memoryHistogramCalls'), b, 'memory calls');
  },

  'aggregate.grouping'(input, ex) {
    const t = leadingTime(asString(input.sampleTime));
    const scopes = new Map<string, ScopeState>();
    for (const [pod, podJson] of Object.entries(asObject(input.pods))) {
      for (const [name, cJson] of Object.entries(asObject(asObject(podJson).containers))) {
        const c = asObject(cJson);
        const scope = ScopeState.create(DEFAULT_AGGREGATIONS_CONFIG, t);
        scope.container.addSample({
          measureStart: t,
          usage: cpuAmountFromCores(asNumber(c.cpuCores)),
          resource: 'cpu',
        });
        scope.container.addSample({ measureStart: t, usage: asNumber(c.memoryBytes), resource: 'memory' });
        scopes.set(`${pod}/${name}`, scope);
      }
    }
    const byName = new Map<string, AggregateContainerState[]>();
    for (const [key, scope] of scopes) {
      const name = key.split('/')[1] as string;
      byName.set(name, [...(byName.get(name) ?? []), scope.aggregate]);
    }
    const merged = new Map([...byName].map(([name, states]) => [name, mergeAggregates(states)]));
    const counts = Object.fromEntries([...merged].map(([name, s]) => [name, s.totalSamplesCount]));
    expect(counts).toEqual(ex.get('totalSamplesCount'));
    for (const key of ex.keys()) {
      const m = /^app(\w+?)_memoryHistogramEquals$/.exec(key);
      if (!m) continue;
      const name = `app-${m[1]}`;
      const want = new DecayingHistogram(
        merged.get(name)?.memoryPeaks.options ?? (undefined as never),
        DEFAULT_AGGREGATIONS_CONFIG.memoryHistogramDecayHalfLife,
      );
      for (const sJson of asArray(ex.get(key))) {
        const s = asObject(sJson);
        const where = /^(\S+) WindowEnd$/.exec(asString(s.time));
        const at = where
          ? scopes.get(where[1] as string)?.container.windowEnd
          : timeExpr(asString(s.time), {});
        if (at === undefined) throw new Error(`unknown time ${s.time}`);
        want.addSample(asNumber(s.value), asNumber(s.weight), at);
      }
      expect(merged.get(name)?.memoryPeaks.equals(want)).toBe(true);
    }
  },

  'aggregate.checkpoint.save'(input, ex) {
    const b = bases(input);
    const a = emptyState();
    for (const [key, h] of [
      ['cpuSamples', a.cpuUsage],
      ['memorySamples', a.memoryPeaks],
    ] as const) {
      for (const sJson of asArray(input[key] ?? [])) {
        const s = asObject(sJson);
        h.addSample(asNumber(s.value), asNumber(s.weight), timeExpr(asString(s.time), b));
      }
    }
    if (typeof input.firstSampleStart === 'string') a.firstSampleStart = timeExpr(input.firstSampleStart, b);
    if (typeof input.lastSampleStart === 'string') a.lastSampleStart = timeExpr(input.lastSampleStart, b);
    if (typeof input.totalSamplesCount === 'number') a.totalSamplesCount = input.totalSamplesCount;
    const now = BigInt(Date.now()) * 1_000_000n;
    const status = statusToJson(a.saveToCheckpoint(now));
    if (ex.has('version')) expect(status.version).toBe(ex.get('version'));
    if (ex.has('firstSampleStart')) expect(status.firstSampleStart).toBe(ex.get('firstSampleStart'));
    if (ex.has('lastSampleStart')) expect(status.lastSampleStart).toBe(ex.get('lastSampleStart'));
    if (ex.has('totalSamplesCount')) expect(status.totalSamplesCount ?? 0).toBe(ex.get('totalSamplesCount'));
    if (ex.has('cpuBucketCount'))
      expect(Object.keys(status.cpuHistogram.bucketWeights ?? {}).length).toBe(ex.get('cpuBucketCount'));
    if (ex.has('memoryBucketCount'))
      expect(Object.keys(status.memoryHistogram.bucketWeights ?? {}).length).toBe(
        ex.get('memoryBucketCount'),
      );
    if (ex.has('lastUpdateTime')) {
      expect(ex.get('lastUpdateTime')).toBe('~now');
      const written = parseRfc3339(status.lastUpdateTime ?? '') as GoTime;
      expect(Number((now - written) / SECOND)).toBeLessThanOrEqual(1);
    }
  },

  'aggregate.checkpoint.load'(input, ex) {
    const a = emptyState();
    let data: CheckpointStatusData | undefined;
    const error = throws(() => {
      data = statusFromJson(input);
      a.loadFromCheckpoint(data);
    });
    const errorKey = ex.keys().find((k) => /error/i.test(k));
    expect(error).toBe(errorKey ? ex.get(errorKey) : false);
    if (error) return;
    if (ex.has('firstSampleStart'))
      expect(formatMetaTime(a.firstSampleStart)).toBe(ex.get('firstSampleStart'));
    if (ex.has('lastSampleStart')) expect(formatMetaTime(a.lastSampleStart)).toBe(ex.get('lastSampleStart'));
    if (ex.has('totalSamplesCount')) expect(a.totalSamplesCount).toBe(ex.get('totalSamplesCount'));
    if (ex.has('cpuIsEmpty')) expect(a.cpuUsage.isEmpty()).toBe(ex.get('cpuIsEmpty'));
    if (ex.has('memoryIsEmpty')) expect(a.memoryPeaks.isEmpty()).toBe(ex.get('memoryIsEmpty'));
  },

  'aggregate.gc'(input, ex) {
    const b = bases(input);
    const config = aggregationsConfig(input);
    for (const which of ['withSamples', 'empty']) {
      if (!ex.has(which)) continue;
      const spec = asObject(input[which]);
      const a = new AggregateContainerState(config, ANY_TIME);
      if (which === 'withSamples') {
        a.lastSampleStart = timeExpr(asString(spec.lastSampleStart), b);
        a.firstSampleStart = a.lastSampleStart;
        a.totalSamplesCount = 1;
      } else a.creationTime = timeExpr(asString(spec.creationTime), b);
      const results = asArray(spec.checks).map((c) => a.isExpired(timeExpr(asString(c), b)));
      expect(results, which).toEqual(ex.get(which));
    }
  },

  'capping.minmax'(input, ex) {
    const rec = bounded(input.recommendation);
    const result = capForContainer(rec, policyOf(input.policy), {});
    for (const bound of ['target', 'lowerBound', 'upperBound'] as const)
      if (ex.has(bound)) expect(result[bound], bound).toEqual(resources(ex.get(bound)));
    if (ex.has('annotations'))
      expect([...result.annotations].sort()).toEqual([...asArray(ex.get('annotations'))].sort());
  },

  'capping.controlledValues'(input, ex) {
    const rec = bounded(input.recommendation);
    const specLimits = resources(input.containerLimits) ?? {};
    const cases = asArray(input.cases).map((c) => asString(c));
    const keys = ex.keys();
    expect(keys.length).toBe(cases.length);
    cases.forEach((name, i) => {
      let policy: ContainerResourcePolicy | undefined;
      let limits = specLimits;
      if (name === 'no policy') policy = undefined;
      else if (name.startsWith('RequestsAndLimits')) policy = { controlledValues: 'RequestsAndLimits' };
      else if (name.startsWith('RequestsOnly')) {
        policy = { controlledValues: 'RequestsOnly' };
        // "RequestsOnly with containerStatus.resources.limits {cpu:2.5,memory:60000}": status wins.
        const m = /containerStatus\.resources\.limits\s*\{([^}]*)\}/.exec(name);
        if (m) {
          limits = {};
          for (const kv of (m[1] as string).split(',')) {
            const [k, v] = kv.split(':').map((x) => x.trim());
            limits[k as ResourceName] = Number(v);
          }
        }
      } else throw new Error(`unknown case ${name}`);
      const result = capForContainer(rec, policy, { limits });
      const want = asObject(ex.get(keys[i] as string));
      for (const [k, v] of Object.entries(want)) {
        if (k === 'annotation') expect(result.annotations, name).toContain(v);
        else if (k === 'target' || k === 'upperBound' || k === 'lowerBound')
          expect(result[k], `${name} ${k}`).toEqual(resources(v));
        else throw new Error(`unknown expected.${keys[i]}.${k}`);
      }
    });
  },

  'capping.recommender'(input, ex) {
    const rec = bounded(input.recommendation);
    const uncapped = resources(asObject(input.recommendation).uncappedTarget) ?? rec.target;
    const result = applyVpaPolicy(
      rec,
      policyOf(input.containerPolicy),
      resources(input.globalMaxAllowed) ?? {},
    );
    for (const bound of ['target', 'lowerBound', 'upperBound'] as const)
      if (ex.has(bound)) expect(result[bound], bound).toEqual(resources(ex.get(bound)));
    if (ex.has('uncappedTarget')) expect(uncapped).toEqual(resources(ex.get('uncappedTarget')));
  },

  'capping.limitrange'(input, ex) {
    const lr = asObject(input.limitRange);
    if (lr.type !== undefined && lr.type !== 'Container') throw new Error(`LimitRange type ${lr.type}`);
    const container = asObject(input.container);
    const requests = resources(container.requests);
    const limits = resources(container.limits);
    const limitRange = {
      ...(lr.min ? { min: resources(lr.min) } : {}),
      ...(lr.max ? { max: resources(lr.max) } : {}),
      ...(lr.default ? { default: resources(lr.default) } : {}),
    };
    const rec = bounded(input.recommendation);
    const annotations: string[] = [];
    const target = applyContainerLimitRange(rec.target, { requests, limits }, limitRange, annotations);
    if (ex.has('target')) expect(target).toEqual(resources(ex.get('target')));
    if (ex.has('annotations'))
      expect([...annotations].sort()).toEqual([...asArray(ex.get('annotations'))].sort());
  },

  'limits.proportional'(input, ex) {
    const resource = asString(input.resource) as ResourceName;
    const q = (k: string) =>
      typeof input[k] === 'string' ? amountOf(resource, input[k] as string) : undefined;
    const result = proportionalLimit(
      resource,
      q('originalLimit'),
      q('originalRequest'),
      q('recommendedRequest'),
      q('defaultLimit'),
    );
    if (ex.has('limit')) {
      const want = ex.get('limit');
      expect(result.limit).toBe(want === null ? undefined : amountOf(resource, asString(want)));
    }
    if (ex.has('limitMillicores')) expect(result.limit).toBe(BigInt(asNumber(ex.get('limitMillicores'))));
    if (ex.has('limitMilli')) expect(result.limit).toBe(BigInt(asString(ex.get('limitMilli'))));
    if (ex.has('limitBytes')) expect(result.limit).toBe(BigInt(asNumber(ex.get('limitBytes'))));
    if (ex.has('annotation')) expect(result.annotation !== undefined).toBe(ex.get('annotation'));
  },

  'derived.options'(input, ex) {
    for (const which of ex.keys()) {
      const options = histogramOptions(asObject(input[which]));
      checkOptions(options, new Expected(asObject(ex.get(which))));
    }
  },

  'derived.decay'(input, ex) {
    const spec = asString(input.samples);
    const m =
      /^hourly for (\d+) days from (\S+); value ([0-9.]+) cores for the first (\d+) days, then ([0-9.]+); weight ([0-9.]+)$/.exec(
        spec,
      );
    if (!m) throw new Error(`cannot read the sample description: ${spec}`);
    const h = new DecayingHistogram(
      histogramOptions(asObject(input.options)),
      duration(asString(input.halfLife)),
    );
    const start = leadingTime(m[2] as string);
    const hours = Number(m[1]) * 24;
    for (let i = 0; i < hours; i++) {
      const value = i < Number(m[4]) * 24 ? Number(m[3]) : Number(m[5]);
      h.addSample(value, Number(m[6]), start + BigInt(i) * HOUR);
    }
    for (const k of ex.keys()) {
      const want = ex.get(k);
      if (k === 'referenceTimestamp') expect(formatMetaTime(h.referenceTimestamp)).toBe(want);
      else if (k === 'minBucket') expect(h.histogram.minBucket).toBe(want);
      else if (k === 'maxBucket') expect(h.histogram.maxBucket).toBe(want);
      else if (/^p\d+$/.test(k)) expect(h.percentile(Number(`0.${k.slice(1)}`)), k).toBe(want);
      else throw new Error(`unknown expected.${k}`);
    }
  },

  'derived.edge'(input, ex) {
    expect(input.cpuSamples).toBe(0);
    const a = emptyState();
    for (const pJson of asArray(input.memoryPeaks ?? [])) {
      const p = asObject(pJson);
      a.memoryPeaks.addSample(asNumber(p.value), asNumber(p.weight ?? 1), ANY_TIME);
    }
    const o = DEFAULT_ESTIMATION_OPTIONS;
    if (ex.has('confidence')) expect(getConfidence(a, o.confidenceIntervalCpu)).toBe(ex.get('confidence'));
    const upperMemory = withConfidenceMultiplier(
      1.0,
      1.0,
      o.confidenceIntervalMemory,
      withMargin(o.marginFraction, percentileMemoryEstimator(o.upperBoundMemoryPercentile)),
    );
    if (ex.has('memoryUpperBoundBeforeMin')) expect(upperMemory(a)).toBe(ex.get('memoryUpperBoundBeforeMin'));
    if (ex.has('cpuUpperBound')) {
      // "0 × Inf = NaN; int64(NaN) is MinInt64 on amd64; max(.., minCPU) yields minCPU".
      expect(asString(ex.get('cpuUpperBound'))).toMatch(/minCPU/);
      const upperCpu = withConfidenceMultiplier(1.0, 1.0, o.confidenceIntervalCpu, constant(0));
      expect(upperCpu(a)).toBe(MIN_INT64);
      const min = podMinimums(o, 1).cpu;
      expect(withMinResource(min, upperCpu)(a)).toBe(min);
    }
  },
};

function checkOptions(options: HistogramOptions, ex: Expected): void {
  if (ex.has('numBuckets')) expect(options.numBuckets).toBe(ex.get('numBuckets'));
  for (const key of ['bucketStart', 'start']) {
    if (!ex.has(key)) continue;
    for (const [b, want] of Object.entries(asObject(ex.get(key))))
      expect(options.getBucketStart(Number(b)), `start(${b})`).toBe(want);
  }
  if (ex.has('findBucket')) {
    for (const [v, want] of Object.entries(asObject(ex.get('findBucket'))))
      expect(options.findBucket(Number(v)), `findBucket(${v})`).toBe(want);
  }
  if (ex.has('findBucketOfStart')) {
    // FindBucket(start(i)) = i - 1 for every i ≥ 2.
    for (let i = 2; i < options.numBuckets; i++)
      expect(options.findBucket(options.getBucketStart(i))).toBe(i - 1);
    ex.get('findBucketOfStart');
  }
  ex.done();
}

describe('VPA test vectors', () => {
  it('the file holds the vectors', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(53);
    expect(new Set(vectors.map((v) => v.id)).size).toBe(vectors.length);
  });

  const kinds = [...new Set(vectors.map((v) => v.kind))];
  for (const kind of kinds) {
    describe(kind, () => {
      for (const v of vectors.filter((x) => x.kind === kind)) {
        it(v.id, () => {
          const handler = handlers[kind];
          if (!handler) throw new Error(`no handler for kind ${kind}`);
          const ex = new Expected(v.expected);
          handler(typeof v.input === 'object' && v.input && !Array.isArray(v.input) ? v.input : {}, ex, v);
          ex.done();
        });
      }
    });
  }
});
