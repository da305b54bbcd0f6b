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
import type { ContainerDesired, PodLike } from '../resize/index.js';
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
import type { RawReader } from './raw.js';
import type { NodeScopeTarget } from './targets.js';

export const VPA_GROUP = 'autoscaling.k8s.io';
export const VPA_CRD_NAME = `verticalpodautoscalers.${VPA_GROUP}`;
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

export interface ContainerView {
  name: string;
  /** Spec requests/limits as integers. */
  resources: ContainerDesired;
  /** The memory request the kubelet runs with (status resources when reported, else spec): OOM bumps use it. */
  memoryRequest?: number;
  restartCount: number;
  /** The last OOM kill (finishedAt, ms) seen in lastState or state, if any. */
  oomAt?: number;
  /** How long the killed container had run (ms), for upstream's quick-OOM rule. */
  oomRanMs?: number;
}

/** The parts of a DaemonSet pod a cycle uses; the rest of the pod is dropped with its page. */
export interface PodView {
  name: string;
  namespace: string;
  uid: string;
  node: string;
  startTime?: number;
  containers: ContainerView[];
  annotation?: string;
  /** A trimmed copy for the resize mechanism. */
  pod: PodLike;
}

const time = (s: string | undefined): number | undefined => {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isFinite(t) ? t : undefined;
};

function pair(list: { [r: string]: string | undefined } | undefined) {
  const out: { cpu?: number; memory?: number } = {};
  const cpu = cpuMillis(list?.cpu);
  const memory = memoryBytes(list?.memory);
  if (cpu !== undefined) out.cpu = cpu;
  if (memory !== undefined) out.memory = memory;
  return out;
}

const RESIZE_CONDITIONS = new Set(['PodResizePending', 'PodResizeInProgress']);

export function podView(p: PodObject): PodView | undefined {
  const node = p.spec?.nodeName;
  const name = p.metadata?.name;
  if (!node || !name) return undefined;
  const statuses = new Map((p.status?.containerStatuses ?? []).map((s) => [s.name, s]));
  const containers: ContainerView[] = (p.spec?.containers ?? []).map((c: ContainerSpec) => {
    const s = statuses.get(c.name);
    const view: ContainerView = {
      name: c.name,
      resources: { requests: pair(c.resources?.requests), limits: pair(c.resources?.limits) },
      restartCount: s?.restartCount ?? 0,
    };
    const mem = memoryBytes(s?.resources?.requests?.memory ?? c.resources?.requests?.memory);
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
  const pod: PodLike = {
    metadata: {
      name,
      namespace: p.metadata?.namespace,
      uid: p.metadata?.uid,
      resourceVersion: p.metadata?.resourceVersion,
      ...(p.metadata?.generation !== undefined ? { generation: p.metadata.generation } : {}),
    },
    spec: {
      nodeName: node,
      containers: (p.spec?.containers ?? []).map((c) => ({ name: c.name, resources: c.resources })),
    },
    status: {
      phase: p.status?.phase,
      qosClass: p.status?.qosClass,
      ...(p.status?.resize ? { resize: p.status.resize } : {}),
      conditions: (p.status?.conditions ?? []).filter((c) => RESIZE_CONDITIONS.has(c.type)),
      containerStatuses: (p.status?.containerStatuses ?? []).map((s) => ({
        name: s.name,
        ...(s.resources ? { resources: s.resources } : {}),
        ...(s.allocatedResources ? { allocatedResources: s.allocatedResources } : {}),
      })),
    },
  };
  const view: PodView = {
    name,
    namespace: p.metadata?.namespace ?? '',
    uid: p.metadata?.uid ?? '',
    node,
    containers,
    pod,
  };
  const start = time(p.status?.startTime);
  if (start !== undefined) view.startTime = start;
  const ann = p.metadata?.annotations?.[RECOMMENDATION_ANNOTATION];
  if (ann !== undefined) view.annotation = ann;
  return view;
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
  /** Per container name: millicores and bytes. */
  usage: Map<string, { cpu?: number; memory?: number }>;
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
      const usage = new Map<string, { cpu?: number; memory?: number }>();
      for (const c of m.containers ?? []) {
        const u: { cpu?: number; memory?: number } = {};
        const cpu = cpuMillis(c.usage?.cpu);
        const memory = memoryBytes(c.usage?.memory);
        if (cpu !== undefined) u.cpu = cpu;
        if (memory !== undefined) u.memory = memory;
        usage.set(c.name, u);
      }
      byPod.set(name, { t, usage });
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
