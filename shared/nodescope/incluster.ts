/**
 * What nodescope makes visible inside a cluster (in update mode Off the VPA's status only, as upstream's
 * recommender; nothing at all under fleetscope.io/writes: none):
 *   - on each pod, the annotation fleetscope.io/recommendation: that node's recommendation (target,
 *     lower and upper bound per container) and whether it is the node's own or the DaemonSet-wide
 *     fallback; rewritten only when the target moved by more than 10% or the source changed;
 *   - on the VerticalPodAutoscaler, a status condition summarising the node-scoped recommendations
 *     (RecommendationProvided, reason NodeScope), and with the scoped CRD also `status.nodeScope` and
 *     AEP-10031's groups with the DaemonSet-wide `status.recommendation` as its fallback, or the
 *     Deckhouse fork's older `status.groups` (status-groups.ts).
 * Upstream's updater acts on status.recommendation where it runs in an evicting mode: the VPA is then
 * warned about (upstream-vpa.ts), and mode InPlace or Initial keeps it away.
 */

import { cpuMillis, memoryBytes } from '../cycle/quantities.js';
import type { RawReader } from '../k8s/raw-reader.js';
import { VPA_GROUP } from '../kernel/crds/vpa.js';
import { formatCpu, formatMemory } from '../kernel/quantity.js';
import type { Bytes, Millicores } from '../kernel/units.js';
import { cpuCell, memoryCell } from '../kernel/units-format.js';
import {
  CPU_HISTOGRAM_OPTIONS,
  DEFAULT_ESTIMATION_OPTIONS,
  MEMORY_HISTOGRAM_OPTIONS,
} from '../recommendation/index.js';
import { RECOMMENDATION_ANNOTATION } from './collect.js';
import type { VpaObject } from './k8s-types.js';
import type { Amounts, ContainerRec, NodeRec, RecSource } from './model.js';
import type { StatusContainerRecommendation, StatusGroup } from './status-groups.js';

const q = (a: Amounts | undefined) => {
  const out: { cpu?: string; memory?: string } = {};
  if (a?.cpu !== undefined) out.cpu = formatCpu(a.cpu as Millicores);
  if (a?.memory !== undefined) out.memory = formatMemory(a.memory as Bytes);
  return out;
};

export interface AnnotationValue {
  source: RecSource;
  /** source group: the group's scope value. */
  group?: string;
  containers: Record<
    string,
    { target: { cpu?: string; memory?: string }; lowerBound: object; upperBound: object }
  >;
  updatedAt: string;
}

export function annotationValue(rec: NodeRec, now: number): string {
  const containers: AnnotationValue['containers'] = {};
  for (const name of Object.keys(rec.containers).sort()) {
    const r = rec.containers[name] as ContainerRec;
    containers[name] = { target: q(r.target), lowerBound: q(r.lowerBound), upperBound: q(r.upperBound) };
  }
  const v: AnnotationValue = {
    source: rec.source,
    ...(rec.group !== undefined ? { group: rec.group } : {}),
    containers,
    updatedAt: new Date(now).toISOString(),
  };
  return JSON.stringify(v);
}

const amount = (parse: (x: string) => number | undefined, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') return Number.NaN;
  try {
    return parse(v) ?? Number.NaN;
  } catch {
    return Number.NaN;
  }
};

function parseTargets(
  value: string | undefined,
): { source?: string; group?: string; targets: Record<string, Amounts> } | undefined {
  if (!value) return undefined;
  try {
    const v = JSON.parse(value) as AnnotationValue;
    const targets: Record<string, Amounts> = {};
    for (const [name, c] of Object.entries(v.containers ?? {})) {
      const a: Amounts = {};
      // The cycle's fast parsers (an unparseable text is NaN, as the exact parser's throw was): a cold
      // process reads every pod's annotation once.
      const cpu = amount(cpuMillis, c.target?.cpu);
      const memory = amount(memoryBytes, c.target?.memory);
      if (cpu !== undefined) a.cpu = cpu;
      if (memory !== undefined) a.memory = memory;
      targets[name] = a;
    }
    return { source: v.source, ...(v.group !== undefined ? { group: v.group } : {}), targets };
  } catch {
    return undefined;
  }
}

/**
 * Whether the pod's annotation no longer says what the recommendation says: a target moved by more
 * than `tolerance` of its value and by more than one of the histogram's buckets (bucketsApart).
 */
export function annotationStale(current: string | undefined, rec: NodeRec, tolerance = 0.1): boolean {
  const parsed = parseTargets(current);
  if (!parsed || parsed.source !== rec.source || parsed.group !== rec.group) return true;
  const names = new Set([...Object.keys(parsed.targets), ...Object.keys(rec.containers)]);
  for (const name of names) {
    const a = parsed.targets[name];
    const b = rec.containers[name]?.target;
    if (!a || !b) return true;
    for (const r of ['cpu', 'memory'] as const) {
      const x = a[r];
      const y = b[r];
      if (x === undefined && y === undefined) continue;
      if (x === undefined || y === undefined || !Number.isFinite(x)) return true;
      if (Math.abs(x - y) > tolerance * Math.max(y, 1) && bucketsApart(r, x, y) > 1.5) return true;
    }
  }
  return false;
}

/**
 * How far apart two targets are in the recommender's histogram buckets (each taken back through the
 * safety margin, its place within its bucket interpolated, so that a target rounded to the millicore or
 * byte still lands where its bucket boundary is). Below about 200m a CPU bucket is wider than 10% of its
 * value (12m and 23m are neighbouring boundaries), so a target that moves by one bucket as samples come
 * and go is the histogram's resolution, not a move worth a write to every such pod at each fold.
 */
