/**
 * The per-node math around shared/recommendation: applying a cycle's samples and OOM kills to the
 * nodes' states (the same function replays stored cycles, so a restart reproduces every state bit for
 * bit), recommending per node and for the whole DaemonSet, falling back for nodes without history, and
 * upstream's garbage collection of states.
 */
import type { Bytes, EpochMillis, Millicores } from '../kernel/units.js';
import {
  addCpuSample,
  addMemorySample,
  type ContainerRecommendation,
  type ContainerToRecommend,
  createState,
  decodeState,
  isGarbage,
  recommend,
  recordOom,
  type ScopeState,
} from '../recommendation/index.js';
import { positionsIn } from './codec.js';
import {
  type ContainerRec,
  type DsModel,
  type LogEntry,
  type NodeRec,
  type NodeRecord,
  type NodeSamples,
  newNodeRecord,
} from './model.js';
import type { NodeScopeTarget } from './targets.js';

const ms = (t: number) => t as EpochMillis;

/** Decodes a record's stored states (once). */
export function materialize(rec: NodeRecord): NodeRecord {
  const raw = rec.raw;
  if (raw) {
    raw.forEach((b, j) => {
      if (b && !rec.states[j]) rec.states[j] = decodeState(b);
    });
    rec.raw = undefined;
  }
  return rec;
}

/** The entry restricted to some nodes (a node's states depend on its own samples only). */
export function entryFor(entry: LogEntry, nodes: ReadonlySet<string>): LogEntry {
  const { samples } = entry;
  return {
    ...entry,
    samples: positionsIn(sampleNames(samples), nodes).map((i) => samples[i] as NodeSamples),
    ooms: entry.ooms.filter((o) => nodes.has(o.node)),
  };
}

/** The nodes of an entry's samples, in order (kept per samples array while its length holds). */
const namesOfSamples = new WeakMap<readonly NodeSamples[], string[]>();
function sampleNames(samples: readonly NodeSamples[]): string[] {
  let names = namesOfSamples.get(samples);
  if (!names || names.length !== samples.length) {
    names = samples.map((s) => s.node);
    namesOfSamples.set(samples, names);
  }
  return names;
}

/** The time of the last OOM kill recorded per container, from an entry (without touching states). */
export function noteOoms(model: DsModel, entry: Pick<LogEntry, 'containers' | 'ooms'>): void {
  const map = entry.containers.map((name) => model.containers.indexOf(name));
  for (const o of entry.ooms) {
    const j = map[o.container] ?? -1;
    const rec = model.nodes.get(o.node);
    if (j < 0 || !rec) continue;
    if (o.t > (rec.lastOomAt[j] ?? 0)) rec.lastOomAt[j] = o.t;
  }
}

/**
 * Applies one cycle: every node's CPU and memory samples first, then the OOM kills (the recommender sees
 * a cycle's samples before that cycle's OOM events). A state is created at its first observation.
 * Containers the model does not have (the template changed since) are ignored.
 */
export function applyEntry(model: DsModel, entry: LogEntry): { samples: number; ooms: number } {
  const map = entry.containers.map((name) => model.containers.indexOf(name));
  let samples = 0;
  let ooms = 0;
  for (const s of entry.samples) {
    for (let k = 0; k < map.length; k++) {
      const j = map[k] as number;
      if (j < 0) continue;
      const cpu = s.cpu[k];
      const memory = s.memory[k];
      if (cpu === undefined && memory === undefined) continue;
      const { state } = stateAt(model, s.node, j, s.t);
      if (cpu !== undefined && addCpuSample(state, ms(s.t), cpu as Millicores)) samples++;
      if (memory !== undefined) addMemorySample(state, ms(s.t), memory as Bytes);
    }
  }
  for (const o of entry.ooms) {
    const j = map[o.container] ?? -1;
    if (j < 0) continue;
    const { rec, state } = stateAt(model, o.node, j, o.t);
    if (recordOom(state, ms(o.t), o.request as Bytes)) ooms++;
    if (o.t > (rec.lastOomAt[j] ?? 0)) rec.lastOomAt[j] = o.t;
  }
  return { samples, ooms };
}

/** Container j's state on a node, decoded; the node's record and the state are created when first observed at t. */
function stateAt(model: DsModel, node: string, j: number, t: number) {
  let rec = model.nodes.get(node);
  if (!rec) {
    rec = newNodeRecord(node, model.containers.length);
    model.nodes.set(node, rec);
  }
  materialize(rec);
  let state = rec.states[j];
  if (!state) {
    state = createState(ms(t));
    rec.states[j] = state;
  }
  return { rec, state };
}

function toRec(r: ContainerRecommendation): ContainerRec {
  return {
    target: { ...r.target },
    lowerBound: { ...r.lowerBound },
    upperBound: { ...r.upperBound },
    uncappedTarget: { ...r.uncappedTarget },
    ...(r.limits ? { limits: { ...r.limits } } : {}),
  };
}

function inputs(target: NodeScopeTarget, states: (ScopeState | readonly ScopeState[] | undefined)[]) {
  const out: ContainerToRecommend[] = [];
  target.containers.forEach((c, j) => {
    const state = states[j];
    if (!state || (Array.isArray(state) && state.length === 0)) return;
    const policy = target.policies[c.name];
    out.push({
      name: c.name,
      state: state as ScopeState | readonly ScopeState[],
      ...(policy ? { policy } : {}),
      // Proportional limits keep the template's limit/request ratio (what admission would apply).
      requests: c.requests,
      limits: c.limits,
    });
  });
  return out;
}

