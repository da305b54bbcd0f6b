/**
 * This cycle's recommendation for each node of one DaemonSet. A fold recommends every node the DaemonSet
 * can run on from its whole history (every state decoded anyway). Other cycles use what the last fold
 * stored (at most a fold period old) and recompute a node from its full history only when the cycle may
 * act on it (refresh): decoding every state each cycle is what folds exist to avoid.
 */
import { type ColumnarLog, entryOf } from './codec.js';
import {
  applyEntry,
  entryFor,
  type Fallbacks,
  fallbackRec,
  groupRecommendation,
  nodeRecommendation,
  recommendDsWide,
  recommendMerged,
} from './engine.js';
import { type GroupRecs, groupsFromHead, membersOf, recommendGroups, tooManyGroups } from './groups.js';
import type { ContainerRec, DsModel, LogEntry, NodeRec } from './model.js';
import type { DsHead } from './store.js';
import type { NodeScopeTarget } from './targets.js';

export class DsRecommendations {
  /** Per node the DaemonSet can run on: its recommendation this cycle, if it has one. */
  readonly recs = new Map<string, NodeRec>();
  /** Nodes whose recommendation is computed from their full history in this cycle. */
  readonly fresh = new Set<string>();
  /** Nodes whose stored cycles have been replayed into their states (each once). */
  private readonly replayed = new Set<string>();
  /** Why the nodes were not grouped (too many values of the label), if they were not. */
  ungrouped?: string;

  private constructor(
    private readonly target: NodeScopeTarget,
    private readonly model: DsModel,
    /** The stored cycles since the base, and this one: a node's history beyond its base state. */
    private readonly logs: readonly ColumnarLog[],
    private readonly entry: LogEntry,
    readonly dsWide: Record<string, ContainerRec>,
    /** Each group's recommendation, by scope value of the target's group label. */
    readonly groups: GroupRecs,
    /** Each node's scope value (the nodes the DaemonSet can run on, as the cycle read their labels). */
    readonly values: ReadonlyMap<string, string>,
  ) {}

  /** A fold: the model holds every state up to this cycle; every eligible node is recommended. */
  static folded(
    target: NodeScopeTarget,
    model: DsModel,
    entry: LogEntry,
    eligible: ReadonlySet<string>,
    values: ReadonlyMap<string, string>,
  ): DsRecommendations {
    const members = membersOf(values);
    const ungrouped = tooManyGroups(target.scope.groupLabel, members);
    const groups: GroupRecs = ungrouped ? new Map() : recommendGroups(target, model, members);
    const r = new DsRecommendations(target, model, [], entry, recommendDsWide(target, model), groups, values);
    if (ungrouped) r.ungrouped = ungrouped;
    for (const node of eligible) {
      r.replayed.add(node);
      r.fresh.add(node);
      r.set(node, r.recommendNode(node));
    }
    return r;
  }

  /**
   * Other cycles: the recommendations stored with the base (the groups' in its head); a node without
   * one of its own goes down the fallback chain: its group's, then the DaemonSet-wide one.
   */
  static stored(
    target: NodeScopeTarget,
    model: DsModel,
    logs: readonly ColumnarLog[],
    entry: LogEntry,
    eligible: ReadonlySet<string>,
    head: DsHead | undefined,
    values: ReadonlyMap<string, string>,
  ): DsRecommendations {
    const groups = groupsFromHead(head);
    const r = new DsRecommendations(target, model, logs, entry, head?.dsWide ?? {}, groups, values);
    for (const node of eligible) {
      const stored = model.nodes.get(node)?.rec;
      if (target.scope.perNode && stored?.source === 'node') r.recs.set(node, stored);
      else r.set(node, r.fallback(node));
    }
    return r;
  }

  /** The node's recommendation from its whole history up to this cycle (its group's, in label scope). */
  refresh(node: string): NodeRec | undefined {
    if (this.fresh.has(node)) return this.recs.get(node);
    const value = this.values.get(node);
    if (this.target.scope.perNode || value === undefined || this.ungrouped) {
      this.replay([node]);
      this.fresh.add(node);
      this.set(node, this.recommendNode(node));
      return this.recs.get(node);
    }
    const members = [...this.values].filter(([, v]) => v === value).map(([n]) => n);
    this.replay(members);
    const group = recommendMerged(this.target, this.model, members);
    if (Object.keys(group).length > 0) this.groups.set(value, group);
    else this.groups.delete(value);
    for (const m of members) {
      this.fresh.add(m);
      this.set(m, this.recommendNode(m));
    }
    return this.recs.get(node);
  }

  fallbackNodes(): number {
    let n = 0;
    for (const r of this.recs.values()) if (r.source === 'fallback') n++;
    return n;
  }

  /** A node's states depend on its own samples only: replays the stored cycles restricted to some nodes. */
  private replay(nodes: readonly string[]): void {
    const only = new Set(nodes.filter((n) => !this.replayed.has(n)));
    if (only.size === 0) return;
    for (const c of this.logs) applyEntry(this.model, entryOf(c, only));
    applyEntry(this.model, entryFor(this.entry, only));
    for (const n of only) this.replayed.add(n);
  }

  private fallbacks(node: string): Fallbacks {
    const value = this.values.get(node);
    const group = value === undefined ? undefined : this.groups.get(value);
    return {
      ...(value !== undefined && group ? { group: { value, containers: group } } : {}),
      dsWide: this.dsWide,
    };
  }

  private fallback(node: string): NodeRec | undefined {
    return this.target.scope.perNode
      ? fallbackRec(this.fallbacks(node))
      : groupRecommendation(this.target, this.fallbacks(node));
  }

  private recommendNode(node: string): NodeRec | undefined {
    return this.target.scope.perNode
      ? nodeRecommendation(this.target, this.model.nodes.get(node), this.fallbacks(node))
      : this.fallback(node);
  }

  private set(node: string, rec: NodeRec | undefined): void {
    if (rec) this.recs.set(node, rec);
    else this.recs.delete(node);
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
