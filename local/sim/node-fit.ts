/**
 * The kube-scheduler's filters that the simulator models, in the order the default profile runs them
 * (NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit), each failing with the reason
 * text the real plugin reports, since those texts make up the PodScheduled message clients read.
 * A node stops at its first failing filter, except NodeResourcesFit, which names every short resource.
 */
import type { Json } from './json.js';
import { nodeAllocatable } from './nodes.js';
import type { Amounts } from './pod-requests.js';

interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };
const NOT_READY_TAINT: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };

export const REASON = {
  unschedulable: 'node(s) were unschedulable',
  affinity: "node(s) didn't match Pod's node affinity/selector",
  narrowedByAffinity: "node(s) didn't satisfy plugin(s) [NodeAffinity]",
  tooManyPods: 'Too many pods',
} as const;

/** ToleratesTaint (k8s.io/api/core/v1/toleration.go): an empty key or effect matches any. */
function tolerates(t: Json, taint: Taint): boolean {
  if (t?.effect && t.effect !== taint.effect) return false;
  if (t?.key && t.key !== taint.key) return false;
  switch (t?.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
    case '':
      return (t?.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

const tolerated = (pod: Json, taint: Taint): boolean =>
  (pod?.spec?.tolerations ?? []).some((t: Json) => tolerates(t, taint));

const isReady = (node: Json): boolean =>
  (node?.status?.conditions ?? []).some((c: Json) => c?.type === 'Ready' && c.status === 'True');

/**
 * Taints the scheduler sees: the node's own, plus not-ready on a node that is not Ready (the node
 * lifecycle controller's TaintNodesByCondition, which the simulator only models on node creation).
 */
function effectiveTaints(node: Json): Taint[] {
  const own: Taint[] = node?.spec?.taints ?? [];
  if (isReady(node) || own.some((t) => t.key === NOT_READY_TAINT.key)) return own;
  return [...own, NOT_READY_TAINT];
}

/** 1.34 stopped naming the taint in the reason. */
function taintReason(taint: Taint, minor: number): string {
  if (minor >= 34) return 'node(s) had untolerated taint(s)';
  return `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`;
}

function requirementMatches(r: Json, value: string | undefined): boolean {
  const values: string[] = r?.values ?? [];
  switch (r?.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const a = Number.parseInt(value ?? '', 10);
      const b = Number.parseInt(values[0] ?? '', 10);
      if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

/** A nodeSelectorTerm: all its expressions (labels) and fields (only metadata.name exists) must match. */
function termMatches(term: Json, node: Json): boolean {
  const exprs: Json[] = term?.matchExpressions ?? [];
  const fields: Json[] = term?.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node?.metadata?.labels ?? {};
  return (
    exprs.every((r) => requirementMatches(r, labels[r.key])) &&
    fields.every((r) => r.key === 'metadata.name' && requirementMatches(r, node.metadata.name))
  );
}

const requiredTerms = (pod: Json): Json[] | undefined =>
  pod?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;

function affinityMatches(pod: Json, node: Json): boolean {
  const labels = node?.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(pod?.spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const terms = requiredTerms(pod);
  return !terms || terms.length === 0 || terms.some((t) => termMatches(t, node));
}

/**
 * NodeAffinity's PreFilter: when every required term names nodes by metadata.name (as DaemonSet pods
 * do), only those nodes are filtered; the rest are reported as not satisfying the plugin.
 */
export function nodeNamesFromAffinity(pod: Json): Set<string> | undefined {
  const terms = requiredTerms(pod);
  if (!terms || terms.length === 0) return undefined;
  const names = new Set<string>();
  for (const t of terms) {
    const byName = (t?.matchFields ?? []).find(
      (r: Json) => r?.key === 'metadata.name' && r.operator === 'In',
    );
    if (!byName) return undefined;
    for (const v of byName.values ?? []) names.add(v);
  }
  return names;
}

/** The first filter before NodeResourcesFit that rejects the node; these preemption cannot fix. */
export function placementReason(pod: Json, node: Json, minor: number): string | undefined {
  if (node?.spec?.unschedulable && !tolerated(pod, UNSCHEDULABLE_TAINT)) return REASON.unschedulable;
  for (const taint of effectiveTaints(node)) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!tolerated(pod, taint)) return taintReason(taint, minor);
  }
  if (!affinityMatches(pod, node)) return REASON.affinity;
  return undefined;
}

export interface NodeUse extends Amounts {
  pods: number;
}

/** NodeResourcesFit: every resource the pod does not fit beside what is already requested on the node. */
export function resourceReasons(want: Amounts, used: NodeUse, node: Json): string[] {
  const alloc = nodeAllocatable(node);
  const out: string[] = [];
  if (used.pods + 1 > alloc.pods) out.push(REASON.tooManyPods);
  if (want.cpuM > 0 && want.cpuM > alloc.cpuM - used.cpuM) out.push('Insufficient cpu');
  if (want.mem > 0 && want.mem > alloc.mem - used.mem) out.push('Insufficient memory');
  return out;
}

/** NodeResourcesLeastAllocated: the share of cpu and memory left free after placing the pod (higher is better). */
export function leastAllocatedScore(want: Amounts, used: NodeUse, node: Json): number {
  const alloc = nodeAllocatable(node);
  const free = (total: number, taken: number) => (total > 0 ? (total - taken) / total : 0);
  return (free(alloc.cpuM, used.cpuM + want.cpuM) + free(alloc.mem, used.mem + want.mem)) / 2;
}
