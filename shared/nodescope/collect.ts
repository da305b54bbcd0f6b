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
 *     (nodes and pods through the cycle's snapshot, shared/cycle: where another capability reads every
 *     pod of the cluster in the same invocation, the DaemonSet's pods come from that one list)
 *     LIST its PodMetrics (namespace + label selector)       1   (metrics-server ignores limit)
 *
 * PodMetrics carry no node name, so pods are mapped to nodes through the pod list (spec.nodeName).
 * Only a few fields of each object are kept; pages are dropped as they are read.
 */

import { cpuMillis, memoryBytes } from '../cycle/quantities.js';
import type { ClusterSnapshot } from '../cycle/snapshot.js';
import { type ContainerView, type PodView, RECOMMENDATION_ANNOTATION } from '../cycle/views.js';
import { ClusterAccessError } from '../k8s/errors.js';
import type { RawReader } from '../k8s/raw-reader.js';
import { VPA_CRD_NAME, VPA_GROUP } from '../kernel/crds/vpa.js';
import type { DaemonSetObject, PodMetricsObject, VpaObject } from './k8s-types.js';
import type { NodeScopeTarget } from './targets.js';

export { RECOMMENDATION_ANNOTATION };

export type CrdState = 'absent' | 'stock' | 'scoped';
export type MetricsState = 'available' | 'absent' | 'unavailable';

/**
 * Where a VPA's groups are published: AEP-10031 as it stands (`status.recommendationGroups`, targets
 * only, with the DaemonSet-wide `status.recommendation` kept as the fallback), or the Deckhouse fork's
 * older shape (`status.groups`, `status.recommendation` left empty). Read from the installed CRD.
 */
export type StatusShape = 'upstream' | 'deckhouse';
/** The CRD annotation that picks the shape where a CRD defines both fields. */
export const STATUS_SHAPE_ANNOTATION = 'fleetscope.io/status-shape';

export interface VpaCrdFacts {
  state: CrdState;
  shape: StatusShape;
  /** Whether the CRD keeps the shape's groups field (the stock CRD prunes it). */
  groups: boolean;
}

interface CrdObject {
  metadata?: { annotations?: Record<string, string> };
  spec?: {
    versions?: {
      name?: string;
      served?: boolean;
      schema?: {
        openAPIV3Schema?: {
          properties?: Record<string, { properties?: Record<string, unknown> } | undefined>;
        };
      };
    }[];
  };
}

/** The shape a CRD's v1 status schema keeps: recommendationGroups first, else groups. */
export function statusShapeOf(
  status: Record<string, unknown> | undefined,
  annotation: string | undefined,
): { shape: StatusShape; groups: boolean } {
  const upstream = status?.recommendationGroups !== undefined;
  const deckhouse = status?.groups !== undefined;
  if (upstream && deckhouse)
    return { shape: annotation === 'deckhouse' ? 'deckhouse' : 'upstream', groups: true };
  if (deckhouse) return { shape: 'deckhouse', groups: true };
  return { shape: 'upstream', groups: upstream };
}

/** Whether the VPA CRD is installed, whether its v1 schema carries spec.scope, and its status shape. */
export async function readCrdFacts(reader: RawReader): Promise<VpaCrdFacts> {
  const absent: VpaCrdFacts = { state: 'absent', shape: 'upstream', groups: false };
  try {
    const crd = await reader.get<CrdObject>(
      'get VPA CRD',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${VPA_CRD_NAME}`,
    );
    const v1 = crd.spec?.versions?.find((v) => v.name === 'v1' && v.served !== false);
    if (!v1) return absent;
    const props = v1.schema?.openAPIV3Schema?.properties;
    const state = props?.spec?.properties?.scope ? 'scoped' : 'stock';
    return {
      state,
      ...statusShapeOf(props?.status?.properties, crd.metadata?.annotations?.[STATUS_SHAPE_ANNOTATION]),
    };
  } catch (err) {
    if (err instanceof ClusterAccessError && err.status === 404) return absent;
    throw err;
  }
}

/** Whether the VPA CRD is installed and whether its v1 schema carries spec.scope. */
export async function readCrd(reader: RawReader): Promise<CrdState> {
  return (await readCrdFacts(reader)).state;
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

/** The memory request the kubelet runs with (actual when the node reports it, else spec): OOM bumps use it. */
export const memoryRequestOf = (c: ContainerView) => (c.actMem !== undefined ? c.actMem : c.reqMem);
export const requestOf = (c: ContainerView, r: 'cpu' | 'memory') => (r === 'cpu' ? c.reqCpu : c.reqMem);
export const limitOf = (c: ContainerView, r: 'cpu' | 'memory') => (r === 'cpu' ? c.limCpu : c.limMem);

const time = (s: string | undefined): number | undefined => {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isFinite(t) ? t : undefined;
};

/** time(), remembering the last text: one scrape's PodMetrics share their window's end. */
function sameTimes(): (s: string | undefined) => number | undefined {
  let text: string | undefined;
  let value: number | undefined;
  return (s) => {
    if (s !== text) {
      text = s;
      value = time(s);
    }
    return value;
  };
}

const ownedBy = (p: PodView, t: NodeScopeTarget) =>
  p.owner !== undefined &&
  p.owner.kind === 'DaemonSet' &&
  p.owner.name === t.ds.name &&
  (!t.ds.uid || !p.owner.uid || p.owner.uid === t.ds.uid);

/**
 * The DaemonSet's running pods by node, through the cycle's snapshot. A node with more than one (a
 * rolling update in flight) keeps the newest running one; terminating and finished pods are left out.
 * `newest` is the latest creation time among the pods kept, for the cycle's clock.
 */
export async function listDaemonSetPods(
  snapshot: ClusterSnapshot,
  target: NodeScopeTarget,
): Promise<{ pods: Map<string, PodView>; newest: number }> {
  const list = await snapshot.pods({
    namespace: target.ds.namespace,
    labelSelector: target.selector,
    keep: (p) => ownedBy(p, target) && p.phase === 'Running' && !p.terminating && p.node !== '',
  });
  const pods = new Map<string, PodView>();
  let newest = 0;
  for (const v of list) {
    const prev = pods.get(v.node);
    if (prev && (prev.startTime ?? 0) > (v.startTime ?? 0)) continue;
    pods.set(v.node, v);
    if (v.createdAt !== undefined && v.createdAt > newest) newest = v.createdAt;
  }
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
    // Each container's position in the target (the first, as names are unique in a pod).
    const index = new Map<string, number>();
    target.containers.forEach((c, j) => {
      if (!index.has(c.name)) index.set(c.name, j);
    });
    const width = target.containers.length;
    const when = sameTimes();
    for (const m of list.items ?? []) {
      const name = m.metadata?.name;
      const ts = when(m.timestamp);
      if (!name || ts === undefined) continue;
      const t = Math.floor(ts / 1000) * 1000;
      if (t > newest) newest = t;
      const cpu: (number | undefined)[] = new Array(width).fill(undefined);
      const memory: (number | undefined)[] = new Array(width).fill(undefined);
      for (const c of m.containers ?? []) {
        const j = index.get(c.name);
        if (j === undefined) continue;
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
