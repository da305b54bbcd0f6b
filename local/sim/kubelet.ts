/**
 * The kubelets of the simulated nodes, as a 1.33+ kubelet behaves (facts 1.5-1.6): pods bound to a
 * node start Running (admission against allocatable), resizes are admitted against node allocatable
 * (Infeasible) and against the other pods' allocated requests (Deferred, retried when capacity frees),
 * accepted resizes show PodResizeInProgress until actuated (on the next read or clock advance), and
 * containers whose load profile reaches their memory limit are OOM-killed. On 1.32 the outcome is
 * reported through status.resize instead of conditions. With `lags` (lags.ts) a kubelet admits a newly
 * bound pod, or answers a resize, some time later on the simulated clock.
 */
import { rfc3339 } from './clock.js';
import { fnv1a, hex64 } from './ids.js';
import { clone, deepEqual, type Json, type JsonObject, orderKeys } from './json.js';
import { DueQueue } from './lags.js';
import { type MemoryLimitDecrease, memoryLimitRefusal } from './memory-limit-refusal.js';
import { amountOr0, nodeAllocatable } from './nodes.js';
import { normalizePod } from './pods.js';
import { DISABLED_CONDITION, preemptionDisabledCondition } from './resize-preemption.js';
import { objectKey } from './rest.js';
import type { SimState } from './state.js';
import type { StoreEvent } from './store.js';
import {
  advanceOom,
  type ContainerLoad,
  type ContainerResources,
  containerUsage,
  mayOom,
  type OomState,
} from './workload.js';

const CONTAINER_STATUS_ORDER = [
  'name',
  'state',
  'lastState',
  'ready',
  'restartCount',
  'image',
  'imageID',
  'containerID',
  'started',
  'allocatedResources',
  'resources',
  'volumeMounts',
  'user',
];

const CRITICAL_PRIORITY = 2_000_000_000;

interface Totals {
  cpuM: number;
  mem: number;
}

/** Containers whose requests count toward the pod: regular containers and sidecar init containers. */
function countedContainers(spec: Json): Json[] {
  return [
    ...(spec?.initContainers ?? []).filter((c: Json) => c?.restartPolicy === 'Always'),
    ...(spec?.containers ?? []),
  ];
}

function totals(requests: (Json | undefined)[]): Totals {
  let cpuM = 0;
  let mem = 0;
  for (const r of requests) {
    cpuM += amountOr0(r?.cpu, 'cpu');
    mem += amountOr0(r?.memory, 'mem');
  }
  return { cpuM, mem };
}

const resourcesCache = new WeakMap<object, ContainerResources>();

/** Requests and limits of a container in millicores and bytes (cached: resources objects are shared and immutable). */
export function containerResources(c: Json): ContainerResources {
  const r = c?.resources ?? {};
  const hit = typeof r === 'object' && r !== null ? resourcesCache.get(r) : undefined;
  if (hit) return hit;
  const out = computeResources(r);
  if (typeof r === 'object' && r !== null) resourcesCache.set(r, out);
  return out;
}

function computeResources(r: Json): ContainerResources {
  return {
    cpuRequestM: r.requests?.cpu !== undefined ? amountOr0(r.requests.cpu, 'cpu') : undefined,
    cpuLimitM: r.limits?.cpu !== undefined ? amountOr0(r.limits.cpu, 'cpu') : undefined,
    memRequest: r.requests?.memory !== undefined ? amountOr0(r.requests.memory, 'mem') : undefined,
    memLimit: r.limits?.memory !== undefined ? amountOr0(r.limits.memory, 'mem') : undefined,
  };
}

/** An empty object shared by every status that needs one (never mutated). */
const EMPTY: JsonObject = Object.freeze({}) as JsonObject;

/** Parsed startedAt of shared `running` state objects. */
const startCache = new WeakMap<object, number>();

const isActive = (p: Json) => p?.status?.phase !== 'Succeeded' && p?.status?.phase !== 'Failed';

