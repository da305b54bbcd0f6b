/**
 * Reading a pod's resize state (facts §1.5): the PodResizePending / PodResizeInProgress conditions from
 * 1.33, the deprecated `status.resize` string before, and "spec equals what runs" as the completion test.
 */
import { parseCpu, parseMemory } from '../kernel/quantity.js';
import type {
  ContainerDesired,
  ContainerResourcesLike,
  PodLike,
  ResizeObservation,
  ResourcePair,
} from './types.js';

function amount(v: string | undefined, parse: (s: string) => number): number | undefined {
  if (v === undefined || v === null) return undefined;
  try {
    return parse(v);
  } catch {
    return undefined;
  }
}

/** The cpu/memory part of a resource list as integers (millicores, bytes). */
export function pairOf(list: { [r: string]: string | undefined } | undefined): ResourcePair {
  const out: ResourcePair = {};
  const cpu = amount(list?.cpu, parseCpu);
  const memory = amount(list?.memory, parseMemory);
  if (cpu !== undefined) out.cpu = cpu;
  if (memory !== undefined) out.memory = memory;
  return out;
}

/** A container's cpu/memory requests and limits as integers. */
export function resourcesOf(r: ContainerResourcesLike | undefined): ContainerDesired {
  return { requests: pairOf(r?.requests), limits: pairOf(r?.limits) };
}

const samePair = (a: ResourcePair | undefined, b: ResourcePair | undefined): boolean =>
  (a?.cpu ?? undefined) === (b?.cpu ?? undefined) && (a?.memory ?? undefined) === (b?.memory ?? undefined);

type Quantities = ContainerResourcesLike['requests'];

/** Whether two resource lists hold the same cpu and memory. */
export type SameQuantities = (a: Quantities, b: Quantities) => boolean;

const sameParsed: SameQuantities = (a, b) => samePair(pairOf(a), pairOf(b));

/**
 * Whether every container's spec cpu/memory equals what the runtime reports (when it reports it).
 * `same` compares two resource lists (a caller with faster parsers may give its own).
 */
export function actuated(pod: PodLike, same: SameQuantities = sameParsed): boolean {
  const statuses = pod.status?.containerStatuses ?? [];
  for (const c of pod.spec?.containers ?? []) {
    const s = statuses.find((x) => x.name === c.name);
    if (!s?.resources) continue;
    if (!same(c.resources?.requests, s.resources.requests) || !same(c.resources?.limits, s.resources.limits))
      return false;
  }
  return true;
}

/**
 * Whether a condition speaks of the pod's current spec. From 1.34 the kubelet stamps its resize
 * conditions with the generation it acted on (KEP-5067): one older than metadata.generation is the
 * outcome of an earlier request, not of the one in the spec now. Without the field (before 1.34) every
 * condition is current.
 */
const current = (pod: PodLike, c: { observedGeneration?: number }) =>
  c.observedGeneration === undefined ||
  pod.metadata?.generation === undefined ||
  c.observedGeneration >= pod.metadata.generation;

/**
 * Where the pod's resize stands. Pending (Deferred/Infeasible) wins over in-progress: it is the newest.
 * `same` compares resource lists for the final "spec equals what runs" test (see actuated).
 */
export function observeResize(pod: PodLike, same: SameQuantities = sameParsed): ResizeObservation {
  const conditions = (pod.status?.conditions ?? []).filter((c) => current(pod, c));
  const pending = conditions.find((c) => c.type === 'PodResizePending' && c.status === 'True');
  if (pending) {
    if (pending.reason === 'Infeasible')
      return { state: 'infeasible', reason: 'Infeasible', message: pending.message };
    return { state: 'deferred', reason: pending.reason ?? 'Deferred', message: pending.message };
  }
  const inProgress = conditions.find((c) => c.type === 'PodResizeInProgress' && c.status === 'True');
  if (inProgress?.reason === 'Error') return { state: 'error', reason: 'Error', message: inProgress.message };
  // Before 1.33 the kubelet reported through status.resize.
  switch (pod.status?.resize) {
    case 'Infeasible':
      return { state: 'infeasible', reason: 'Infeasible' };
    case 'Deferred':
      return { state: 'deferred', reason: 'Deferred' };
    case 'Proposed':
    case 'InProgress':
      return { state: 'in-progress', reason: pod.status.resize };
  }
  if (inProgress) return { state: 'in-progress', reason: 'InProgress' };
  return actuated(pod, same) ? { state: 'none' } : { state: 'in-progress' };
}

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** ComputePodQOS over regular containers' cpu/memory (what a resize may not change). */
export function qosClassOf(containers: ContainerDesired[]): QosClass {
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const req = c.requests ?? {};
    const lim = c.limits ?? {};
    for (const r of ['cpu', 'memory'] as const) {
      if (req[r]) any = true;
      if (lim[r]) any = true;
      if (!lim[r]) guaranteed = false;
      else if (req[r] !== undefined && req[r] !== lim[r]) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
