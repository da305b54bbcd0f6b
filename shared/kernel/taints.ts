/**
 * Taints and tolerations as the scheduler matches them (k8s.io/api/core/v1 toleration.go
 * ToleratesTaint; the TaintToleration and NodeUnschedulable filters), shared by node scope's DaemonSet
 * placement and the balloons' reading of which node a waiting pod could land on. The simulator's
 * scheduler keeps its own copy (local/sim/node-fit.ts), which this mirrors.
 */

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

/** What a cordoned node (spec.unschedulable) means to the scheduler's NodeUnschedulable filter. */
export const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

/** ToleratesTaint: an empty key or effect matches any; Exists ignores the value. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
    case '':
      return (t.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

/** The first NoSchedule or NoExecute taint the tolerations do not cover (PreferNoSchedule never filters). */
export function untoleratedTaint(
  tolerations: readonly Toleration[],
  taints: readonly Taint[],
): Taint | undefined {
  return taints.find(
    (taint) =>
      (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') &&
      !tolerations.some((t) => toleratesTaint(t, taint)),
  );
}