/** The recommendation from the node's own history: containers without CPU samples are left out. */
export function recommendOwn(target: NodeScopeTarget, record: NodeRecord): Record<string, ContainerRec> {
  materialize(record);
  const out: Record<string, ContainerRec> = {};
  const list = inputs(target, record.states);
  if (list.length === 0) return out;
  for (const r of recommend(list)) out[r.name] = toRec(r);
  return out;
}

/**
 * The recommendation from some nodes' merged history: each container's states of those nodes merged
 * (in node-name order) into one, the pod minimum split over the DaemonSet's containers, as upstream
 * recommends for the pods of one scope value (or of the whole VPA).
 */
export function recommendMerged(
  target: NodeScopeTarget,
  model: DsModel,
  nodes: Iterable<string>,
): Record<string, ContainerRec> {
  const perContainer: ScopeState[][] = target.containers.map(() => []);
  for (const n of [...nodes].sort()) {
    const rec = model.nodes.get(n);
    if (!rec) continue;
    materialize(rec).states.forEach((s, j) => {
      if (s) perContainer[j]?.push(s);
    });
  }
  const out: Record<string, ContainerRec> = {};
  const list = inputs(target, perContainer);
  if (list.length === 0) return out;
  for (const r of recommend(list)) out[r.name] = toRec(r);
  return out;
}

/** What upstream VPA would recommend with the default scope: every node's history merged. */
export function recommendDsWide(target: NodeScopeTarget, model: DsModel): Record<string, ContainerRec> {
  return recommendMerged(target, model, model.nodes.keys());
}

/** What a node without a recommendation of its own gets: its group's, else the DaemonSet-wide one. */
export interface Fallbacks {
  group?: { value: string; containers: Record<string, ContainerRec> };
  dsWide: Record<string, ContainerRec>;
}

/** The first of the fallback chain that has a recommendation. */
export function fallbackRec(f: Fallbacks): NodeRec | undefined {
  if (f.group && Object.keys(f.group.containers).length > 0)
    return { source: 'group', group: f.group.value, containers: { ...f.group.containers } };
  if (Object.keys(f.dsWide).length > 0) return { source: 'fallback', containers: { ...f.dsWide } };
  return undefined;
}

/** A recommendation with the containers it lacks filled from the next in the chain (mode Off left out). */
function filled(target: NodeScopeTarget, rec: NodeRec, next: NodeRec | undefined): NodeRec {
  if (!next) return rec;
  const containers: Record<string, ContainerRec> = { ...rec.containers };
  for (const c of target.containers) {
    if (target.policies[c.name]?.mode === 'Off') continue;
    const n = next.containers[c.name];
    if (!containers[c.name] && n) containers[c.name] = n;
  }
  return { ...rec, containers };
}

/**
 * Per node (per-node scopes): its own recommendation, or (a node the DaemonSet can run on without
 * history yet) its group's, then the DaemonSet-wide one. A container missing from a node's own history
 * takes the next value of the chain for that container.
 */
export function nodeRecommendation(
  target: NodeScopeTarget,
  record: NodeRecord | undefined,
  fallbacks: Fallbacks,
): NodeRec | undefined {
  const own = record ? recommendOwn(target, record) : {};
  const next = fallbackRec(fallbacks);
  if (Object.keys(own).length === 0) return next;
  return filled(target, { source: 'node', containers: own }, next);
}

/** Per node (label scopes): its group's recommendation, containers it lacks from the DaemonSet-wide one. */
export function groupRecommendation(target: NodeScopeTarget, fallbacks: Fallbacks): NodeRec | undefined {
  const rec = fallbackRec(fallbacks);
  if (rec?.source !== 'group') return rec;
  return filled(target, rec, fallbackRec({ dsWide: fallbacks.dsWide }));
}

/**
 * Upstream's garbage collection (at most hourly upstream; here at each fold): a state goes when it has
 * expired (no CPU sample for 8 days) or when it has no CPU sample and nothing contributes to it (no live
 * pod of the DaemonSet on the node). A node record goes with its last state unless the DaemonSet can
 * run on the node (it keeps a fallback recommendation).
 */
export function collectGarbage(
  model: DsModel,
  now: number,
  contributive: ReadonlySet<string>,
  eligible: ReadonlySet<string>,
): { states: number; nodes: number } {
  let states = 0;
  let nodes = 0;
  for (const [name, rec] of model.nodes) {
    materialize(rec);
    const live = contributive.has(name);
    rec.states.forEach((s, j) => {
      if (s && isGarbage(s, ms(now), live)) {
        rec.states[j] = undefined;
        rec.lastOomAt[j] = 0;
        states++;
      }
    });
    if (rec.states.every((s) => !s) && !eligible.has(name)) {
      model.nodes.delete(name);
      nodes++;
    }
  }
  return { states, nodes };
}

/** Re-keys a model to a target's containers (a template that gained or lost containers). */
export function remapContainers(model: DsModel, containers: readonly string[]): DsModel {
  if (model.containers.length === containers.length && model.containers.every((c, i) => c === containers[i]))
    return model;
  const map = containers.map((c) => model.containers.indexOf(c));
  const nodes = new Map<string, NodeRecord>();
  for (const [name, rec] of model.nodes) {
    const raw = rec.raw;
    nodes.set(name, {
      node: name,
      states: map.map((j) => (j < 0 ? undefined : rec.states[j])),
      lastOomAt: map.map((j) => (j < 0 ? 0 : (rec.lastOomAt[j] ?? 0))),
      ...(raw ? { raw: map.map((j) => (j < 0 ? undefined : raw[j])) } : {}),
      ...(rec.rec ? { rec: rec.rec } : {}),
    });
  }
  return { containers: [...containers], nodes };
}
