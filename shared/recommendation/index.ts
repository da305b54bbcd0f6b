/**
 * fleetscope's VPA recommender math for node-scoped DaemonSet recommendations (KEP-4943): upstream's
 * recommender (kubernetes/autoscaler vertical-pod-autoscaler, HEAD 55c37cd) ported so that integer
 * outputs are the same as upstream's on linux/amd64. See README.md beside this file.
 *
 * A ScopeState is one container of a DaemonSet on one node. Feed it samples in arrival order; it is
 * mutated in place. Recommend for a pod's containers at once (the pod minimum is split across them).
 * Pure: no I/O, no clock; every time is an argument.
 */
import type { Bytes, EpochMillis, Millicores } from '../kernel/units.js';
import { decodeState as decodeBinary, encodeState as encodeBinary } from './checkpoint/binary.js';
import {
  statusFromJson,
  statusToJson,
  type VerticalPodAutoscalerCheckpointStatus,
} from './checkpoint/vpa-checkpoint.js';
import { fromEpochMillis, type GoTime, isZeroTime, MILLISECOND } from './gotime.js';
import {
  applyVpaPolicy,
  type ControlledValues,
  capToContainerLimits,
  proportionalLimitOfAmounts,
  type ScalingMode,
} from './logic/capping.js';
import { type EstimationOptions, type RecommenderOptions, resolveOptions } from './logic/options.js';
import {
  createPodResourceRecommender,
  getRecommendedPodResources,
  type PodResourceRecommender,
  type RecommendedContainerResources,
  type RecommenderInput,
  roundResources,
} from './logic/recommender.js';
import { AggregateContainerState } from './model/aggregate.js';
import { isGarbage as aggregateIsGarbage, mergeAggregates, ScopeState } from './model/scope.js';
import { RESOURCE_NAMES, type ResourceName, type Resources } from './model/types.js';

export { StateDecodeError } from './checkpoint/binary.js';
export type {
  HistogramCheckpoint,
  VerticalPodAutoscalerCheckpoint,
  VerticalPodAutoscalerCheckpointStatus,
} from './checkpoint/vpa-checkpoint.js';
export { checkpointObject } from './checkpoint/vpa-checkpoint.js';
export { DurationError, formatGoDuration, parseGoDuration, parseRfc3339 } from './gotime.js';
export {
  DEFAULT_ESTIMATION_OPTIONS,
  OptionsError,
  type RecommenderOptions,
  resolveOptions,
} from './logic/options.js';
export { CheckpointError } from './model/histogram.js';
export { CPU_HISTOGRAM_OPTIONS, MEMORY_HISTOGRAM_OPTIONS } from './model/histogram-options.js';
export type { ControlledValues, ResourceName, ScalingMode, ScopeState };

/** Integer amounts per resource; a resource left out of controlledResources is absent. */
export interface ResourceAmounts {
  cpu?: Millicores;
  memory?: Bytes;
}

/** The container's entry of the VPA's resourcePolicy.containerPolicies (already matched by name or "*"). */
export interface ContainerPolicy {
  /** "Off": no recommendation for the container, and it does not count in the pod-minimum split. */
  mode?: ScalingMode;
  minAllowed?: ResourceAmounts;
  maxAllowed?: ResourceAmounts;
  /** Defaults to ["cpu", "memory"]. */
  controlledResources?: readonly ResourceName[];
  /** Defaults to "RequestsAndLimits". */
  controlledValues?: ControlledValues;
}

export interface ContainerToRecommend {
  name: string;
  /** The scope's state, or several (merged in order into a fresh state, as upstream merges aggregates). */
  state: ScopeState | readonly ScopeState[];
  policy?: ContainerPolicy;
  /** The container's current requests: the base of proportional limits. */
  requests?: ResourceAmounts;
  /** The container's current limits (status.containerStatuses[].resources when reported, else spec). */
  limits?: ResourceAmounts;
}

export interface ContainerRecommendation {
  name: string;
  /** Upstream's target after minAllowed/maxAllowed (and, for RequestsOnly, the current limit). */
  target: ResourceAmounts;
  lowerBound: ResourceAmounts;
  upperBound: ResourceAmounts;
  /** The target before any capping. */
  uncappedTarget: ResourceAmounts;
  /** RequestsAndLimits with current limits: limits keeping the current limit/request ratio for target. */
  limits?: ResourceAmounts;
  /** What capping and limit scaling did, in upstream's annotation wording. */
  annotations: string[];
}

