/**
 * What one cycle observes of one DaemonSet, from its pods and PodMetrics: one CPU and one memory sample
 * per container per node (the metrics window end), and the OOM kills newer than the last recorded. This
 * is the cycle's log entry; which nodes the DaemonSet can run on comes with it.
 */
import type { NodeFacts, PodView } from '../cycle/views.js';
import { memoryRequestOf, type PodUsage } from './collect.js';
import { placementProblem } from './eligibility.js';
import type { DsModel, LogEntry, OomEvent } from './model.js';
import type { DsHead } from './store.js';
import type { NodeScopeTarget } from './targets.js';

export interface ThisCycle {
  entry: LogEntry;
  /** CPU samples taken (containers reported), and the newest sample time, stored or this cycle's. */
  sampleCount: number;
  lastSampleAt: number;
}

export function thisCycle(
  target: NodeScopeTarget,
  pods: ReadonlyMap<string, PodView>,
  usage: ReadonlyMap<string, PodUsage>,
  model: DsModel,
  head: DsHead | undefined,
  now: number,
): ThisCycle {
  const containers = target.containers.map((c) => c.name);
  const samples: LogEntry['samples'] = [];
  const ooms: OomEvent[] = [];
  let sampleCount = 0;
  for (const [node, pod] of pods) {
    const u = usage.get(pod.name);
    if (u) {
      for (const v of u.cpu) if (v !== undefined) sampleCount++;
      samples.push({ node, t: u.t, cpu: u.cpu, memory: u.memory });
    }
    newOoms(node, pod, containers, model, ooms);
  }
  ooms.sort((a, b) => a.t - b.t || (a.node < b.node ? -1 : a.node > b.node ? 1 : a.container - b.container));
  let lastSampleAt = head?.stats?.lastSampleAt ?? 0;
  for (const x of samples) if (x.t > lastSampleAt) lastSampleAt = x.t;
  return { entry: { at: now, gen: head?.gen ?? 0, containers, samples, ooms }, sampleCount, lastSampleAt };
}

/** The pod's OOM kills not recorded yet (a kill stays in the container's last state until the next). */
function newOoms(node: string, pod: PodView, containers: string[], model: DsModel, out: OomEvent[]): void {
  // Most pods have no OOM kill: nothing is looked up or parsed for them.
  if (!pod.containers.some((c) => c.oomAt !== undefined)) return;
  const rec = model.nodes.get(node);
  containers.forEach((name, j) => {
    const c = pod.containers.find((x) => x.name === name);
    const request = c && memoryRequestOf(c);
    if (c?.oomAt === undefined || request === undefined) return;
    if (c.oomAt <= (rec?.lastOomAt[j] ?? 0)) return;
    out.push({ node, container: j, t: c.oomAt, request });
  });
}

/** The nodes the DaemonSet can run on (the others get no recommendation, not even the fallback). */
export function eligibleNodes(target: NodeScopeTarget, nodes: readonly NodeFacts[]): Set<string> {
  const eligible = new Set<string>();
  for (const n of nodes) if (!placementProblem(target.placement, n)) eligible.add(n.name);
  return eligible;
}
