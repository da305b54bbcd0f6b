/**
 * Capacity that doesn't exist, made visible: per node and per cluster, allocatable, balloon ("doesn't
 * exist"), requested by workloads, used (metrics API, when present) and free.
 */
import { pairWords } from '../kernel/units-format.js';
import { type Amounts, add, amounts, max, sub, ZERO } from './amounts.js';
import { balloonedMonthlyUsd } from './prices.js';
import type { NodeState } from './store.js';

/**
 * The column names of a node's figures, the same in `balloons status` and `npm start`'s summary (one
 * vocabulary: what workloads request is WORKLOADS everywhere, the size asked for DESIRED).
 */
export const CAPACITY_COLUMNS = {
  node: 'NODE',
  pool: 'POOL',
  source: 'SIZE FROM',
  allocatable: 'ALLOCATABLE',
  offers: 'OFFERS',
  balloon: "BALLOON (DOESN'T EXIST)",
  workloads: 'WORKLOADS',
  used: 'USED',
  free: 'FREE',
  desired: 'DESIRED',
  blocked: 'BLOCKED',
} as const;

export interface CapacityFigures {
  allocatable: Amounts;
  balloon: Amounts;
  workloads: Amounts;
  used?: Amounts;
  free: Amounts;
}

export interface BalloonSummary extends CapacityFigures {
  nodes: number;
  /** Monthly value of the ballooned capacity of the nodes with a known price, and how many had none. */
  monthlyUsd: number;
  unpricedNodes: number;
  blockedNodes: number;
  blocked: Amounts;
  reverts: number;
  at: number;
}

/** A node's figures: free is what neither the balloon nor the workloads hold (never below zero). */
export function figuresOf(s: NodeState): CapacityFigures {
  return {
    allocatable: s.allocatable,
    balloon: s.balloon,
    workloads: s.workloads,
    ...(s.used ? { used: s.used } : {}),
    free: max(ZERO, sub(sub(s.allocatable, s.balloon), s.workloads)),
  };
}

export function summarize(states: readonly NodeState[], at: number, reverts = 0): BalloonSummary {
  let total: BalloonSummary = {
    nodes: 0,
    blockedNodes: 0,
    blocked: ZERO,
    reverts,
    at,
    monthlyUsd: 0,
    unpricedNodes: 0,
    allocatable: ZERO,
    balloon: ZERO,
    workloads: ZERO,
    free: ZERO,
  };
  let used: Amounts | undefined;
  for (const s of states) {
    const f = figuresOf(s);
    total = {
      ...total,
      nodes: total.nodes + 1,
      blockedNodes: total.blockedNodes + (s.blocked ? 1 : 0),
      monthlyUsd: total.monthlyUsd + (monthlyValue(s) ?? 0),
      unpricedNodes: total.unpricedNodes + (s.price ? 0 : 1),
      blocked: s.blocked ? add(total.blocked, s.blocked.missing) : total.blocked,
      allocatable: add(total.allocatable, f.allocatable),
      balloon: add(total.balloon, f.balloon),
      workloads: add(total.workloads, f.workloads),
      free: add(total.free, f.free),
    };
    if (f.used) used = add(used ?? amounts(0, 0), f.used);
  }
  return used ? { ...total, used } : total;
}

/** The monthly value of the node's ballooned capacity at its price; undefined when its price is unknown. */
export const monthlyValue = (s: NodeState): number | undefined =>
  s.price ? balloonedMonthlyUsd(s.price, s.balloon, s.capacity) : undefined;

/** Monthly values per pool (and their unpriced nodes), for status -o wide and the report. */
export function poolValues(
  states: readonly NodeState[],
): { pool: string; monthlyUsd: number; unpriced: number }[] {
  const by = new Map<string, { pool: string; monthlyUsd: number; unpriced: number }>();
  for (const s of states) {
    const pool = poolOf(s);
    const p = by.get(pool) ?? { pool, monthlyUsd: 0, unpriced: 0 };
    const v = monthlyValue(s);
    by.set(pool, {
      pool,
      monthlyUsd: p.monthlyUsd + (v ?? 0),
      unpriced: p.unpriced + (v === undefined ? 1 : 0),
    });
  }
  return [...by.values()].sort((a, b) => a.pool.localeCompare(b.pool));
}

/** The pool a node belongs to for reports: its policy, "explicit", "host <id>", or "unmanaged". */
export function poolOf(s: NodeState): string {
  switch (s.source?.kind) {
    case 'policy':
      return s.source.policy;
    case 'explicit':
      return 'explicit';
    case 'host':
      return `host ${s.source.host}`;
    default:
      return 'unmanaged';
  }
}

/**
 * The node's KEP-5836 opt-out in words (1.37+): whether fleetscope's key is in the node's
 * disableResizePreemption, and the Deferred resizes the kubelet holds there without preemption
 * (PodResizePreemptionDisabled: the proof that the kubelet honours it); undefined before 1.37.
 */
export function resizePreemptionText(s: NodeState): string | undefined {
  const r = s.resizePreemption;
  if (!r) return undefined;
  const held = r.held?.length
    ? `kubelet holds ${r.held.length} resize(s) without preemption (${r.held.join(', ')})`
    : undefined;
  const key = r.optedOut ? 'opted out' : r.problem ? 'not opted out: the list is full' : undefined;
  return [key, held].filter(Boolean).join('; ') || undefined;
}

/** One sentence for a blocked reclaim: what could not be taken back, and who holds it. */
export function blockedText(node: string, s: NodeState): string | undefined {
  if (!s.blocked) return undefined;
  // A sentence: each pair says its units ("4.65 cores / 8.98Gi").
  const pods = s.blocked.pods.map((p) => `${p.namespace}/${p.name} (${pairWords(p.requests)})`).join(', ');
  return `${node}: reclaim blocked — the balloon could not take back ${pairWords(s.blocked.missing)} held by ${pods}; fleetscope never evicts, it takes the space when they leave`;
}
