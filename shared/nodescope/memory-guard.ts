/**
 * What the kubelet refuses, node scope does not ask for: a real kubelet (1.34+) refuses to lower a
 * container's memory limit below what the container uses ("attempting to set ... memory limit below
 * current usage", PodResizeInProgress/Error), leaving the pod mid-resize. So a resize that would lower
 * a limit below the container's usage (with headroom: usage moves between the metrics window and the
 * kubelet's check) leaves that container's memory as it runs and changes only its CPU; the usage is
 * this cycle's sample, or the usage the kubelet itself reported when it refused this pod before.
 */
import type { PodView } from '../cycle/views.js';
import { type DesiredResources, memoryLimitRefusals, type ResizeRecord } from '../resize/index.js';
import type { LogEntry } from './model.js';

/** A lowered limit keeps this much above usage. */
export const LIMIT_USAGE_HEADROOM = 0.1;

/** Each node's memory usage per container name, from this cycle's samples. */
export function memoryUsageByNode(entry: LogEntry): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  for (const s of entry.samples) {
    const u: Record<string, number> = {};
    entry.containers.forEach((name, j) => {
      const m = s.memory[j];
      if (m !== undefined) u[name] = m;
    });
    out.set(s.node, u);
  }
  return out;
}

/** The usage to keep above per container: the sample's, or more where the kubelet refused this pod for it. */
export function usageFloor(
  sampled: Readonly<Record<string, number>> | undefined,
  record: ResizeRecord | undefined,
  podUid: string,
): Record<string, number> {
  const out: Record<string, number> = { ...sampled };
  if (record?.podUid !== podUid) return out;
  for (const r of memoryLimitRefusals(record.message))
    if (r.container !== undefined) out[r.container] = Math.max(out[r.container] ?? 0, r.usage);
  return out;
}

/** The desired resources with memory held where the limit would go below usage; the containers held. */
export function keepMemoryAboveUsage(
  desired: DesiredResources,
  pod: PodView,
  usage: Readonly<Record<string, number>>,
): { desired: DesiredResources; held: string[] } {
  const out: DesiredResources = {};
  const held: string[] = [];
  for (const [name, d] of Object.entries(desired)) {
    const want = d.limits?.memory;
    // The kubelet compares with the limit the container runs with: a spec left mid-resize by a refused
    // lowering is not it, and a limit above that spec can still be a lowering below usage.
    const c = pod.containers.find((x) => x.name === name);
    const now = c?.actLimMem ?? c?.limMem;
    const used = usage[name];
    const below =
      want !== undefined && now !== undefined && used !== undefined && want < now
        ? want < used * (1 + LIMIT_USAGE_HEADROOM)
        : false;
    if (!below) {
      out[name] = d;
      continue;
    }
    held.push(name);
    const { memory: _r, ...requests } = d.requests ?? {};
    const { memory: _l, ...limits } = d.limits ?? {};
    const rest = {
      ...(Object.keys(requests).length ? { requests } : {}),
      ...(Object.keys(limits).length ? { limits } : {}),
    };
    if (rest.requests || rest.limits) out[name] = rest;
  }
  return { desired: out, held };
}
