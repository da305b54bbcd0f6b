/**
 * The DefaultPreemption PostFilter, simplified (no PodDisruptionBudgets, no nominated pods): a pod that
 * fits nowhere may remove pods of strictly lower priority from one node. Only nodes rejected for
 * resources alone are tried; on each, every lower-priority pod is removed, then the most important
 * ones are given back while the pod still fits (SelectVictimsOnNode's reprieve). Among the nodes that
 * work, the one whose victims matter least wins. preemptionPolicy Never opts a pod out entirely, which
 * is what keeps a balloon pod from ever displacing workloads through the scheduler.
 */
import { fitErrorMessage } from './fit-error.js';
import type { Json } from './json.js';
import { type NodeUse, resourceReasons } from './node-fit.js';
import type { Amounts } from './pod-requests.js';

export interface Filtered {
  reasons: string[];
  /** Only NodeResourcesFit failed: removing pods could help. */
  resolvable: boolean;
}

export interface BoundPod {
  key: string;
  pod: Json;
  req: Amounts;
}

export interface PreemptionInput {
  pod: Json;
  want: Amounts;
  totalNodes: number;
  filtered: Map<string, Filtered>;
  absent?: { count: number; reason: string };
  usage(node: string): NodeUse;
  podsOn(node: string): BoundPod[];
  node(name: string): Json;
}

export type PreemptionResult = { node: string; victims: BoundPod[] } | { message: string };

const NOT_HELPFUL = 'Preemption is not helpful for scheduling';
const NO_VICTIMS = 'No preemption victims found for incoming pod';

const priorityOf = (p: Json): number => p?.spec?.priority ?? 0;
const startOf = (p: Json): string => p?.status?.startTime ?? p?.metadata?.creationTimestamp ?? '';

/** MoreImportantPod: higher priority first, then the one that started earlier. */
const moreImportantFirst = (a: BoundPod, b: BoundPod): number =>
  priorityOf(b.pod) - priorityOf(a.pod) || (startOf(a.pod) < startOf(b.pod) ? -1 : 1);

const shift = (u: NodeUse, r: Amounts, sign: 1 | -1): NodeUse => ({
  cpuM: u.cpuM + sign * r.cpuM,
  mem: u.mem + sign * r.mem,
  pods: u.pods + sign,
});

/** The victims on one node, or the reasons preemption cannot help there. */
function victimsOn(input: PreemptionInput, name: string): BoundPod[] | string[] {
  const prio = priorityOf(input.pod);
  const lower = input.podsOn(name).filter((b) => priorityOf(b.pod) < prio);
  if (lower.length === 0) return [NO_VICTIMS];
  const node = input.node(name);
  let used = input.usage(name);
  for (const b of lower) used = shift(used, b.req, -1);
  const still = resourceReasons(input.want, used, node);
  if (still.length > 0) return still;
  const victims: BoundPod[] = [];
  for (const b of [...lower].sort(moreImportantFirst)) {
    const back = shift(used, b.req, 1);
    if (resourceReasons(input.want, back, node).length === 0) used = back;
    else victims.push(b);
  }
  return victims;
}

/** pickOneNodeForPreemption without PDBs: lowest top victim priority, lowest sum, fewest victims, name. */
function better(a: { node: string; victims: BoundPod[] }, b: { node: string; victims: BoundPod[] }): boolean {
  const top = (v: BoundPod[]) => Math.max(...v.map((x) => priorityOf(x.pod)));
  const sum = (v: BoundPod[]) => v.reduce((s, x) => s + priorityOf(x.pod), 0);
  return (
    (top(a.victims) - top(b.victims) ||
      sum(a.victims) - sum(b.victims) ||
      a.victims.length - b.victims.length ||
      (a.node < b.node ? -1 : 1)) < 0
  );
}

export function preempt(input: PreemptionInput): PreemptionResult {
  if (input.pod?.spec?.preemptionPolicy === 'Never')
    return { message: 'preemption: not eligible due to preemptionPolicy=Never.' };
  const statuses: string[][] = [];
  let best: { node: string; victims: BoundPod[] } | undefined;
  for (const [name, f] of input.filtered) {
    if (!f.resolvable) {
      statuses.push([NOT_HELPFUL]);
      continue;
    }
    const found = victimsOn(input, name);
    if (typeof found[0] === 'string') {
      statuses.push(found as string[]);
      continue;
    }
    const cand = { node: name, victims: found as BoundPod[] };
    if (!best || better(cand, best)) best = cand;
  }
  if (best) return best;
  const absent = input.absent && { count: input.absent.count, reason: NOT_HELPFUL };
  return {
    message: `preemption: ${fitErrorMessage(input.totalNodes, { perNode: statuses, absent })}`,
  };
}
