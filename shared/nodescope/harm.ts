/**
 * Whether a downsized node's pod suffers, from the world as the cycle reads it: an OOM kill after the
 * resize (the container's last termination), a restart (restartCount rose since the resize), the pod
 * Running but not Ready, or CPU throttling well above what it had before. Throttling needs a metric
 * metrics.k8s.io does not carry (cAdvisor's container_cpu_cfs_throttled_periods_total over
 * container_cpu_cfs_periods_total); the hook takes a share per node where a source gives one, and the
 * cycle has none today (the simulator has no throttling metric either).
 */
import type { PodView } from '../cycle/views.js';
import type { HarmKind, NodeDownsize } from './rollout.js';

/** Throttling "well above before": at least this share of periods, and this many times the share before. */
export const THROTTLED_MIN_SHARE = 0.25;
export const THROTTLED_RISE = 2;

export interface Harm {
  kind: HarmKind;
  detail: string;
}

/**
 * The harm a downsized node's pod shows, if any (the first of OOM kill, restart, readiness, throttling).
 * `throttled`: this cycle's throttled share of CPU periods on the node, where a source gives one.
 */
export function harmOf(d: NodeDownsize, pod: PodView, throttled?: number): Harm | undefined {
  for (const c of pod.containers)
    if (c.oomAt !== undefined && c.oomAt >= d.at)
      return { kind: 'OOMKilled', detail: `container ${c.name} was OOM-killed after the downsize` };
  const restarts = pod.restarts ?? 0;
  if (d.actuated && restarts > d.restarts)
    return {
      kind: 'Restarted',
      detail: `restart count rose from ${d.restarts} to ${restarts} after the downsize`,
    };
  if (pod.notReady)
    return { kind: 'NotReady', detail: 'the pod is Running but not Ready after the downsize' };
  if (throttled !== undefined && throttledWellAbove(throttled, d.throttled))
    return {
      kind: 'Throttled',
      detail: `CPU throttled in ${pct(throttled)} of periods after the downsize (${pct(d.throttled ?? 0)} before)`,
    };
  return undefined;
}

export function throttledWellAbove(now: number, before: number | undefined): boolean {
  return now >= THROTTLED_MIN_SHARE && now >= THROTTLED_RISE * (before ?? 0);
}

const pct = (x: number) => `${Math.round(x * 100)}%`;