function checkMillis(t: EpochMillis, what: string): GoTime {
  if (!Number.isSafeInteger(t))
    throw new RangeError(`${what} must be an integer count of milliseconds, got ${t}`);
  return fromEpochMillis(t);
}

function checkAmount(v: number, what: string): void {
  // Negative amounts are valid input that upstream drops; fractions and NaN are caller bugs.
  if (!Number.isSafeInteger(v)) throw new RangeError(`${what} must be an integer, got ${v}`);
}

/** A new, empty scope state. The aggregation options (half-lives, memory windows, OOM bump) stay with it. */
export function createState(creationTime: EpochMillis, options?: RecommenderOptions): ScopeState {
  return ScopeState.create(resolveOptions(options).aggregations, checkMillis(creationTime, 'creationTime'));
}

/**
 * Adds a CPU usage sample (metrics.k8s.io usage at its window end). False when dropped: negative usage,
 * or not strictly after the previous CPU sample. Every sample weighs 0.1; `request` is accepted for
 * callers that have it but, as upstream since vpa 1.4.0, not used.
 */
export function addCpuSample(
  state: ScopeState,
  t: EpochMillis,
  usage: Millicores,
  _request?: Millicores,
): boolean {
  checkAmount(usage, 'CPU usage');
  return state.container.addSample({ measureStart: checkMillis(t, 't'), usage, resource: 'cpu' });
}

/** Adds a memory working-set sample. False when dropped: negative, or earlier than the last memory sample. */
export function addMemorySample(state: ScopeState, t: EpochMillis, usage: Bytes): boolean {
  checkAmount(usage, 'memory usage');
  return state.container.addSample({ measureStart: checkMillis(t, 't'), usage, resource: 'memory' });
}

/**
 * Which memory samples cannot change the state, so that a log of samples may leave their values out:
 * while the memory window in progress lasts (t < `before`), a sample of at most `atMost` bytes changes
 * nothing but the time of the last memory sample (within a window only a higher peak is recorded, a
 * window whose peak is 0 keeps it, and the window's peak never decreases). Undefined while the state
 * has no memory window yet (every sample matters).
 *
 * The guarantee: from this state on, replaying each such sample as `addMemorySample(state, t, 0)`
 * gives exactly the state its real value gives (the time still counts: it orders later samples and
 * dates stale OOMs), for every such sample that comes before the first memory sample or OOM dated at
 * or after `before` (the window then moves on; keep later values, which in time order are not below
 * `before` anyway). It can be taken when states are decoded (a fold) and used in later cycles without
 * decoding them.
 */
export function memorySampleThreshold(state: ScopeState): { before: EpochMillis; atMost: Bytes } | undefined {
  const c = state.container;
  if (isZeroTime(c.windowEnd)) return undefined;
  // t (whole ms) < windowEnd (ns) exactly when t < ceil(windowEnd / 1ms).
  const q = c.windowEnd / MILLISECOND;
  const before = c.windowEnd > q * MILLISECOND ? q + 1n : q;
  if (before > BigInt(Number.MAX_SAFE_INTEGER) || before < BigInt(Number.MIN_SAFE_INTEGER)) return undefined;
  return { before: Number(before) as EpochMillis, atMost: c.getMaxMemoryPeak() as Bytes };
}

/**
 * Whether addMemorySample(state, t, usage) would change the state otherwise than
 * addMemorySample(state, t, 0) does (memorySampleThreshold, taken now): false for a sample not above
 * the peak of the window in progress. Negative usage matters (it is dropped; a 0 would not be).
 */
export function memorySampleMatters(state: ScopeState, t: EpochMillis, usage: Bytes): boolean {
  const threshold = memorySampleThreshold(state);
  return !(threshold && t < threshold.before && usage >= 0 && usage <= threshold.atMost);
}

/**
 * Records an OOM kill at t of a container whose memory request was memoryRequest. False when discarded
 * as stale (more than one memory aggregation interval before the last memory sample).
 */
export function recordOom(state: ScopeState, t: EpochMillis, memoryRequest: Bytes): boolean {
  checkAmount(memoryRequest, 'memory request');
  return state.container.recordOom(checkMillis(t, 't'), memoryRequest);
}

const toArray = (s: ScopeState | readonly ScopeState[]): readonly ScopeState[] =>
  s instanceof ScopeState ? [s] : (s as readonly ScopeState[]);