export class Kubelet {
  /** Pods whose accepted resize awaits actuation; `observed` once a read has returned them. */
  private readonly inProgress = new Map<string, { observed: boolean }>();
  private readonly deferred = new Map<string, number>();
  /** Allocated requests per pod key (container name -> requests), the kubelet's checkpoint. */
  private readonly allocated = new Map<string, Record<string, Json>>();
  private readonly oom = new Map<string, OomState>();
  private readonly oomCandidates = new Set<string>();
  /** Admissions and resize answers a lagging kubelet has not got to yet (keyed `admit|pod`, `resize|pod`). */
  private readonly late = new DueQueue<{ kind: 'admit' | 'resize'; pod: string }>();
  private lastTick: number;

  constructor(private readonly cluster: SimState) {
    this.lastTick = cluster.clock.now();
  }

  private get conditions(): boolean {
    return this.cluster.features.resizeConditions;
  }

  /** Shared pieces of statuses (stored objects are immutable, so identical parts are one object). */
  private readonly shared = new Map<string, Json>();

  private sharedPart<T>(key: string, make: () => T): T {
    let v = this.shared.get(key);
    if (v === undefined) {
      v = make();
      if (this.shared.size > 10_000) this.shared.clear();
      this.shared.set(key, v);
    }
    return v as T;
  }

  /** The status a kubelet reports for a freshly started pod. */
  runningStatus(pod: Json, node: Json, startedAt: number): JsonObject {
    const t = rfc3339(startedAt);
    const key = objectKey(pod.metadata.namespace, pod.metadata.name);
    const uidHash = fnv1a(String(pod.metadata.uid), this.cluster.seedHash);
    const hostIP = node?.status?.addresses?.find((a: Json) => a.type === 'InternalIP')?.address ?? '10.0.0.1';
    const podIP = `10.${100 + (uidHash % 100)}.${(uidHash >>> 8) & 255}.${(uidHash >>> 16) & 255}`;
    const status: JsonObject = {};
    if (this.cluster.features.observedGeneration) status.observedGeneration = pod.metadata.generation ?? 1;
    status.phase = 'Running';
    status.conditions = this.sharedPart(`conditions|${t}`, () =>
      ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(
        (type) => ({
          type,
          status: 'True',
          lastProbeTime: null,
          lastTransitionTime: t,
        }),
      ),
    );
    status.hostIP = hostIP;
    status.hostIPs = [{ ip: hostIP }];
    status.podIP = podIP;
    status.podIPs = [{ ip: podIP }];
    status.startTime = t;
    status.containerStatuses = (pod.spec.containers ?? []).map((c: Json, i: number) =>
      this.containerStatus(c, i, uidHash, t, 0, undefined),
    );
    status.qosClass = pod.status?.qosClass;
    this.allocated.delete(key);
    return status;
  }

  private containerStatus(
    c: Json,
    i: number,
    uidHash: number,
    startedAt: string,
    restarts: number,
    lastKill?: { at: string; started: string },
  ): JsonObject {
    const image = String(c.image);
    const s: JsonObject = {
      name: c.name,
      state: this.sharedPart(`state|${startedAt}`, () => ({ running: { startedAt } })),
      lastState: lastKill
        ? {
            terminated: {
              exitCode: 137,
              reason: 'OOMKilled',
              startedAt: lastKill.started,
              finishedAt: lastKill.at,
              containerID: `containerd://${hex64(uidHash, i, restarts - 1)}`,
            },
          }
        : EMPTY,
      ready: true,
      restartCount: restarts,
      image,
      imageID: this.sharedPart(
        `image|${image}`,
        () => `${image.split(':')[0]}@sha256:${hex64(fnv1a(image), 0, 0)}`,
      ),
      containerID: `containerd://${hex64(uidHash, i, restarts)}`,
      started: true,
    };
    if (this.conditions) s.allocatedResources = c.resources?.requests ?? EMPTY;
    s.resources = c.resources ?? EMPTY;
    return s;
  }

  /** Whether a pod should be started by this kubelet (bound, Pending, not yet reported). */
  private needsStart(pod: Json): boolean {
    return (
      !!pod?.spec?.nodeName &&
      pod.status?.phase === 'Pending' &&
      !pod.status?.containerStatuses &&
      !pod.metadata?.deletionTimestamp
    );
  }

