/**
 * When a pod's recommendation is worth applying, following upstream's updater
 * (vertical-pod-autoscaler/pkg/updater/priority: UpdatePriorityCalculator):
 *   - a container's request is outside [lowerBound, upperBound] (or unset), or
 *   - a container was OOM-killed less than 10 minutes after it started ("quick OOM"), or
 *   - the pod is at least 12 hours old and the summed relative change of its requests is at least 10%.
 * Candidates are ordered as upstream orders them: scale-ups first, then by the size of the change.
 *
 * Node scope never evicts: the change is made in place (shared/resize). A pod the DaemonSet controller
 * has just (re)created still has the template's resources; it is sized at once, as upstream's admission
 * controller would size it at creation, in every mode but Off (this is all that Initial does).
 */

import type { PodView } from '../cycle/views.js';
import type { ContainerDesired, DesiredResources } from '../resize/index.js';
import { limitOf, requestOf } from './collect.js';
import type { ContainerRec, NodeRec } from './model.js';
import type { NodeScopeTarget } from './targets.js';

export interface UpdaterSettings {
  /** --pod-update-threshold equivalent: pods younger than this are updated only when outside bounds. */
  podLifetimeUpdateThresholdMs: number;
  /** --min-change-priority: the summed relative change that makes an old pod worth updating. */
  minChangePriority: number;
  /** --evict-after-oom-threshold: an OOM kill this soon after start makes the pod urgent. */
  evictAfterOomThresholdMs: number;
}

export const DEFAULT_UPDATER: Readonly<UpdaterSettings> = Object.freeze({
  podLifetimeUpdateThresholdMs: 12 * 3_600_000,
  minChangePriority: 0.1,
  evictAfterOomThresholdMs: 10 * 60_000,
});

export interface UpdateDecision {
  node: string;
  pod: PodView;
  desired: DesiredResources;
  fresh: boolean;
  outsideRange: boolean;
  quickOom: boolean;
  scaleUp: boolean;
  resourceDiff: number;
  why: string;
}

const RESOURCES = ['cpu', 'memory'] as const;

/** The resources to request for a pod: targets of controlled resources, proportional limits where set. */
export function desiredFor(target: NodeScopeTarget, rec: NodeRec, pod: PodView): DesiredResources {
  const out: DesiredResources = {};
  for (const c of pod.containers) {
    const policy = target.policies[c.name];
    if (policy?.mode === 'Off') continue;
    const r: ContainerRec | undefined = rec.containers[c.name];
    if (!r) continue;
    const d: ContainerDesired = {};
    const requests: ContainerDesired['requests'] = {};
    for (const res of RESOURCES) if (r.target[res] !== undefined) requests[res] = r.target[res];
    if (Object.keys(requests).length > 0) d.requests = requests;
    if ((policy?.controlledValues ?? 'RequestsAndLimits') === 'RequestsAndLimits' && r.limits) {
      const limits: ContainerDesired['limits'] = {};
      for (const res of RESOURCES)
        if (r.limits[res] !== undefined && limitOf(c, res) !== undefined) limits[res] = r.limits[res];
      if (Object.keys(limits).length > 0) d.limits = limits;
    }
    if (d.requests || d.limits) out[c.name] = d;
  }
  return out;
}

/** Whether the pod still has the template's requests (the DaemonSet controller created it, nobody sized it). */
export function isFresh(target: NodeScopeTarget, pod: PodView): boolean {
  for (const t of target.containers) {
    const c = pod.containers.find((x) => x.name === t.name);
    if (!c) return false;
    for (const res of RESOURCES) if (requestOf(c, res) !== (t.requests[res] ?? undefined)) return false;
  }
  return true;
}