function branded(r: Resources): ResourceAmounts {
  const out: ResourceAmounts = {};
  if (r.cpu !== undefined) out.cpu = r.cpu as Millicores;
  if (r.memory !== undefined) out.memory = r.memory as Bytes;
  return out;
}

/** The estimation settings and their estimators, for the default options built once. */
let defaultEstimation: { estimation: EstimationOptions; recommender: PodResourceRecommender } | undefined;

function estimationFor(options: RecommenderOptions | undefined): {
  estimation: EstimationOptions;
  recommender: PodResourceRecommender;
} {
  if (options === undefined && defaultEstimation) return defaultEstimation;
  const { estimation } = resolveOptions(options);
  const out = { estimation, recommender: createPodResourceRecommender(estimation) };
  if (options === undefined) defaultEstimation = out;
  return out;
}

/**
 * The aggregate upstream recommends from: the states merged in order into a fresh aggregate. A single
 * state is used as it is, without the copy: merging one aggregate into a fresh one gives the same
 * [min..max] weights (0 + w, scaled by 2^0 at most), total, range, sample times and count, which is
 * all the estimators read (test/recommendation/fast-paths.test.ts compares both ways).
 */
function aggregateOf(state: ScopeState | readonly ScopeState[]): AggregateContainerState {
  if (state instanceof ScopeState) return state.aggregate;
  if (state.length === 1) return (state[0] as ScopeState).aggregate;
  return mergeAggregates(state.map((s) => s.aggregate));
}

/**
 * Recommends for one pod's containers, as upstream's recommender would for a VPA whose pods are these
 * (the per-node scope of KEP-4943). Containers with mode Off, and containers without any CPU sample, get
 * no recommendation and do not count in the pod-minimum split (upstream GetContainerNameToAggregateStateMap).
 * The result is sorted by container name. Integer millicores and bytes, truncated as upstream truncates.
 */
export function recommend(
  containers: readonly ContainerToRecommend[],
  options?: RecommenderOptions,
): ContainerRecommendation[] {
  const { estimation, recommender } = estimationFor(options);
  const { inputs, byName } = recommenderInputs(containers);
  const raw = getRecommendedPodResources(recommender, inputs, estimation);
  const out: ContainerRecommendation[] = [];
  for (const name of [...raw.keys()].sort()) {
    const rec = raw.get(name);
    const c = byName.get(name);
    if (rec && c) out.push(finishRecommendation(c, rec, estimation));
  }
  return out;
}

/** The containers that get a recommendation, each with its merged aggregate (names must be unique). */
function recommenderInputs(containers: readonly ContainerToRecommend[]) {
  const names = new Set<string>();
  const inputs = new Map<string, RecommenderInput>();
  const byName = new Map<string, ContainerToRecommend>();
  for (const c of containers) {
    if (names.has(c.name)) throw new RangeError(`container ${JSON.stringify(c.name)} is listed twice`);
    names.add(c.name);
    if (c.policy?.mode === 'Off') continue;
    const merged = aggregateOf(c.state);
    if (merged.totalSamplesCount <= 0) continue;
    const input: RecommenderInput = { state: merged };
    inputs.set(
      c.name,
      c.policy?.controlledResources ? { ...input, controlledResources: c.policy.controlledResources } : input,
    );
    byName.set(c.name, c);
  }
  return { inputs, byName };
}

/** Rounded, capped by the container's policy, then fitted to what its controlled values leave alone. */
function finishRecommendation(
  c: ContainerToRecommend,
  rec: RecommendedContainerResources,
  estimation: EstimationOptions,
): ContainerRecommendation {
  const rounded = {
    target: roundResources(rec.target, estimation),
    lowerBound: roundResources(rec.lowerBound, estimation),
    upperBound: roundResources(rec.upperBound, estimation),
  };
  let capped = applyVpaPolicy(rounded, c.policy, estimation.globalMaxAllowed);
  const annotations: string[] = [];
  const controlledValues = c.policy?.controlledValues ?? 'RequestsAndLimits';
  let limits: ResourceAmounts | undefined;
  if (controlledValues === 'RequestsOnly' && c.limits) {
    // What admission and the updater apply: requests never above the limit they leave alone.
    const currentLimits = c.limits;
    capped = {
      target: capToContainerLimits(capped.target, currentLimits, annotations),
      lowerBound: capToContainerLimits(capped.lowerBound, currentLimits),
      upperBound: capToContainerLimits(capped.upperBound, currentLimits),
    };
  } else if (controlledValues === 'RequestsAndLimits' && c.limits) {
    limits = proportionalLimits(c, capped.target, annotations);
  }
  return {
    name: c.name,
    target: branded(capped.target),
    lowerBound: branded(capped.lowerBound),
    upperBound: branded(capped.upperBound),
    uncappedTarget: branded(rounded.target),
    ...(limits ? { limits } : {}),
    annotations,
  };
}

