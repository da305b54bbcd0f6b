/**
 * A pod's containers as a resize would leave them: the spec's cpu and memory requests and limits with
 * the desired values laid over (what LimitRanger and ResourceQuota admission judge: the whole new spec).
 */
import type { PodView } from '../../cycle/views.js';
import type { DesiredResources } from '../../resize/index.js';

export const RESOURCES = ['cpu', 'memory'] as const;
export type Resource = (typeof RESOURCES)[number];

/** One container's requests and limits (millicores, bytes); an absent value is not set. */
export interface ContainerAmounts {
  name: string;
  requests: Partial<Record<Resource, number>>;
  limits: Partial<Record<Resource, number>>;
}

/** The containers as the spec has them now. */
export function specAmounts(pod: PodView): ContainerAmounts[] {
  return pod.containers.map((c) => ({
    name: c.name,
    requests: defined({ cpu: c.reqCpu, memory: c.reqMem }),
    limits: defined({ cpu: c.limCpu, memory: c.limMem }),
  }));
}

/** The containers after the resize: the spec with `desired` laid over (limits are never added). */
export function amountsAfter(pod: PodView, desired: DesiredResources): ContainerAmounts[] {
  return specAmounts(pod).map((c) => {
    const d = desired[c.name];
    if (!d) return c;
    const limits = { ...c.limits };
    for (const r of RESOURCES)
      if (d.limits?.[r] !== undefined && limits[r] !== undefined) limits[r] = d.limits[r];
    return { name: c.name, requests: { ...c.requests, ...defined(d.requests ?? {}) }, limits };
  });
}

function defined(a: Partial<Record<Resource, number | undefined>>): Partial<Record<Resource, number>> {
  const out: Partial<Record<Resource, number>> = {};
  for (const r of RESOURCES) if (a[r] !== undefined) out[r] = a[r];
  return out;
}