/** Upstream's getUpdatePriority over the pod's containers that have a recommendation. */
export function updatePriority(
  target: NodeScopeTarget,
  rec: NodeRec,
  pod: PodView,
): { outsideRange: boolean; scaleUp: boolean; resourceDiff: number } {
  let outsideRange = false;
  let scaleUp = false;
  // Per resource (cpu, memory): the summed requests and recommendations, and whether any was recommended.
  const totalRequest = [0, 0];
  const totalRecommended = [0, 0];
  const recommendedAny = [false, false];
  for (const c of pod.containers) {
    if (target.policies[c.name]?.mode === 'Off') continue;
    const r = rec.containers[c.name];
    if (!r) continue;
    for (let k = 0; k < RESOURCES.length; k++) {
      const res = RESOURCES[k] as (typeof RESOURCES)[number];
      const recommended = r.target[res];
      if (recommended === undefined) continue;
      // MilliValue: millicores for CPU, bytes × 1000 for memory.
      const scale = res === 'cpu' ? 1 : 1000;
      totalRecommended[k] = (totalRecommended[k] as number) + recommended * scale;
      recommendedAny[k] = true;
      const request = requestOf(c, res);
      if (request === undefined) {
        scaleUp = true;
        outsideRange = true;
        continue;
      }
      totalRequest[k] = (totalRequest[k] as number) + request * scale;
      if (recommended > request) scaleUp = true;
      const lower = r.lowerBound[res];
      const upper = r.upperBound[res];
      if ((lower !== undefined && request < lower) || (upper !== undefined && request > upper))
        outsideRange = true;
    }
  }
  let resourceDiff = 0;
  for (let k = 0; k < RESOURCES.length; k++) {
    if (!recommendedAny[k]) continue;
    const request = Math.max(totalRequest[k] as number, 1);
    resourceDiff += Math.abs(request - (totalRecommended[k] as number)) / request;
  }
  return { outsideRange, scaleUp, resourceDiff };
}

/**
 * Whether and why the pod should be resized now; undefined when not (or when mode is Off). The
 * resources to request are worked out last, for the pods that get a decision (few, once a DaemonSet
 * has converged).
 */
export function decideUpdate(
  target: NodeScopeTarget,
  rec: NodeRec,
  pod: PodView,
  now: number,
  s: UpdaterSettings = DEFAULT_UPDATER,
): UpdateDecision | undefined {
  if (target.apply === 'off') return undefined;
  const fresh = isFresh(target, pod);
  const p = updatePriority(target, rec, pod);
  const quickOom = pod.containers.some(
    (c) =>
      target.policies[c.name]?.mode !== 'Off' &&
      c.oomAt !== undefined &&
      c.oomRanMs !== undefined &&
      c.oomRanMs < s.evictAfterOomThresholdMs,
  );
  const why = reason(target, pod, now, s, { fresh, quickOom, ...p });
  if (why === undefined) return undefined;
  const desired = desiredFor(target, rec, pod);
  if (Object.keys(desired).length === 0) return undefined;
  return { node: pod.node, pod, desired, fresh, quickOom, ...p, why };
}

/** Upstream's rules in their order: why the pod is due for an update, or undefined. */
function reason(
  target: NodeScopeTarget,
  pod: PodView,
  now: number,
  s: UpdaterSettings,
  d: { fresh: boolean; quickOom: boolean; outsideRange: boolean; resourceDiff: number },
): string | undefined {
  if (d.fresh) return 'the pod has the template resources (created by the DaemonSet controller)';
  if (target.apply === 'initial') return undefined;
  if (d.outsideRange) return 'a request is outside the recommended range';
  if (d.quickOom) return 'a container was OOM-killed soon after it started';
  if (pod.startTime === undefined || now - pod.startTime < s.podLifetimeUpdateThresholdMs) return undefined;
  if (d.resourceDiff < s.minChangePriority) return undefined;
  return `the requests differ from the recommendation by ${(d.resourceDiff * 100).toFixed(0)}%`;
}

/** Upstream's order: fresh pods first (admission), then scale-ups, then the larger change. */
export function byPriority(a: UpdateDecision, b: UpdateDecision): number {
  if (a.fresh !== b.fresh) return a.fresh ? -1 : 1;
  if (a.scaleUp !== b.scaleUp) return a.scaleUp ? -1 : 1;
  if (a.resourceDiff !== b.resourceDiff) return b.resourceDiff - a.resourceDiff;
  return a.node < b.node ? -1 : a.node > b.node ? 1 : 0;
}
