/**
 * A simulated kube-scheduler (default profile, reduced to what fleetscope's clusters exercise): pods
 * without spec.nodeName that name the default scheduler are bound, highest priority first, to the
 * least allocated node that passes the filters in node-fit.ts, counting each node's pods as
 * pod-requests.ts does (so a Deferred upsize already holds its room). A pod that fits nowhere may
 * preempt lower-priority pods (preemption.ts); otherwise it stays Pending with PodScheduled=False,
 * reason Unschedulable and the real FitError message. Pending pods are retried whenever room may have
 * appeared: a bound pod deleted, finished or shrunk (resize completed, reverted or found Infeasible),
 * any node change, a clock advance.
 */

import { rfc3339 } from './clock.js';
import type { EventRecorder } from './events.js';
import { fitErrorMessage } from './fit-error.js';
import { deepEqual, type Json, type JsonObject } from './json.js';
import {
  leastAllocatedScore,
  type NodeUse,
  nodeNamesFromAffinity,
  placementReason,
  REASON,
  resourceReasons,
} from './node-fit.js';
import { nodeAllocatable } from './nodes.js';
import { type Amounts, isTerminal, schedulerRequests, UNBOUND } from './pod-requests.js';
import { normalizePod } from './pods.js';
import { type BoundPod, type Filtered, preempt } from './preemption.js';
import { resizeVictims } from './resize-preemption.js';
import type { SimState } from './state.js';
import type { Collection, StoreEvent } from './store.js';
import { withTopologyLabels } from './topology-labels.js';

const DEFAULT_SCHEDULER = 'default-scheduler';

/** Requests per node for one scheduling pass, computed on first use and kept current by the pass's bindings. */
class NodeUsage {
  private readonly cache = new Map<string, NodeUse>();

  constructor(private readonly pods: Collection) {}

  podsOn(node: string): BoundPod[] {
    const out: BoundPod[] = [];
    for (const key of this.pods.indexed(node)) {
      const pod = this.pods.get(key);
      if (pod && !isTerminal(pod)) out.push({ key, pod, req: schedulerRequests(pod) });
    }
    return out;
  }

  get(node: string): NodeUse {
    let u = this.cache.get(node);
    if (!u) {
      u = { cpuM: 0, mem: 0, pods: 0 };
      for (const b of this.podsOn(node))
        u = { cpuM: u.cpuM + b.req.cpuM, mem: u.mem + b.req.mem, pods: u.pods + 1 };
      this.cache.set(node, u);
    }
    return u;
  }

  add(node: string, req: Amounts): void {
    const u = this.get(node);
    this.cache.set(node, { cpuM: u.cpuM + req.cpuM, mem: u.mem + req.mem, pods: u.pods + 1 });
  }

  forget(node: string): void {
    this.cache.delete(node);
  }
}

/** Whether a change to a bound pod can have made room for others. */
function freesRoom(prev: Json, pod: Json): boolean {
  if (isTerminal(pod)) return !isTerminal(prev);
  const a = schedulerRequests(prev);
  const b = schedulerRequests(pod);
  return b.cpuM < a.cpuM || b.mem < a.mem;
}

const priorityOf = (p: Json): number => p?.spec?.priority ?? 0;

const isDeferred = (p: Json): boolean =>
  (p?.status?.conditions ?? []).some((c: Json) => c?.type === 'PodResizePending' && c.reason === 'Deferred');

export class Scheduler {
  private dirty = false;
  /** Queue order of pending pods (PrioritySort breaks priority ties by time of arrival). */
  private readonly arrival = new Map<string, number>();
  private seq = 0;
  /** Bound pods whose resize the kubelet just Deferred (KEP-5836 preemption, 1.37+). */
  private readonly deferredResizes = new Set<string>();

  constructor(private readonly cluster: SimState & { readonly events: EventRecorder }) {}

  private get pods(): Collection {
    return this.cluster.store.collection('pods');
  }

  /** Marks a pass due, unless nothing is waiting for one. */
  private wake(): void {
    if (this.pods.indexed(UNBOUND).size > 0) this.dirty = true;
  }

  onEvent(ev: StoreEvent): void {
    if (ev.collection === 'nodes') {
      this.wake();
      return;
    }
    if (ev.collection !== 'pods') return;
    if (ev.type === 'DELETED') {
      this.arrival.delete(ev.key);
      if (ev.prev?.spec?.nodeName) this.wake();
      return;
    }
    const pod = ev.object;
    if (!pod.spec?.nodeName) {
      if (ev.type === 'ADDED') this.arrival.set(ev.key, this.seq++);
      // A pending pod's own status writes (ours) do not call for another pass; a spec change does.
      if (ev.type === 'ADDED' || !deepEqual(ev.prev?.spec, pod.spec)) this.dirty = true;
      return;
    }
    if (!ev.prev?.spec?.nodeName) {
      this.arrival.delete(ev.key);
      return;
    }
    if (this.pods.indexed(UNBOUND).size > 0 && freesRoom(ev.prev, pod)) this.dirty = true;
    if (this.cluster.features.resizePreemption && isDeferred(pod) && !isDeferred(ev.prev)) {
      this.deferredResizes.add(ev.key);
      this.dirty = true;
    }
  }

