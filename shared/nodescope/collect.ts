/**
 * Collection: what a cycle reads from a cluster, with a number of requests that grows with list pages,
 * never with nodes (KEP-4943's stated risk is one metrics query per node). Per cycle:
 *
 *   GET  the VerticalPodAutoscaler CRD                      1   (is it installed, does it carry scope)
 *   LIST VerticalPodAutoscalers, all namespaces              pages of 1,000
 *   LIST DaemonSets, all namespaces                          pages of 1,000
 *   LIST nodes                                               pages of 1,000
 *   per node-scoped DaemonSet:
 *     LIST its pods (namespace + label selector)             pages of 1,000
 *     LIST its PodMetrics (namespace + label selector)       1   (metrics-server ignores limit)
 *
 * PodMetrics carry no node name, so pods are mapped to nodes through the pod list (spec.nodeName).
 * Only a few fields of each object are kept; pages are dropped as they are read.
 */
import { ClusterAccessError } from '../k8s/errors.js';
import type { RawReader } from '../k8s/raw-reader.js';
import { VPA_CRD_NAME, VPA_GROUP } from '../kernel/crds/vpa.js';
import { formatCpu, formatMemory } from '../kernel/quantity.js';
import type { Bytes, Millicores } from '../kernel/units.js';
import {
  observeResize,
  type PodConditionLike,
  type PodLike,
  type ResizeObservation,
} from '../resize/index.js';
import type { NodeFacts } from './eligibility.js';
import type {
  ContainerSpec,
  DaemonSetObject,
  NodeObject,
  PodMetricsObject,
  PodObject,
  VpaObject,
} from './k8s-types.js';
import { cpuMillis, memoryBytes } from './quantities.js';
import type { NodeScopeTarget } from './targets.js';

export const RECOMMENDATION_ANNOTATION = 'fleetscope.io/recommendation';

export type CrdState = 'absent' | 'stock' | 'scoped';
export type MetricsState = 'available' | 'absent' | 'unavailable';

interface CrdObject {
  spec?: {
    versions?: {
      name?: string;
      served?: boolean;
      schema?: { openAPIV3Schema?: { properties?: { spec?: { properties?: Record<string, unknown> } } } };
    }[];
  };
}

