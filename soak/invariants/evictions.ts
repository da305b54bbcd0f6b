/**
 * Balloons hold capacity for pods and give it back by shrinking, never by making room: no pod other
 * than a balloon is ever deleted or evicted by fleetscope. Every pod-removal request that reached an
 * apiserver (the soak itself removes none) is checked against the pod it named.
 */
import { BALLOON_LABEL } from '../../shared/balloons/manifests.js';
import type { PodRemoval } from '../records.js';
import type { Invariant, Outcome } from '../types.js';

export function judgeRemovals(removals: PodRemoval[], watched: number): Outcome {
  const violations = removals
    .filter((r) => !r.balloon)
    .map((r) => `${r.cluster} ${r.pod}: ${r.how} (HTTP ${r.status}) of a pod that is not a balloon`);
  return { checked: watched, unit: `pods watched (${removals.length} removal requests)`, violations };
}

export const isBalloon = (labels: Record<string, string> | undefined) => labels?.[BALLOON_LABEL] === 'true';

export const noPodEvicted: Invariant = {
  name: 'no non-balloon pod ever evicted',
  check: async (state) => {
    const watched = (state.sim?.clusters ?? []).reduce(
      (n, c) => n + c.store.list('pods').filter((p) => !isBalloon(p.metadata?.labels)).length,
      0,
    );
    return judgeRemovals(state.removals, watched);
  },
};