  onEvent(ev: StoreEvent): void {
    if (ev.collection === 'pods') {
      const key = ev.key;
      if (ev.type === 'DELETED') {
        this.forget(key);
        const node = ev.prev?.spec?.nodeName;
        if (node) this.retryDeferred(node);
        return;
      }
      const pod = ev.object;
      if (this.needsStart(pod)) {
        this.soon('admit', key, this.cluster.spec.lags?.admitMs);
        return;
      }
      // A pod that finished or was evicted no longer holds its allocation.
      if (ev.type === 'MODIFIED' && !isActive(pod) && isActive(ev.prev) && pod.spec?.nodeName) {
        this.forget(key);
        this.retryDeferred(pod.spec.nodeName);
        return;
      }
      if (ev.type === 'MODIFIED' && pod.status?.phase === 'Running' && resourcesChanged(ev.prev, pod))
        this.soon('resize', key, this.cluster.spec.lags?.resizeMs);
      return;
    }
    if (ev.collection === 'nodes' && ev.type !== 'DELETED') {
      if (!deepEqual(ev.prev?.status?.allocatable, ev.object?.status?.allocatable))
        this.retryDeferred(ev.object.metadata.name);
    }
  }

  /** Admits a pod or answers its resize now, or `lagMs` later on the simulated clock. */
  private soon(kind: 'admit' | 'resize', key: string, lagMs = 0): void {
    if (lagMs <= 0 && !this.late.has(`${kind}|${key}`)) {
      if (kind === 'admit') this.start(key);
      else this.resize(key);
      return;
    }
    this.late.add(`${kind}|${key}`, this.cluster.clock.now() + lagMs, { kind, pod: key });
  }

  /** The lagging kubelet's work that is due: admissions and resize answers, in the order they came. */
  private catchUp(now: number): void {
    for (const { item } of this.late.take(now)) {
      if (item.kind === 'resize') this.resize(item.pod);
      else if (this.needsStart(this.cluster.store.get('pods', item.pod))) this.start(item.pod);
    }
  }

  private forget(key: string): void {
    this.late.delete(`admit|${key}`);
    this.late.delete(`resize|${key}`);
    this.inProgress.delete(key);
    this.deferred.delete(key);
    this.allocated.delete(key);
    this.oomCandidates.delete(key);
    for (const k of this.oom.keys()) if (k.startsWith(`${key}|`)) this.oom.delete(k);
  }

  /** Admits and starts a pod bound to this node (OutOfcpu/OutOfmemory when it does not fit). */
  private start(key: string): void {
    const pod = this.cluster.store.get('pods', key);
    const node = this.cluster.store.get('nodes', pod.spec.nodeName);
    if (!node) return;
    const now = this.cluster.clock.now();
    const want = totals(countedContainers(pod.spec).map((c: Json) => c.resources?.requests));
    const alloc = nodeAllocatable(node);
    const used = this.usedOnNode(pod.spec.nodeName, key);
    const short =
      want.cpuM > 0 && used.cpuM + want.cpuM > alloc.cpuM
        ? 'cpu'
        : want.mem > 0 && used.mem + want.mem > alloc.mem
          ? 'memory'
          : undefined;
    let status: JsonObject;
    if (short && (pod.spec.priority ?? 0) < CRITICAL_PRIORITY) {
      const [r, u, c] =
        short === 'cpu' ? [want.cpuM, used.cpuM, alloc.cpuM] : [want.mem, used.mem, alloc.mem];
      status = {
        phase: 'Failed',
        message: `Pod was rejected: Node didn't have enough resource: ${short}, requested: ${r}, used: ${u}, capacity: ${c}`,
        reason: `OutOf${short}`,
        startTime: rfc3339(now),
        qosClass: pod.status?.qosClass,
      };
    } else {
      if (short) this.preempt(pod, key, want);
      status = this.runningStatus(pod, node, now);
    }
    this.cluster.internalWrite('pods', key, normalizePod({ ...pod, status }));
    this.trackOom(key);
  }