/** Whether the VPA CRD is installed and whether its v1 schema carries spec.scope. */
export async function readCrd(reader: RawReader): Promise<CrdState> {
  try {
    const crd = await reader.get<CrdObject>(
      'get VPA CRD',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${VPA_CRD_NAME}`,
    );
    const v1 = crd.spec?.versions?.find((v) => v.name === 'v1' && v.served !== false);
    if (!v1) return 'absent';
    return v1.schema?.openAPIV3Schema?.properties?.spec?.properties?.scope ? 'scoped' : 'stock';
  } catch (err) {
    if (err instanceof ClusterAccessError && err.status === 404) return 'absent';
    throw err;
  }
}

export async function listVpas(reader: RawReader, pageSize: number): Promise<VpaObject[]> {
  const out: VpaObject[] = [];
  await reader.list<VpaObject>(
    'list VPAs',
    `/apis/${VPA_GROUP}/v1/verticalpodautoscalers`,
    {},
    (items) => out.push(...items),
    { pageSize, onRestart: () => out.splice(0) },
  );
  return out;
}

export async function listDaemonSets(reader: RawReader, pageSize: number): Promise<DaemonSetObject[]> {
  const out: DaemonSetObject[] = [];
  await reader.list<DaemonSetObject>(
    'list DaemonSets',
    '/apis/apps/v1/daemonsets',
    {},
    (items) => {
      // Keep what targets need; the status and managedFields are dropped with the page.
      for (const d of items) out.push({ metadata: d.metadata, spec: d.spec });
    },
    { pageSize, onRestart: () => out.splice(0) },
  );
  return out;
}

export function nodeFacts(n: NodeObject): NodeFacts {
  return {
    name: n.metadata?.name ?? '',
    labels: n.metadata?.labels ?? {},
    taints: (n.spec?.taints ?? []).map((t) => ({ key: t.key, value: t.value, effect: t.effect })),
    allocatableCpu: cpuMillis(n.status?.allocatable?.cpu) ?? 0,
    allocatableMemory: memoryBytes(n.status?.allocatable?.memory) ?? 0,
  };
}

export async function listNodes(reader: RawReader, pageSize: number): Promise<NodeFacts[]> {
  const out: NodeFacts[] = [];
  await reader.list<NodeObject>(
    'list nodes',
    '/api/v1/nodes',
    {},
    (items) => out.push(...items.map(nodeFacts)),
    {
      pageSize,
      onRestart: () => out.splice(0),
    },
  );
  return out;
}

/** A container of a DaemonSet pod: its cpu/memory (millicores, bytes) and its last OOM kill. */
export interface ContainerView {
  name: string;
  reqCpu?: number;
  reqMem?: number;
  limCpu?: number;
  limMem?: number;
  /** The memory request the kubelet runs with (status resources when reported, else spec): OOM bumps use it. */
  memoryRequest?: number;
  /** The last OOM kill (finishedAt, ms) seen in lastState or state, if any. */
  oomAt?: number;
  /** How long the killed container had run (ms), for upstream's quick-OOM rule. */
  oomRanMs?: number;
}

/**
 * The parts of a DaemonSet pod a cycle uses, as plain numbers and strings: thousands of these stay in
 * memory while the next pages are parsed, and every object kept makes garbage collection dearer.
 */
export interface PodView {
  name: string;
  namespace: string;
  uid: string;
  node: string;
  resourceVersion?: string;
  generation?: number;
  startTime?: number;
  annotation?: string;
  containers: ContainerView[];
  /** Where a resize of the pod stands (shared/resize's reading of its status). */
  resize: ResizeObservation;
}

export const requestOf = (c: ContainerView, r: 'cpu' | 'memory') => (r === 'cpu' ? c.reqCpu : c.reqMem);
export const limitOf = (c: ContainerView, r: 'cpu' | 'memory') => (r === 'cpu' ? c.limCpu : c.limMem);

const time = (s: string | undefined): number | undefined => {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isFinite(t) ? t : undefined;
};

type Quantities = { [r: string]: string | undefined } | undefined;

/** The same cpu and memory, by the fast quantity parsers (for observeResize's completion test). */
const sameList = (a: Quantities, b: Quantities) =>
  cpuMillis(a?.cpu) === cpuMillis(b?.cpu) && memoryBytes(a?.memory) === memoryBytes(b?.memory);

export function podView(p: PodObject): PodView | undefined {
  const node = p.spec?.nodeName;
  const name = p.metadata?.name;
  if (!node || !name) return undefined;
  const statuses = p.status?.containerStatuses ?? [];
  const containers: ContainerView[] = (p.spec?.containers ?? []).map((c: ContainerSpec) => {
    const s = statuses.find((x) => x.name === c.name);
    const view: ContainerView = { name: c.name };
    const req = c.resources?.requests;
    const lim = c.resources?.limits;
    const reqCpu = cpuMillis(req?.cpu);
    const reqMem = memoryBytes(req?.memory);
    const limCpu = cpuMillis(lim?.cpu);
    const limMem = memoryBytes(lim?.memory);
    if (reqCpu !== undefined) view.reqCpu = reqCpu;
    if (reqMem !== undefined) view.reqMem = reqMem;
    if (limCpu !== undefined) view.limCpu = limCpu;
    if (limMem !== undefined) view.limMem = limMem;
    const mem =
      s?.resources?.requests?.memory !== undefined ? memoryBytes(s.resources.requests.memory) : reqMem;
    if (mem !== undefined) view.memoryRequest = mem;
    for (const term of [s?.state?.terminated, s?.lastState?.terminated]) {
      if (term?.reason !== 'OOMKilled') continue;
      const at = time(term.finishedAt);
      if (at === undefined || (view.oomAt !== undefined && view.oomAt >= at)) continue;
      view.oomAt = Math.floor(at / 1000) * 1000;
      const started = time(term.startedAt);
      if (started !== undefined) view.oomRanMs = at - started;
    }
    return view;
  });
  const view: PodView = {
    name,
    namespace: p.metadata?.namespace ?? '',
    uid: p.metadata?.uid ?? '',
    node,
    containers,
    resize: observeResize(p, sameList),
  };
  if (p.metadata?.resourceVersion) view.resourceVersion = p.metadata.resourceVersion;
  if (p.metadata?.generation !== undefined) view.generation = p.metadata.generation;
  const start = time(p.status?.startTime);
  if (start !== undefined) view.startTime = start;
  const ann = p.metadata?.annotations?.[RECOMMENDATION_ANNOTATION];
  if (ann !== undefined) view.annotation = ann;
  return view;
}

function quantities(cpu: number | undefined, memory: number | undefined) {
  const out: { cpu?: string; memory?: string } = {};
  if (cpu !== undefined) out.cpu = formatCpu(cpu as Millicores);
  if (memory !== undefined) out.memory = formatMemory(memory as Bytes);
  return out;
}

/**
 * The pod as the resize mechanism reads it, rebuilt from the view: cpu/memory of each container, and
 * its resize state as the condition that says it (observeResize of the result equals view.resize).
 */
export function podLike(v: PodView): PodLike {
  const r = v.resize;
  const conditions: PodConditionLike[] = [];
  if (r.state === 'deferred' || r.state === 'infeasible')
    conditions.push({
      type: 'PodResizePending',
      status: 'True',
      reason: r.state === 'infeasible' ? 'Infeasible' : (r.reason ?? 'Deferred'),
      ...(r.message !== undefined ? { message: r.message } : {}),
    });
  else if (r.state === 'error')
    conditions.push({
      type: 'PodResizeInProgress',
      status: 'True',
      reason: 'Error',
      ...(r.message !== undefined ? { message: r.message } : {}),
    });
  else if (r.state === 'in-progress') conditions.push({ type: 'PodResizeInProgress', status: 'True' });
  return {
    metadata: {
      name: v.name,
      namespace: v.namespace,
      uid: v.uid,
      ...(v.resourceVersion ? { resourceVersion: v.resourceVersion } : {}),
      ...(v.generation !== undefined ? { generation: v.generation } : {}),
    },
    spec: {
      nodeName: v.node,
      containers: v.containers.map((c) => ({
        name: c.name,
        resources: { requests: quantities(c.reqCpu, c.reqMem), limits: quantities(c.limCpu, c.limMem) },
      })),
    },
    status: { phase: 'Running', conditions },
  };
}

const ownedBy = (p: PodObject, t: NodeScopeTarget) =>
  (p.metadata?.ownerReferences ?? []).some(
    (o) =>
      o.controller &&
      o.kind === 'DaemonSet' &&
      o.name === t.ds.name &&
      (!t.ds.uid || !o.uid || o.uid === t.ds.uid),
  );

/**
 * The DaemonSet's running pods by node. A node with more than one (a rolling update in flight) keeps
 * the newest running one; terminating and finished pods are left out.
 */
export async function listDaemonSetPods(
  reader: RawReader,
  target: NodeScopeTarget,
  pageSize: number,
): Promise<{ pods: Map<string, PodView>; newest: number }> {
  const pods = new Map<string, PodView>();
  let newest = 0;
  await reader.list<PodObject>(
    'list DaemonSet pods',
    `/api/v1/namespaces/${encodeURIComponent(target.ds.namespace)}/pods`,
    { labelSelector: target.selector },
    (items) => {
      for (const p of items) {
        if (!ownedBy(p, target)) continue;
        if ((p.metadata as { deletionTimestamp?: string } | undefined)?.deletionTimestamp) continue;
        if (p.status?.phase !== 'Running') continue;
        const v = podView(p);
        if (!v) continue;
        const prev = pods.get(v.node);
        if (prev && (prev.startTime ?? 0) > (v.startTime ?? 0)) continue;
        pods.set(v.node, v);
        const created = time(p.metadata?.creationTimestamp);
        if (created !== undefined && created > newest) newest = created;
      }
    },
    { pageSize, onRestart: () => pods.clear() },
  );
  return { pods, newest };
}

export interface PodUsage {
  /** PodMetrics timestamp, whole seconds (ms). */
  t: number;
  /** Per container of the target, in its order: millicores and bytes. */
  cpu: (number | undefined)[];
  memory: (number | undefined)[];
}

/**
 * The DaemonSet's PodMetrics by pod name. A metrics API that is absent (404: no metrics-server, no
 * APIService) or unavailable (503) is a state to report, not an error.
 */
export async function listDaemonSetMetrics(
  reader: RawReader,
  target: NodeScopeTarget,
): Promise<{ state: MetricsState; byPod: Map<string, PodUsage>; newest: number; detail?: string }> {
  const byPod = new Map<string, PodUsage>();
  let newest = 0;
  try {
    const list = await reader.get<{ items?: PodMetricsObject[] }>(
      'list DaemonSet pod metrics',
      `/apis/metrics.k8s.io/v1beta1/namespaces/${encodeURIComponent(target.ds.namespace)}/pods`,
      { labelSelector: target.selector },
      { retry: { maxAttempts: 2 } },
    );
    for (const m of list.items ?? []) {
      const name = m.metadata?.name;
      const ts = time(m.timestamp);
      if (!name || ts === undefined) continue;
      const t = Math.floor(ts / 1000) * 1000;
      if (t > newest) newest = t;
      const names = target.containers;
      const cpu: (number | undefined)[] = new Array(names.length).fill(undefined);
      const memory: (number | undefined)[] = new Array(names.length).fill(undefined);
      for (const c of m.containers ?? []) {
        const j = names.findIndex((x) => x.name === c.name);
        if (j < 0) continue;
        cpu[j] = cpuMillis(c.usage?.cpu);
        memory[j] = memoryBytes(c.usage?.memory);
      }
      byPod.set(name, { t, cpu, memory });
    }
    return { state: 'available', byPod, newest };
  } catch (err) {
    if (err instanceof ClusterAccessError && (err.status === 404 || err.status === 503))
      return {
        state: err.status === 404 ? 'absent' : 'unavailable',
        byPod,
        newest,
        detail: err.detail,
      };
    throw err;
  }
}
