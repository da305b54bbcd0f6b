/**
 * Nodes and pods reduced to the few fields the capabilities of a cycle use, as plain numbers and strings.
 * A cluster's worth of these (~150,000 pods) stays in memory while the next pages are parsed, and every
 * object kept makes garbage collection dearer: each view is built as one literal (one shape, no
 * properties added later), quantities are integers (millicores, bytes), and nothing of the raw object is
 * retained.
 */
import { type ParseList, podOccupancy } from '../kernel/pod-requests.js';
import { observeResize, type ResizeObservation } from '../resize/index.js';
import { cpuMillis, memoryBytes } from './quantities.js';
import type {
  ContainerSpec,
  ContainerStatusLike,
  NodeObject,
  NodeSelectorTerm,
  OwnerReference,
  PodObject,
  Quantities,
  Taint,
  Toleration,
} from './wire.js';

/** Node scope's per-pod annotation; the one annotation a view keeps (read from the same list). */
export const RECOMMENDATION_ANNOTATION = 'fleetscope.io/recommendation';
/** Balloon pods (KEP-5620) carry this label with the value "true". */
export const BALLOON_LABEL = 'fleetscope.io/balloon';

const time = (s: string | undefined): number | undefined => {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isFinite(t) ? t : undefined;
};

/** A pod the scheduler has not placed: whose it is, whether it may be placed, where it may land. */
export interface WaitingPod {
  schedulerName: string;
  /** spec.schedulingGates is not empty: no scheduler considers it yet. */
  gated: boolean;
  /** Required node affinity terms (ORed); absent when there are none. */
  terms?: NodeSelectorTerm[];
  /** The scheduler reported it Unschedulable for cpu or memory (its FitError names Insufficient ...). */
  forResources: boolean;
}

type PodCondition = NonNullable<NonNullable<PodObject['status']>['conditions']>[number];

/** Pending because no node had the cpu or memory (the scheduler's FitError), not for another reason. */
export const unschedulableForResources = (conditions: readonly PodCondition[] | undefined): boolean =>
  (conditions ?? []).some(
    (c) =>
      c.type === 'PodScheduled' &&
      c.status === 'False' &&
      c.reason === 'Unschedulable' &&
      /Insufficient (cpu|memory)/.test(c.message ?? ''),
  );

function waitingPod(p: PodObject): WaitingPod {
  const terms =
    p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const req = (l: NodeSelectorTerm['matchExpressions']) =>
    (l ?? []).map((r) => ({ key: r.key ?? '', operator: r.operator ?? '', values: r.values ?? [] }));
  return {
    schedulerName: p.spec?.schedulerName || 'default-scheduler',
    gated: (p.spec?.schedulingGates ?? []).length > 0,
    ...(terms && terms.length > 0
      ? {
          terms: terms.map((t) => ({
            matchExpressions: req(t.matchExpressions),
            matchFields: req(t.matchFields),
          })),
        }
      : {}),
    forResources: unschedulableForResources(p.status?.conditions),
  };
}

export interface NodeFacts {
  name: string;
  labels: Record<string, string>;
  taints: Taint[];
  /** Allocatable and capacity, millicores and bytes (0 when unknown). */
  allocatableCpu: number;
  allocatableMemory: number;
  capacityCpu: number;
  capacityMemory: number;
  /** The Ready condition is True. */
  ready: boolean;
  /** spec.unschedulable (cordoned). */
  unschedulable: boolean;
  /** '' when the server sent none. */
  resourceVersion: string;
  /** The node object's identity: a node deleted and recreated under the same name is another node. */
  uid: string;
  createdAt?: number;
  /** spec.podPreemptionPolicy.disableResizePreemption (KEP-5836, 1.37+); absent when empty or unknown. */
  resizePreemptionOptOut?: string[];
}