  /** Sum of the allocated requests of the other active pods on a node (the kubelet's admission view). */
  private usedOnNode(nodeName: string, exceptKey?: string): Totals {
    const pods = this.cluster.store.collection('pods');
    let cpuM = 0;
    let mem = 0;
    for (const k of pods.indexed(nodeName)) {
      if (k === exceptKey) continue;
      const p = pods.get(k);
      if (!isActive(p) || p.status?.phase === 'Pending') continue;
      const t = totals(Object.values(this.allocatedOf(k, p)));
      cpuM += t.cpuM;
      mem += t.mem;
    }
    return { cpuM, mem };
  }

  /** Allocated requests by container: the checkpoint, else what the pod was started with. */
  private allocatedOf(key: string, pod: Json): Record<string, Json> {
    const a = this.allocated.get(key);
    if (a) return a;
    const out: Record<string, Json> = {};
    const statuses: Json[] = pod.status?.containerStatuses ?? [];
    for (const c of countedContainers(pod.spec)) {
      const st = statuses.find((s) => s.name === c.name);
      out[c.name] = st?.allocatedResources ?? st?.resources?.requests ?? c.resources?.requests ?? {};
    }
    return out;
  }

  /** A resize request reached this kubelet (spec resources changed). */
  resize(key: string): void {
    const pod = this.cluster.store.get('pods', key);
    if (pod?.status?.phase !== 'Running') return;
    const node = this.cluster.store.get('nodes', pod.spec.nodeName);
    if (!node) return;
    const desired: Record<string, Json> = {};
    for (const c of countedContainers(pod.spec)) desired[c.name] = c.resources?.requests ?? {};
    const allocated = this.allocatedOf(key, pod);
    const now = this.cluster.clock.now();
    if (deepEqual(desired, allocated)) {
      // Requests already admitted (e.g. a limits-only change, or a revert of a pending resize).
      this.deferred.delete(key);
      if (actualDiffers(pod)) this.accept(key, pod, desired, now);
      else this.setPending(key, pod, undefined, now);
      return;
    }
    const want = totals(Object.values(desired));
    const alloc = nodeAllocatable(node);
    if (want.cpuM > alloc.cpuM || want.mem > alloc.mem) {
      this.refuseInfeasible(key, pod, want, alloc, now);
      return;
    }
    const used = this.roomFor(pod, key, want, alloc);
    if (used.cpuM + want.cpuM > alloc.cpuM || used.mem + want.mem > alloc.mem) {
      this.defer(key, want, used, alloc, now);
      return;
    }
    this.deferred.delete(key);
    const shrinking =
      want.cpuM < totals(Object.values(allocated)).cpuM || want.mem < totals(Object.values(allocated)).mem;
    this.accept(key, this.cluster.store.get('pods', key), desired, now);
    if (shrinking) this.retryDeferred(pod.spec.nodeName);
  }

  /** More than the whole node: Infeasible, never retried for this request. */
  private refuseInfeasible(key: string, pod: Json, want: Totals, alloc: Totals, now: number): void {
    const cpu = want.cpuM > alloc.cpuM;
    this.deferred.delete(key);
    this.setPending(
      key,
      pod,
      {
        reason: 'Infeasible',
        message: `Node didn't have enough capacity: ${cpu ? 'cpu' : 'memory'}, requested: ${cpu ? want.cpuM : want.mem}, capacity: ${cpu ? alloc.cpuM : alloc.mem}`,
      },
      now,
    );
  }

  /**
   * What the node's other pods use; a critical pod that does not fit first preempts lower-priority ones,
   * unless the node opted out of resize preemption (1.37, KEP-5836: the kubelet honours it too).
   */
  private roomFor(pod: Json, key: string, want: Totals, alloc: Totals): Totals {
    const used = this.usedOnNode(pod.spec.nodeName, key);
    const fits = used.cpuM + want.cpuM <= alloc.cpuM && used.mem + want.mem <= alloc.mem;
    if (fits || (pod.spec.priority ?? 0) < CRITICAL_PRIORITY) return used;
    const node = this.cluster.store.get('nodes', pod.spec.nodeName);
    if (preemptionDisabledCondition(node, this.cluster.features)) return used;
    this.preempt(pod, key, want);
    return this.usedOnNode(pod.spec.nodeName, key);
  }

