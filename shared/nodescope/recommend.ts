/**
 * This cycle's recommendation for each node of one DaemonSet. A fold recommends every node the DaemonSet
 * can run on from its whole history (every state decoded anyway). Other cycles use what the last fold
 * stored (at most a fold period old) and recompute a node from its full history only when the cycle may
 * act on it (refresh): decoding every state each cycle is what folds exist to avoid.
 */
import { type ColumnarLog, entryOf } from './codec.js';
import { applyEntry, entryFor, nodeRecommendation, recommendDsWide } from './engine.js';
import type { ContainerRec, DsModel, LogEntry, NodeRec } from './model.js';
import type { DsHead } from './store.js';
import type { NodeScopeTarget } from './targets.js';

export class DsRecommendations {
  /** Per node the DaemonSet can run on: its recommendation this cycle, if it has one. */
  readonly recs = new Map<string, NodeRec>();
  /** Nodes whose recommendation is computed from their full history in this cycle. */
  readonly fresh = new Set<string>();

  private constructor(
    private readonly target: NodeScopeTarget,
    private readonly model: DsModel,
    /** The stored cycles since the base, and this one: a node's history beyond its base state. */
    private readonly logs: readonly ColumnarLog[],
    private readonly entry: LogEntry,
    readonly dsWide: Record<string, ContainerRec>,
  ) {}

  /** A fold: the model holds every state up to this cycle; every eligible node is recommended. */
  static folded(
    target: NodeScopeTarget,
    model: DsModel,
    entry: LogEntry,
    eligible: ReadonlySet<string>,
  ): DsRecommendations {
    const r = new DsRecommendations(target, model, [], entry, recommendDsWide(target, model));
    for (const node of eligible) {
      const rec = nodeRecommendation(target, model.nodes.get(node), r.dsWide);
      if (rec) r.recs.set(node, rec);
      r.fresh.add(node);
    }
    return r;
  }

  /** Other cycles: the recommendations stored with the base; a node without one gets the fallback. */
  static stored(
    target: NodeScopeTarget,
    model: DsModel,
    logs: readonly ColumnarLog[],
    entry: LogEntry,
    eligible: ReadonlySet<string>,
    head: DsHead | undefined,
  ): DsRecommendations {
    const r = new DsRecommendations(target, model, logs, entry, head?.dsWide ?? {});
    const wide = Object.keys(r.dsWide).length > 0;
    for (const node of eligible) {
      const stored = model.nodes.get(node)?.rec;
      if (stored) r.recs.set(node, stored);
      else if (wide) r.recs.set(node, { source: 'fallback', containers: { ...r.dsWide } });
    }
    return r;
  }

  /** The node's recommendation from its whole history up to this cycle, computed once per cycle. */
  refresh(node: string): NodeRec | undefined {
    if (!this.fresh.has(node)) {
      this.fresh.add(node);
      // A node's states depend on its own samples only: replay the entries restricted to it.
      const only = new Set([node]);
      for (const c of this.logs) applyEntry(this.model, entryOf(c, only));
      applyEntry(this.model, entryFor(this.entry, only));
      const r = nodeRecommendation(this.target, this.model.nodes.get(node), this.dsWide);
      if (r) this.recs.set(node, r);
      else this.recs.delete(node);
    }
    return this.recs.get(node);
  }

  fallbackNodes(): number {
    let n = 0;
    for (const r of this.recs.values()) if (r.source === 'fallback') n++;
    return n;
  }
}

/** (container, node) states kept, decoded or not. */
export function countScopes(model: DsModel): number {
  let n = 0;
  for (const r of model.nodes.values())
    r.states.forEach((s, j) => {
      if (s || r.raw?.[j]) n++;
    });
  return n;
}

/** The head's counts: per-node targets summed against the DaemonSet-wide target on every node. */
export function statsOf(
  model: DsModel,
  eligible: ReadonlySet<string>,
  recs: ReadonlyMap<string, NodeRec>,
  dsWide: Record<string, ContainerRec>,
  lastSampleAt: number,
): DsHead['stats'] {
  let perNodeCpu = 0;
  let perNodeMemory = 0;
  let fallbackNodes = 0;
  for (const r of recs.values()) {
    if (r.source === 'fallback') fallbackNodes++;
    for (const c of Object.values(r.containers)) {
      perNodeCpu += c.target.cpu ?? 0;
      perNodeMemory += c.target.memory ?? 0;
    }
  }
  let wideCpu = 0;
  let wideMemory = 0;
  for (const c of Object.values(dsWide)) {
    wideCpu += c.target.cpu ?? 0;
    wideMemory += c.target.memory ?? 0;
  }
  return {
    nodes: model.nodes.size,
    eligibleNodes: eligible.size,
    fallbackNodes,
    scopes: countScopes(model),
    perNodeCpu,
    perNodeMemory,
    dsWideCpu: wideCpu * recs.size,
    dsWideMemory: wideMemory * recs.size,
    lastSampleAt,
  };
}