  /**
   * KEP-5836 (1.37): a Deferred resize may preempt lower-priority pods on its node, unless the node
   * opted out or the pod's preemptionPolicy is Never (resize-preemption.ts); the kubelet then admits it.
   */
  private preemptForResizes(usage: NodeUsage): void {
    const keys = [...this.deferredResizes];
    this.deferredResizes.clear();
    for (const key of keys) {
      const pod = this.pods.get(key);
      if (!pod || !isDeferred(pod)) continue;
      const nodeName = pod.spec.nodeName;
      const node = this.cluster.store.get('nodes', nodeName);
      const alloc = nodeAllocatable(node);
      const want = schedulerRequests(pod);
      const others = usage.podsOn(nodeName).filter((b) => b.key !== key);
      const used = others.reduce((u, b) => ({ cpuM: u.cpuM + b.req.cpuM, mem: u.mem + b.req.mem }), {
        cpuM: 0,
        mem: 0,
      });
      const need = { cpuM: used.cpuM + want.cpuM - alloc.cpuM, mem: used.mem + want.mem - alloc.mem };
      const residents = others.map((b) => ({ ...b, cpuM: b.req.cpuM, mem: b.req.mem }));
      const victims = resizeVictims(pod, node, need, residents, this.cluster.features);
      if (!victims || victims.length === 0) continue;
      this.evict(victims, pod, nodeName);
      usage.forget(nodeName);
    }
  }

  onClock(): void {
    this.wake();
  }

  /** Runs a scheduling pass if one is due; true when it ran (its writes may need dispatching). */
  flush(): boolean {
    if (!this.dirty) return false;
    this.dirty = false;
    const pods = this.pods;
    const queue = [...pods.indexed(UNBOUND)].filter((k) => this.schedules(pods.get(k)));
    const order = (k: string) => this.arrival.get(k) ?? Number.MAX_SAFE_INTEGER;
    queue.sort(
      (a, b) => priorityOf(pods.get(b)) - priorityOf(pods.get(a)) || order(a) - order(b) || (a < b ? -1 : 1),
    );
    const usage = new NodeUsage(pods);
    for (const key of queue) this.scheduleOne(key, usage);
    if (this.deferredResizes.size > 0) this.preemptForResizes(usage);
    return true;
  }

  private schedules(pod: Json): boolean {
    return (
      !!pod &&
      !pod.spec?.nodeName &&
      !isTerminal(pod) &&
      !pod.metadata?.deletionTimestamp &&
      (pod.spec?.schedulerName ?? DEFAULT_SCHEDULER) === DEFAULT_SCHEDULER
    );
  }

  private get minor(): number {
    const v = this.cluster.version;
    return v.major > 1 ? 99 : v.minor;
  }

  /** One pod's scheduling cycle: filter and score, else preempt, else report why it fits nowhere. */
  private scheduleOne(key: string, usage: NodeUsage): void {
    const pod = this.pods.get(key);
    const nodes = this.cluster.store.collection('nodes');
    if (nodes.size === 0) {
      this.unschedulable(key, pod, 'no nodes available to schedule pods');
      return;
    }
    const want = schedulerRequests(pod);
    const found = this.findNodes(pod, want, usage, nodes);
    if (found.best) {
      this.bind(key, pod, found.best, want, usage);
      return;
    }
    const outcome = preempt({
      pod,
      want,
      totalNodes: nodes.size,
      filtered: found.filtered,
      absent: found.absent,
      usage: (n) => usage.get(n),
      podsOn: (n) => usage.podsOn(n),
      node: (n) => nodes.get(n),
    });
    const perNode = [...found.filtered.values()].map((f) => f.reasons);
    if ('node' in outcome) {
      // kube-scheduler records the failed attempt, nominates, and binds in a later cycle.
      this.cluster.events.failedScheduling(pod, fitErrorMessage(nodes.size, { ...found, perNode }));
      this.evict(outcome.victims, pod, outcome.node);
      usage.forget(outcome.node);
      // Victims go at once (no graceful termination here), so the preemptor binds in this same pass.
      this.bind(key, pod, outcome.node, want, usage);
      return;
    }
    const message = fitErrorMessage(nodes.size, { perNode, absent: found.absent }, outcome.message);
    this.unschedulable(key, pod, message);
  }