  /** Fits the node but not now: Deferred (since the first time), retried when room is made. */
  private defer(key: string, want: Totals, used: Totals, alloc: Totals, now: number): void {
    const cpu = used.cpuM + want.cpuM > alloc.cpuM;
    if (!this.deferred.has(key)) this.deferred.set(key, now);
    this.setPending(
      key,
      this.cluster.store.get('pods', key),
      {
        reason: 'Deferred',
        message: `Node didn't have enough resource: ${cpu ? 'cpu' : 'memory'}, requested: ${cpu ? want.cpuM : want.mem}, used: ${cpu ? used.cpuM : used.mem}, capacity: ${cpu ? alloc.cpuM : alloc.mem}`,
      },
      now,
    );
  }

  /** Kubelet-side preemption for critical pods: evict lower-priority pods, BestEffort first. */
  private preempt(pod: Json, key: string, want: Totals): void {
    const nodeName = pod.spec.nodeName;
    const alloc = nodeAllocatable(this.cluster.store.get('nodes', nodeName));
    const prio = pod.spec.priority ?? 0;
    const pods = this.cluster.store.collection('pods');
    const rank: Record<string, number> = { BestEffort: 0, Burstable: 1, Guaranteed: 2 };
    const victims = [...pods.indexed(nodeName)]
      .filter((k) => k !== key)
      .map((k) => ({ k, p: pods.get(k) }))
      .filter(
        ({ p }) =>
          isActive(p) && ((p.spec.priority ?? 0) < CRITICAL_PRIORITY || (p.spec.priority ?? 0) < prio),
      )
      .sort(
        (a, b) =>
          (rank[a.p.status?.qosClass] ?? 1) - (rank[b.p.status?.qosClass] ?? 1) ||
          (a.p.spec.priority ?? 0) - (b.p.spec.priority ?? 0),
      );
    for (const { k, p } of victims) {
      const used = this.usedOnNode(nodeName, key);
      if (used.cpuM + want.cpuM <= alloc.cpuM && used.mem + want.mem <= alloc.mem) return;
      const t = rfc3339(this.cluster.clock.now());
      const status = {
        ...p.status,
        phase: 'Failed',
        message: 'Preempted in order to admit critical pod',
        reason: 'Preempting',
        containerStatuses: (p.status?.containerStatuses ?? []).map((s: Json) => ({
          ...s,
          state: {
            terminated: {
              exitCode: 137,
              reason: 'Error',
              startedAt: s.state?.running?.startedAt,
              finishedAt: t,
              containerID: s.containerID,
            },
          },
          ready: false,
          started: false,
        })),
      };
      this.cluster.internalWrite('pods', k, normalizePod({ ...p, status }));
      this.forget(k);
    }
  }

