/**
 * Which nodes a DaemonSet can run on (the DaemonSet controller's predicates): the template's
 * nodeSelector, required node affinity (matchExpressions on labels, matchFields on metadata.name), and
 * taints with effect NoSchedule or NoExecute that its tolerations do not cover, after the tolerations
 * the controller adds to every DaemonSet pod. Nodes a DaemonSet cannot run on get no recommendation and
 * no fallback. The simulator's DaemonSet controller places pods by the same rules.
 */
import type { NodeFacts } from '../cycle/views.js';
import { termMatches } from '../kernel/node-affinity.js';
import { type Toleration, toleratesTaint } from '../kernel/taints.js';
import type { NodeSelectorTerm, PodSpecLike } from './k8s-types.js';

export type { NodeSelectorRequirement, NodeSelectorTerm } from './k8s-types.js';
export { type Toleration, toleratesTaint };

export interface PlacementFacts {
  nodeSelector?: Record<string, string>;
  requiredTerms?: NodeSelectorTerm[];
  tolerations: Toleration[];
  hostNetwork?: boolean;
}

/** What pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations adds to every DaemonSet pod. */
export const DAEMON_POD_TOLERATIONS: readonly Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];
/** ... and, to pods with hostNetwork, this one. */
export const HOST_NETWORK_TOLERATION: Toleration = {
  key: 'node.kubernetes.io/network-unavailable',
  operator: 'Exists',
  effect: 'NoSchedule',
};

/** A DaemonSet pod's tolerations: its own and the ones the controller adds. */
export function daemonSetTolerations(own: readonly Toleration[], hostNetwork = false): Toleration[] {
  return [...own, ...DAEMON_POD_TOLERATIONS, ...(hostNetwork ? [HOST_NETWORK_TOLERATION] : [])];
}

/** The placement facts of a pod template's spec. */
export function placementOf(spec: PodSpecLike): PlacementFacts {
  const terms =
    spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  return {
    ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
    ...(terms ? { requiredTerms: terms } : {}),
    tolerations: spec.tolerations ?? [],
    ...(spec.hostNetwork ? { hostNetwork: true } : {}),
  };
}

/** What placement looks at on a node. */
export type NodePlacementFacts = Pick<NodeFacts, 'name' | 'labels' | 'taints'>;

/** Why the DaemonSet cannot run on the node, or undefined when it can. */
export function placementProblem(p: PlacementFacts, node: NodePlacementFacts): string | undefined {
  for (const [k, v] of Object.entries(p.nodeSelector ?? {}))
    if (node.labels[k] !== v) return `nodeSelector ${k}=${v} does not match`;
  if (p.requiredTerms && p.requiredTerms.length > 0 && !p.requiredTerms.some((t) => termMatches(t, node)))
    return 'required node affinity does not match';
  let tolerations: Toleration[] | undefined;
  for (const taint of node.taints) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    tolerations ??= daemonSetTolerations(p.tolerations, p.hostNetwork);
    if (!tolerations.some((t) => toleratesTaint(t, taint)))
      return `taint ${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect} is not tolerated`;
  }
  return undefined;
}