/** Limits that keep their ratio to the requests as the target moves them (upstream's proportional limits). */
function proportionalLimits(
  c: ContainerToRecommend,
  target: Resources,
  annotations: string[],
): ResourceAmounts | undefined {
  const l: Resources = {};
  for (const r of RESOURCE_NAMES) {
    const t = target[r];
    if (t === undefined) continue;
    const p = proportionalLimitOfAmounts(r, c.limits?.[r], c.requests?.[r], t);
    if (p.annotation) annotations.push(p.annotation);
    if (p.limit !== undefined) l[r] = p.limit;
  }
  return Object.keys(l).length > 0 ? branded(l) : undefined;
}

/**
 * Merges states (e.g. all nodes' states of one container, to get the DaemonSet-wide recommendation that
 * upstream VPA would give): a fresh aggregate with each merged in, in order. Histograms with different
 * reference timestamps are aligned to the youngest as upstream does. The inputs are not modified; the
 * result has no memory window of its own (keep feeding samples to the per-node states).
 */
export function mergeStates(states: readonly ScopeState[]): ScopeState {
  return new ScopeState(mergeAggregates(states.map((s) => s.aggregate)));
}

/** Upstream's isExpired: no CPU sample for memoryAggregationInterval × count (8 days); without any, 8 days since creation. */
export function isExpired(state: ScopeState, now: EpochMillis): boolean {
  return state.aggregate.isExpired(checkMillis(now, 'now'));
}

/**
 * Whether upstream's garbage collector would drop the state: expired, or without CPU samples while
 * nothing contributes to it any more (`contributive`: a live pod of a live DaemonSet on the node).
 */
export function isGarbage(state: ScopeState, now: EpochMillis, contributive: boolean): boolean {
  return aggregateIsGarbage(state.aggregate, checkMillis(now, 'now'), contributive);
}

/** The lossless binary form for fleetscope's storage (see checkpoint/binary.ts for the layout). */
export function encodeState(state: ScopeState): Uint8Array {
  return encodeBinary(state);
}

/** Inverse of encodeState: recommendations and further evolution are exactly those of the original. */
export function decodeState(bytes: Uint8Array): ScopeState {
  return decodeBinary(bytes);
}

/**
 * The upstream VerticalPodAutoscalerCheckpoint status for the state(s) of one container at `now`, as the
 * recommender's checkpoint writer builds it: the states merged into a fresh one, minus each live
 * container's memory peak of the window still in progress (so that a restore does not count two peaks
 * in one window), weights quantised to a maximum of 10000, times at second precision.
 */
export function toCheckpoint(
  state: ScopeState | readonly ScopeState[],
  now: EpochMillis,
): VerticalPodAutoscalerCheckpointStatus {
  const nowNs = checkMillis(now, 'now');
  const states = toArray(state);
  const merged = mergeAggregates(states.map((s) => s.aggregate));
  for (const s of states) {
    const c = s.container;
    if (nowNs < c.windowEnd) merged.memoryPeaks.subtractSample(c.getMaxMemoryPeak(), 1.0, c.windowEnd);
  }
  return statusToJson(merged.saveToCheckpoint(nowNs));
}

/**
 * A state restored from an upstream checkpoint status (as upstream's InitFromCheckpoints loads one).
 * Lossy: weights were quantised and the memory window in progress was left out. Upstream keeps such a
 * state aside and merges it into every later recommendation: use recommend({state: [restored, live]}).
 */
export function fromCheckpoint(
  status: VerticalPodAutoscalerCheckpointStatus,
  creationTime: EpochMillis,
  options?: RecommenderOptions,
): ScopeState {
  const aggregate = new AggregateContainerState(
    resolveOptions(options).aggregations,
    checkMillis(creationTime, 'creationTime'),
  );
  aggregate.loadFromCheckpoint(statusFromJson(status));
  return new ScopeState(aggregate);
}
