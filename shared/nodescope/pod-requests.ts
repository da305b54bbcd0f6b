/**
 * What each node's pod of a DaemonSet requests now, as the scheduler counts it (spec, allocated and
 * actual resources: a pod resized in place counts at its new size). Recorded by the cycle beside the
 * resize records, only when it changed, so every view reads "requests today" from the pods, not from
 * the DaemonSet's template.
 */
import { effectiveContainerRequests, type PodView } from '../cycle/views.js';
import type { Amounts } from './model.js';

/** Per node, per container: millicores and bytes. */
export type PodRequests = Record<string, Record<string, Amounts>>;

export function podRequestsOf(pods: ReadonlyMap<string, PodView>): PodRequests {
  const out: PodRequests = {};
  for (const [node, pod] of [...pods].sort(([a], [b]) => a.localeCompare(b)))
    out[node] = Object.fromEntries(
      effectiveContainerRequests(pod).map((c) => [c.name, { cpu: c.cpu, memory: c.memory }]),
    );
  return out;
}

/** Equal node by node and container by container (a stored map's key order is not kept). */
export function sameRequests(a: PodRequests | undefined, b: PodRequests): boolean {
  const flat = (r: PodRequests) =>
    Object.entries(r)
      .flatMap(([n, cs]) => Object.entries(cs).map(([c, x]) => `${n}/${c}=${x.cpu ?? ''},${x.memory ?? ''}`))
      .sort()
      .join(';');
  return flat(a ?? {}) === flat(b);
}