  private setPending(
    key: string,
    pod: Json,
    pending: { reason: string; message: string } | undefined,
    now: number,
  ): void {
    const status: JsonObject = { ...pod.status };
    const t = rfc3339(now);
    if (this.conditions) {
      let conds: Json[] = (status.conditions ?? []).filter(
        (c: Json) => c.type !== 'PodResizePending' && c.type !== DISABLED_CONDITION,
      );
      if (pending) {
        const prev = (pod.status.conditions ?? []).find((c: Json) => c.type === 'PodResizePending');
        const cond: JsonObject = { type: 'PodResizePending', status: 'True' };
        if (this.cluster.features.observedGeneration) cond.observedGeneration = pod.metadata.generation;
        Object.assign(cond, {
          lastProbeTime: null,
          lastTransitionTime: prev?.reason === pending.reason ? prev.lastTransitionTime : t,
          reason: pending.reason,
          message: pending.message,
        });
        conds = [...conds, cond];
        // 1.37 (KEP-5836): a Deferred resize on a node that opted out of resize preemption says so.
        const node = this.cluster.store.get('nodes', pod.spec.nodeName);
        const off = pending.reason === 'Deferred' && preemptionDisabledCondition(node, this.cluster.features);
        if (off)
          conds.push({
            type: off.type,
            status: off.status,
            lastProbeTime: null,
            lastTransitionTime: cond.lastTransitionTime,
            reason: off.reason,
            message: off.message,
          });
      }
      status.conditions = conds;
    } else if (pending) {
      status.resize = pending.reason;
    } else if (!this.inProgress.has(key)) {
      delete status.resize;
    }
    if (this.cluster.features.observedGeneration) status.observedGeneration = pod.metadata.generation;
    const next = normalizePod({ ...pod, status });
    // The status manager writes a pod's status only when it changed (isPodStatusByKubeletEqual): a
    // resize retried and still Deferred for the same reason is no new resourceVersion, no watch event.
    if (deepEqual(next.status, pod.status)) return;
    this.cluster.internalWrite('pods', key, next);
  }

  private accept(key: string, pod: Json, desired: Record<string, Json>, now: number): void {
    this.allocated.set(key, clone(desired));
    const status: JsonObject = { ...pod.status };
    const t = rfc3339(now);
    if (this.conditions) {
      const conds: Json[] = (status.conditions ?? []).filter(
        (c: Json) => c.type !== 'PodResizePending' && c.type !== 'PodResizeInProgress',
      );
      const cond: JsonObject = { type: 'PodResizeInProgress', status: 'True' };
      if (this.cluster.features.observedGeneration) cond.observedGeneration = pod.metadata.generation;
      Object.assign(cond, { lastProbeTime: null, lastTransitionTime: t });
      status.conditions = [...conds, cond];
      status.containerStatuses = (status.containerStatuses ?? []).map((s: Json) =>
        desired[s.name]
          ? orderKeys({ ...s, allocatedResources: clone(desired[s.name]) }, CONTAINER_STATUS_ORDER)
          : s,
      );
    } else {
      status.resize = 'InProgress';
    }
    if (this.cluster.features.observedGeneration) status.observedGeneration = pod.metadata.generation;
    this.cluster.internalWrite('pods', key, normalizePod({ ...pod, status }));
    this.inProgress.set(key, { observed: false });
  }