function bucketsApart(resource: 'cpu' | 'memory', a: number, b: number): number {
  const options = resource === 'cpu' ? CPU_HISTOGRAM_OPTIONS : MEMORY_HISTOGRAM_OPTIONS;
  const unit = resource === 'cpu' ? 1000 : 1;
  const margin = 1 + DEFAULT_ESTIMATION_OPTIONS.marginFraction;
  const place = (v: number) => {
    const u = v / unit / margin;
    const i = options.findBucket(u);
    const start = options.getBucketStart(i);
    const width = i + 1 < options.numBuckets ? options.getBucketStart(i + 1) - start : 0;
    return i + (width > 0 ? Math.min(1, Math.max(0, (u - start) / width)) : 0);
  };
  return Math.abs(place(a) - place(b));
}

export async function annotatePod(
  raw: RawReader,
  namespace: string,
  name: string,
  value: string,
): Promise<void> {
  await raw.send(
    'annotate pod',
    'PATCH',
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`,
    { metadata: { annotations: { [RECOMMENDATION_ANNOTATION]: value } } },
    'application/merge-patch+json',
  );
}

export interface StatusSummary {
  nodes: number;
  nodesWithHistory: number;
  fallbackNodes: number;
  /** Per container: the range of per-node targets, and the DaemonSet-wide target. */
  containers: Record<string, { min: Amounts; max: Amounts; daemonSetWide: Amounts }>;
  /** Sums over nodes of per-node targets, and of the DaemonSet-wide target on every node. */
  perNodeTotal: Amounts;
  daemonSetWideTotal: Amounts;
}

const pct = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0
    ? ''
    : `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(0)}%`;

export function conditionMessage(s: StatusSummary): string {
  const parts = [
    `node scope (fleetscope): ${s.nodes} node(s), ${s.nodesWithHistory} with their own history, ${s.fallbackNodes} on the DaemonSet-wide fallback`,
  ];
  for (const [name, c] of Object.entries(s.containers).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const cpu =
      c.min.cpu !== undefined
        ? `cpu ${cpuCell(c.min.cpu)}..${cpuCell(c.max.cpu)} (DaemonSet-wide ${cpuCell(c.daemonSetWide.cpu)})`
        : '';
    const mem =
      c.min.memory !== undefined
        ? `memory ${memoryCell(c.min.memory)}..${memoryCell(c.max.memory)} (DaemonSet-wide ${memoryCell(c.daemonSetWide.memory)})`
        : '';
    parts.push(`${name}: ${[cpu, mem].filter(Boolean).join(', ')}`);
  }
  const cpu = pct(s.perNodeTotal.cpu, s.daemonSetWideTotal.cpu);
  const mem = pct(s.perNodeTotal.memory, s.daemonSetWideTotal.memory);
  if (cpu || mem) parts.push(`per-node sizing vs DaemonSet-wide: cpu ${cpu || '-'}, memory ${mem || '-'}`);
  return parts.join('; ');
}

export interface VpaCondition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** The condition as the VPA carries it now, if any. */
export function currentCondition(vpa: VpaObject | undefined, type: string) {
  return vpa?.status?.conditions?.find((c) => c.type === type);
}

/**
 * What a status write carries besides the condition: fleetscope's summary (scoped CRD), and the
 * recommendation and groups in the CRD's shape (status-groups.ts); null clears a field (merge patch).
 */
export interface StatusFields {
  nodeScope?: StatusSummary & { updatedAt: string };
  recommendation?: { containerRecommendations: StatusContainerRecommendation[] } | null;
  recommendationGroups?: StatusGroup[] | null;
  groups?: StatusGroup[] | null;
}

/** Patches the VPA's status (merge patch on the status subresource). */
export async function patchVpaStatus(
  raw: RawReader,
  vpa: { namespace: string; name: string },
  condition: VpaCondition,
  now: number,
  previous: VpaObject | undefined,
  fields: StatusFields = {},
): Promise<void> {
  const { nodeScope, ...published } = fields;
  const old = currentCondition(previous, condition.type) as
    | { lastTransitionTime?: string; status?: string }
    | undefined;
  const lastTransitionTime =
    old?.status === condition.status && old?.lastTransitionTime
      ? old.lastTransitionTime
      : new Date(now).toISOString();
  const others = (previous?.status?.conditions ?? []).filter((c) => c.type !== condition.type);
  const status: Record<string, unknown> = {
    conditions: [
      ...others,
      { ...condition, lastTransitionTime: lastTransitionTime.replace(/\.\d{3}Z$/, 'Z') },
    ],
  };
  if (nodeScope)
    status.nodeScope = {
      ...nodeScope,
      containers: Object.fromEntries(
        Object.entries(nodeScope.containers).map(([k, v]) => [
          k,
          { min: q(v.min), max: q(v.max), daemonSetWide: q(v.daemonSetWide) },
        ]),
      ),
      perNodeTotal: q(nodeScope.perNodeTotal),
      daemonSetWideTotal: q(nodeScope.daemonSetWideTotal),
    };
  // A merge patch replaces a list whole: groups no longer there go with it.
  for (const [k, v] of Object.entries(published)) if (v !== undefined) status[k] = v;
  await raw.send(
    'patch VPA status',
    'PATCH',
    `/apis/${VPA_GROUP}/v1/namespaces/${encodeURIComponent(vpa.namespace)}/verticalpodautoscalers/${encodeURIComponent(vpa.name)}/status`,
    { status },
    'application/merge-patch+json',
  );
}