export function nodeFacts(n: NodeObject): NodeFacts {
  const status = n.status;
  return {
    name: n.metadata?.name ?? '',
    labels: n.metadata?.labels ?? {},
    taints: (n.spec?.taints ?? []).map((t) => ({ key: t.key, value: t.value, effect: t.effect })),
    allocatableCpu: cpuMillis(status?.allocatable?.cpu) ?? 0,
    allocatableMemory: memoryBytes(status?.allocatable?.memory) ?? 0,
    capacityCpu: cpuMillis(status?.capacity?.cpu) ?? 0,
    capacityMemory: memoryBytes(status?.capacity?.memory) ?? 0,
    ready: (status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    unschedulable: n.spec?.unschedulable === true,
    resourceVersion: n.metadata?.resourceVersion ?? '',
    uid: n.metadata?.uid ?? '',
    createdAt: time(n.metadata?.creationTimestamp),
    ...(n.spec?.podPreemptionPolicy?.disableResizePreemption?.length
      ? { resizePreemptionOptOut: n.spec.podPreemptionPolicy.disableResizePreemption }
      : {}),
  };
}

/**
 * A container of a pod: its cpu/memory as the spec asks (req/lim), as the kubelet admitted them (alloc)
 * and as the runtime enacted them (act), and its last OOM kill. Absent values are undefined.
 */
export interface ContainerView {
  name: string;
  reqCpu?: number;
  reqMem?: number;
  limCpu?: number;
  limMem?: number;
  /** status.containerStatuses[].allocatedResources. */
  allocCpu?: number;
  allocMem?: number;
  /** status.containerStatuses[].resources.requests. */
  actCpu?: number;
  actMem?: number;
  /** status.containerStatuses[].resources.limits (what runs: a resize is complete when both match). */
  actLimCpu?: number;
  actLimMem?: number;
  /** The node reports the container's actual resources (status resources present, even if empty). */
  hasActual: boolean;
  /** The last OOM kill (finishedAt, ms, whole seconds) seen in lastState or state, if any. */
  oomAt?: number;
  /** How long the killed container had run (ms), for upstream's quick-OOM rule. */
  oomRanMs?: number;
}

export interface PodView {
  name: string;
  namespace: string;
  uid: string;
  /** spec.nodeName; '' while the pod is not scheduled. */
  node: string;
  /** spec.nodeSelector of a pod not yet scheduled (demand a pool could be grown for); absent once bound. */
  nodeSelector?: Record<string, string>;
  /** spec.tolerations of a pod not yet scheduled (which tainted nodes it could land on); absent once bound. */
  tolerations?: Toleration[];
  /** status.phase ('' when not reported). */
  phase: string;
  /** Has a deletionTimestamp. */
  terminating: boolean;
  priority?: number;
  /** spec.preemptionPolicy, as admission set it from the pod's PriorityClass. */
  preemptionPolicy?: string;
  /** A pod not bound yet: what decides whether and where the scheduler places it. */
  waiting?: WaitingPod;
  /** Labelled as a balloon pod (BALLOON_LABEL=true). */
  balloon: boolean;
  /** The controller ownerReference ('' for a field the server left out); shared by a list's pods. */
  owner?: { readonly kind: string; readonly name: string; readonly uid: string };
  resourceVersion?: string;
  generation?: number;
  createdAt?: number;
  startTime?: number;
  /** Node scope's recommendation annotation, as written. */
  annotation?: string;
  /** Regular containers only (init containers and pod overhead are not kept: see `occupancy`). */
  containers: ContainerView[];
  /**
   * What the scheduler counts for the whole pod (sidecars, init containers, pod-level resources,
   * overhead, mid-resize maxima; shared/kernel/pod-requests.ts); absent on views built by hand.
   */
  occupancy?: { cpu: number; memory: number };
  /** status.nominatedNodeName of a pod not bound yet: it holds room on that node. */
  nominated?: string;
  /** Where a resize of the pod stands (shared/resize's reading of its status). */
  resize: ResizeObservation;
  /** The kubelet holds its Deferred resize without preemption: PodResizePreemptionDisabled=True (KEP-5836). */
  resizePreemptionDisabled?: true;
  /** The containers' restartCount summed; absent when 0 (node scope's revert on harm compares it). */
  restarts?: number;
  /** A running pod whose Ready condition is False (node scope's revert on harm). */
  notReady?: true;
}

/** The same cpu and memory, by the fast quantity parsers (for observeResize's completion test). */
const sameList = (a: Quantities | undefined, b: Quantities | undefined) =>
  cpuMillis(a?.cpu) === cpuMillis(b?.cpu) && memoryBytes(a?.memory) === memoryBytes(b?.memory);

function containerView(c: ContainerSpec, s: ContainerStatusLike | undefined): ContainerView {
  const req = c.resources?.requests;
  const lim = c.resources?.limits;
  const alloc = s?.allocatedResources;
  const act = s?.resources?.requests;
  const view: ContainerView = {
    name: c.name,
    reqCpu: cpuMillis(req?.cpu),
    reqMem: memoryBytes(req?.memory),
    limCpu: cpuMillis(lim?.cpu),
    limMem: memoryBytes(lim?.memory),
    allocCpu: cpuMillis(alloc?.cpu),
    allocMem: memoryBytes(alloc?.memory),
    actCpu: cpuMillis(act?.cpu),
    actMem: memoryBytes(act?.memory),
    actLimCpu: cpuMillis(s?.resources?.limits?.cpu),
    actLimMem: memoryBytes(s?.resources?.limits?.memory),
    hasActual: s?.resources !== undefined,
    oomAt: undefined,
    oomRanMs: undefined,
  };
  for (const term of [s?.state?.terminated, s?.lastState?.terminated]) {
    if (term?.reason !== 'OOMKilled') continue;
    const at = time(term.finishedAt);
    if (at === undefined || (view.oomAt !== undefined && view.oomAt >= at)) continue;
    view.oomAt = Math.floor(at / 1000) * 1000;
    const started = time(term.startedAt);
    if (started !== undefined) view.oomRanMs = at - started;
  }
  return view;
}

export type Owner = NonNullable<PodView['owner']>;

/**
 * The controller reference, one object per controller: a list's pods share their owners' (`owners`,
 * keyed by uid), which keeps a cluster's worth of views from holding a copy of the same names per pod.
 */
function ownerOf(
  refs: readonly OwnerReference[] | undefined,
  owners?: Map<string, Owner>,
): Owner | undefined {
  const o = refs?.find((r) => r.controller);
  if (!o) return undefined;
  const uid = o.uid ?? '';
  const known = owners?.get(uid);
  if (known && known.kind === (o.kind ?? '') && known.name === (o.name ?? '')) return known;
  const owner = { kind: o.kind ?? '', name: o.name ?? '', uid };
  owners?.set(uid, owner);
  return owner;
}

/**
 * The pod's view; undefined only for an object without a name. Pass the same `owners` map for the pods
 * of one list, so that they share their controllers' owner objects.
 */
export function podView(p: PodObject, owners?: Map<string, Owner>): PodView | undefined {
  const meta = p.metadata;
  const name = meta?.name;
  if (!name) return undefined;
  const statuses = p.status?.containerStatuses ?? [];
  const resize = observeResize(p, sameList);
  return {
    name,
    namespace: meta.namespace ?? '',
    uid: meta.uid ?? '',
    node: p.spec?.nodeName ?? '',
    nodeSelector: p.spec?.nodeName ? undefined : (p.spec?.nodeSelector ?? {}),
    tolerations: p.spec?.nodeName ? undefined : (p.spec?.tolerations ?? []),
    phase: p.status?.phase ?? '',
    terminating: !!meta.deletionTimestamp,
    priority: p.spec?.priority,
    preemptionPolicy: p.spec?.preemptionPolicy,
    waiting: p.spec?.nodeName ? undefined : waitingPod(p),
    balloon: meta.labels?.[BALLOON_LABEL] === 'true',
    owner: ownerOf(meta.ownerReferences, owners),
    resourceVersion: meta.resourceVersion || undefined,
    generation: meta.generation,
    createdAt: time(meta.creationTimestamp),
    startTime: time(p.status?.startTime),
    annotation: meta.annotations?.[RECOMMENDATION_ANNOTATION],
    containers: (p.spec?.containers ?? []).map((c) =>
      containerView(
        c,
        statuses.find((x) => x.name === c.name),
      ),
    ),
    resize,
    occupancy: podOccupancy(p, parseList, resize.state === 'infeasible'),
    nominated: p.spec?.nodeName ? undefined : p.status?.nominatedNodeName || undefined,
    ...((p.status?.conditions ?? []).some(
      (c) => c.type === 'PodResizePreemptionDisabled' && c.status === 'True',
    )
      ? { resizePreemptionDisabled: true as const }
      : {}),
    ...restartsOf(statuses),
    ...(p.status?.phase === 'Running' &&
    (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'False')
      ? { notReady: true as const }
      : {}),
  };
}

function restartsOf(statuses: readonly ContainerStatusLike[]): { restarts?: number } {
  let n = 0;
  for (const s of statuses) n += s.restartCount ?? 0;
  return n > 0 ? { restarts: n } : {};
}

const parseList: ParseList = (l) => ({
  cpu: cpuMillis(l?.cpu) ?? 0,
  memory: memoryBytes(l?.memory) ?? 0,
});

/**
 * What the scheduler counts for the pod while a resize may be pending: its `occupancy` (the whole
 * formula) when the view was read from a pod; for a view built by hand, the regular containers (KEP-1287;
 * component-helpers determineContainerReqs): per container max(spec request, allocated, actual), without the spec request
 * when the resize is Infeasible, and the spec request alone while the node reports no actual resources.
 * A pod that has finished (Succeeded, Failed) holds nothing. Millicores and bytes.
 */
export function effectiveRequests(p: PodView): { cpu: number; memory: number } {
  if (p.phase === 'Succeeded' || p.phase === 'Failed') return { cpu: 0, memory: 0 };
  if (p.occupancy) return p.occupancy;
  let cpu = 0;
  let memory = 0;
  for (const c of effectiveContainerRequests(p)) {
    cpu += c.cpu;
    memory += c.memory;
  }
  return { cpu, memory };
}

/** effectiveRequests per container, in the pod's container order. */
export function effectiveContainerRequests(p: PodView): { name: string; cpu: number; memory: number }[] {
  const done = p.phase === 'Succeeded' || p.phase === 'Failed';
  const infeasible = p.resize.state === 'infeasible';
  return p.containers.map((c) => {
    if (done) return { name: c.name, cpu: 0, memory: 0 };
    if (!c.hasActual) return { name: c.name, cpu: c.reqCpu ?? 0, memory: c.reqMem ?? 0 };
    return {
      name: c.name,
      cpu: Math.max(infeasible ? 0 : (c.reqCpu ?? 0), c.allocCpu ?? 0, c.actCpu ?? 0),
      memory: Math.max(infeasible ? 0 : (c.reqMem ?? 0), c.allocMem ?? 0, c.actMem ?? 0),
    };
  });
}