  /** Actuation done: status resources follow the spec and PodResizeInProgress goes away. */
  private complete(key: string): void {
    this.inProgress.delete(key);
    const pod = this.cluster.store.get('pods', key);
    if (pod?.status?.phase !== 'Running') return;
    const refused = this.conditions ? memoryLimitRefusal(this.memoryLimitDecreases(key, pod)) : undefined;
    if (refused) {
      // Not actuated: tried again at each tick, done once usage is below the new limit.
      this.inProgress.set(key, { observed: false });
      this.actuationError(key, pod, refused);
      return;
    }
    const status: JsonObject = { ...pod.status };
    const byName = new Map<string, Json>();
    for (const c of [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])])
      byName.set(c.name, c);
    status.containerStatuses = (status.containerStatuses ?? []).map((s: Json) => {
      const c = byName.get(s.name);
      return c ? orderKeys({ ...s, resources: clone(c.resources ?? {}) }, CONTAINER_STATUS_ORDER) : s;
    });
    if (this.conditions)
      status.conditions = (status.conditions ?? []).filter((c: Json) => c.type !== 'PodResizeInProgress');
    else if (status.resize === 'InProgress') delete status.resize;
    this.cluster.internalWrite('pods', key, normalizePod({ ...pod, status }));
    this.trackOom(key);
    this.retryDeferred(pod.spec.nodeName);
  }

  /** The containers whose memory limit the spec lowers below what runs, with their usage now. */
  private memoryLimitDecreases(key: string, pod: Json): MemoryLimitDecrease[] {
    const loads = this.cluster.containerLoads(pod);
    const now = this.cluster.clock.now();
    const out: MemoryLimitDecrease[] = [];
    for (const c of pod.spec.containers ?? []) {
      const running = (pod.status.containerStatuses ?? []).find((s: Json) => s.name === c.name)?.resources;
      const limit = containerResources(c).memLimit;
      const runs = running ? containerResources({ resources: running }) : undefined;
      const before = runs?.memLimit;
      const l = loads.get(c.name);
      if (!l || limit === undefined || before === undefined || limit >= before) continue;
      // The working set as metrics-server reports it (the same noise key as local/sim/metrics.ts).
      const h = fnv1a(c.name, fnv1a(key, this.cluster.seedHash));
      const oom = this.oomState(key, c.name, pod);
      const usage = containerUsage(l, runs as ContainerResources, now, oom.lastStartMs, h).memoryBytes;
      out.push({ container: c.name, limit, usage });
    }
    return out;
  }

  /** PodResizeInProgress with reason Error: written only when it changed (the status manager's rule). */
  private actuationError(key: string, pod: Json, message: string): void {
    const conds: Json[] = (pod.status.conditions ?? []).filter((c: Json) => c.type !== 'PodResizeInProgress');
    const prev = (pod.status.conditions ?? []).find((c: Json) => c.type === 'PodResizeInProgress');
    const cond: JsonObject = { type: 'PodResizeInProgress', status: 'True' };
    if (this.cluster.features.observedGeneration) cond.observedGeneration = pod.metadata.generation;
    Object.assign(cond, {
      lastProbeTime: null,
      lastTransitionTime:
        prev?.reason === 'Error' ? prev.lastTransitionTime : rfc3339(this.cluster.clock.now()),
      reason: 'Error',
      message,
    });
    const next = normalizePod({ ...pod, status: { ...pod.status, conditions: [...conds, cond] } });
    if (!deepEqual(next.status, pod.status)) this.cluster.internalWrite('pods', key, next);
  }

  /**
   * Deferred resizes on a node, retried in the 1.34+ kubelet's order (sortPendingResizes): resizes that
   * do not increase requests first, then higher priority, then Guaranteed before Burstable, then the
   * longest pending. A resize that still does not fit stays Deferred and the next one is tried.
   */
  retryDeferred(nodeName: string): void {
    const pods = this.cluster.store.collection('pods');
    const keys = [...this.deferred.keys()].filter((k) => pods.get(k)?.spec?.nodeName === nodeName);
    const grows = new Map(keys.map((k) => [k, this.increasesRequests(k, pods.get(k)) ? 1 : 0]));
    const guaranteed = (k: string) => (pods.get(k)?.status?.qosClass === 'Guaranteed' ? 1 : 0);
    keys.sort(
      (a, b) =>
        (grows.get(a) ?? 0) - (grows.get(b) ?? 0) ||
        (pods.get(b)?.spec?.priority ?? 0) - (pods.get(a)?.spec?.priority ?? 0) ||
        guaranteed(b) - guaranteed(a) ||
        (this.deferred.get(a) ?? 0) - (this.deferred.get(b) ?? 0),
    );
    for (const k of keys) if (this.deferred.has(k)) this.resize(k);
  }

  /** Whether the pod's desired requests exceed what is allocated in cpu or memory. */
  private increasesRequests(key: string, pod: Json): boolean {
    const want = totals(countedContainers(pod?.spec).map((c: Json) => c.resources?.requests));
    const have = totals(Object.values(this.allocatedOf(key, pod)));
    return want.cpuM > have.cpuM || want.mem > have.mem;
  }

  /** A read returned the pods: their in-progress resizes complete before the next request. */
  markObserved(): void {
    for (const v of this.inProgress.values()) v.observed = true;
  }

  beforeRequest(): void {
    for (const [k, v] of [...this.inProgress]) if (v.observed) this.complete(k);
  }

  /** The simulated clock moved: actuate pending resizes, retry deferred ones, run OOM kills. */
  onClock(now: number): void {
    this.catchUp(now);
    for (const k of [...this.inProgress.keys()]) this.complete(k);
    const nodes = new Set<string>();
    const pods = this.cluster.store.collection('pods');
    for (const k of this.deferred.keys()) {
      const n = pods.get(k)?.spec?.nodeName;
      if (n) nodes.add(n);
    }
    for (const n of nodes) this.retryDeferred(n);
    if (now > this.lastTick) this.oomTick(this.lastTick, now);
    this.lastTick = Math.max(this.lastTick, now);
  }

  /** Registers a running pod for OOM simulation when one of its containers can ever be killed. */
  trackOom(key: string): void {
    const pod = this.cluster.store.get('pods', key);
    if (pod?.status?.phase !== 'Running') return;
    const loads = this.cluster.containerLoads(pod);
    const risky = (pod.spec.containers ?? []).some((c: Json) => {
      const l = loads.get(c.name);
      return l && mayOom(l, containerResources(c));
    });
    if (risky) this.oomCandidates.add(key);
    else this.oomCandidates.delete(key);
  }

  /** Restart count and last start of a container, for metrics (usage restarts at zero after a kill). */
  oomState(key: string, container: string, pod: Json): OomState {
    const s = this.oom.get(`${key}|${container}`);
    if (s) return s;
    const st = (pod.status?.containerStatuses ?? []).find((x: Json) => x.name === container);
    const running = st?.state?.running;
    let started = running ? startCache.get(running) : undefined;
    if (started === undefined) {
      started = Date.parse(running?.startedAt ?? pod.status?.startTime ?? pod.metadata.creationTimestamp);
      if (running) startCache.set(running, started);
    }
    return { restartCount: st?.restartCount ?? 0, lastStartMs: Number.isFinite(started) ? started : 0 };
  }

  private oomTick(from: number, to: number): void {
    const pods = this.cluster.store.collection('pods');
    for (const key of [...this.oomCandidates]) {
      const pod = pods.get(key);
      if (pod?.status?.phase !== 'Running') {
        this.oomCandidates.delete(key);
        continue;
      }
      const loads = this.cluster.containerLoads(pod);
      const nodeIndex = this.cluster.nodeIndex(pod.spec.nodeName);
      let changed = false;
      const statuses = (pod.status.containerStatuses ?? []).map((s: Json) => {
        const c = (pod.spec.containers ?? []).find((x: Json) => x.name === s.name);
        const l: ContainerLoad | undefined = loads.get(s.name);
        if (!c || !l) return s;
        const res = containerResources(c);
        const before = this.oomState(key, s.name, pod);
        const after = advanceOom(l, res, before, from, to, nodeIndex, s.name);
        if (after === before) return s;
        this.oom.set(`${key}|${s.name}`, after);
        if (after.restartCount === before.restartCount) return s;
        changed = true;
        const uidHash = fnv1a(String(pod.metadata.uid), this.cluster.seedHash);
        const idx = (pod.spec.containers ?? []).indexOf(c);
        const fresh = this.containerStatus(c, idx, uidHash, rfc3339(after.lastStartMs), after.restartCount, {
          at: rfc3339(after.lastKillMs ?? after.lastStartMs),
          started: rfc3339(before.lastStartMs),
        });
        return orderKeys(
          { ...fresh, allocatedResources: s.allocatedResources, resources: s.resources },
          CONTAINER_STATUS_ORDER,
        );
      });
      if (changed)
        this.cluster.internalWrite(
          'pods',
          key,
          normalizePod({ ...pod, status: { ...pod.status, containerStatuses: statuses } }),
        );
    }
  }
}

function resourcesChanged(prev: Json, pod: Json): boolean {
  if (!prev) return false;
  const pick = (p: Json) => countedContainers(p.spec).map((c: Json) => c.resources);
  return !deepEqual(pick(prev), pick(pod));
}

function actualDiffers(pod: Json): boolean {
  const statuses: Json[] = pod.status?.containerStatuses ?? [];
  return (pod.spec.containers ?? []).some((c: Json) => {
    const s = statuses.find((x) => x.name === c.name);
    return s && !deepEqual(s.resources ?? {}, c.resources ?? {});
  });
}