  /**
   * Filters every candidate node (only those named by a metadata.name affinity, when the pod has one)
   * and picks the least allocated of those that pass; ties go to the first name.
   */
  private findNodes(pod: Json, want: Amounts, usage: NodeUsage, nodes: Collection) {
    const narrowed = nodeNamesFromAffinity(pod);
    const names = narrowed ? [...narrowed].filter((n) => nodes.get(n)).sort() : nodes.keys();
    const absent = narrowed
      ? { count: nodes.size - names.length, reason: REASON.narrowedByAffinity }
      : undefined;
    const filtered = new Map<string, Filtered>();
    let best: string | undefined;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (const name of names) {
      const node = nodes.get(name);
      const why = placementReason(pod, node, this.minor);
      const used = why ? undefined : usage.get(name);
      const short = used ? resourceReasons(want, used, node) : [];
      if (why || short.length > 0) {
        filtered.set(
          name,
          why
            ? { reasons: [why], resolvable: false }
            : { reasons: short, resolvable: !this.tooSmall(want, node) },
        );
        continue;
      }
      const score = leastAllocatedScore(want, used as NodeUse, node);
      if (score > bestScore) [best, bestScore] = [name, score];
    }
    return { best, filtered, absent };
  }

  /** What pods/binding does: spec.nodeName and PodScheduled=True; the kubelet takes it from there. */
  private bind(key: string, pod: Json, node: string, want: Amounts, usage: NodeUsage): void {
    const cond: JsonObject = { type: 'PodScheduled', status: 'True', lastProbeTime: null };
    cond.lastTransitionTime = rfc3339(this.cluster.clock.now());
    const status = { ...pod.status, conditions: withCondition(pod.status?.conditions, cond) };
    const next = withTopologyLabels(
      this.cluster,
      { ...pod, spec: { ...pod.spec, nodeName: node }, status },
      node,
    );
    this.cluster.internalWrite('pods', key, normalizePod(next));
    usage.add(node, want);
    this.arrival.delete(key);
  }

  private unschedulable(key: string, pod: Json, message: string): void {
    const prev = (pod.status?.conditions ?? []).find((c: Json) => c.type === 'PodScheduled');
    if (prev?.status === 'False' && prev.reason === 'Unschedulable' && prev.message === message) return;
    const cond: JsonObject = { type: 'PodScheduled', status: 'False' };
    if (this.cluster.features.observedGeneration) cond.observedGeneration = pod.metadata.generation;
    cond.lastProbeTime = null;
    cond.lastTransitionTime =
      prev?.status === 'False' ? prev.lastTransitionTime : rfc3339(this.cluster.clock.now());
    cond.reason = 'Unschedulable';
    cond.message = message;
    const status = { ...pod.status, conditions: withCondition(pod.status?.conditions, cond) };
    this.cluster.internalWrite('pods', key, normalizePod({ ...pod, status }));
    this.cluster.events.failedScheduling(pod, message);
  }

  /** The preemptor's victims: marked DisruptionTarget (reason PreemptionByScheduler), then deleted. */
  /** 1.34+ (kubernetes#131345): the pod exceeds the node's allocatable even empty; preemption cannot help. */
  private tooSmall = (want: Amounts, node: Json) =>
    this.minor >= 34 && (want.cpuM > nodeAllocatable(node).cpuM || want.mem > nodeAllocatable(node).mem);

  private evict(victims: BoundPod[], preemptor: Json, node: string): void {
    const scheduler = preemptor.spec?.schedulerName ?? DEFAULT_SCHEDULER;
    const t = rfc3339(this.cluster.clock.now());
    for (const { key, pod } of victims) {
      const cond: JsonObject = { type: 'DisruptionTarget', status: 'True' };
      if (this.cluster.features.observedGeneration) cond.observedGeneration = pod.metadata.generation;
      Object.assign(cond, {
        lastProbeTime: null,
        lastTransitionTime: t,
        reason: 'PreemptionByScheduler',
        message: `${scheduler}: preempting to accommodate a higher priority pod`,
      });
      const status = { ...pod.status, conditions: withCondition(pod.status?.conditions, cond) };
      this.cluster.internalWrite('pods', key, normalizePod({ ...pod, status }));
      this.cluster.events.preempted(pod, preemptor, node);
      this.cluster.internalDelete('pods', key);
    }
  }
}

/** The conditions with `cond` replacing the one of its type (or appended). */
function withCondition(conditions: Json[] | undefined, cond: JsonObject): Json[] {
  const list = conditions ?? [];
  const i = list.findIndex((c) => c?.type === cond.type);
  return i < 0 ? [...list, cond] : list.map((c, j) => (j === i ? cond : c));
}
