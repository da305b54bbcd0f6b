/**
 * What the balloon cycle reads, from the invocation's shared snapshot: every node, and every pod bound
 * to a node and not finished, counted as the scheduler counts it. A node's request served at once reads
 * only that node and its pods.
 */
import { podLikeOf } from '../cycle/pod-like.js';
import type { ClusterSnapshot } from '../cycle/snapshot.js';
import { effectiveRequests, type NodeFacts, nodeFacts, type PodView } from '../cycle/views.js';
import type { NodeObject } from '../cycle/wire.js';
import { ClusterAccessError } from '../k8s/errors.js';
import { amounts } from './amounts.js';
import type { BalloonNode, BalloonPod, ClusterRead } from './cluster-read.js';
import { balloonPodProblems } from './integrity.js';
import { BALLOON_CONTAINER, BALLOON_NAME, BALLOON_NAMESPACE } from './manifests.js';

export const balloonNode = (n: NodeFacts): BalloonNode => ({
  name: n.name,
  labels: n.labels,
  capacity: amounts(n.capacityCpu, n.capacityMemory),
  allocatable: amounts(n.allocatableCpu, n.allocatableMemory),
  resourceVersion: n.resourceVersion,
  ...(n.uid ? { uid: n.uid } : {}),
  ...(n.createdAt !== undefined ? { createdAt: n.createdAt } : {}),
  ...(n.resizePreemptionOptOut ? { optOut: n.resizePreemptionOptOut } : {}),
  ...(n.taints.length > 0 ? { taints: n.taints } : {}),
  ...(n.unschedulable ? { unschedulable: true } : {}),
});

const holding = (p: PodView) => p.phase !== 'Succeeded' && p.phase !== 'Failed';
const bound = (p: PodView) => p.node !== '' && holding(p);
/**
 * A waiting pod that growing a node can serve: the default scheduler reported it Unschedulable for cpu
 * or memory, and no scheduling gate holds it. Another scheduler's pod, a gated pod, or one waiting for a
 * volume or a port is not served by room.
 */
export const demandable = (p: PodView): boolean =>
  p.waiting?.forResources === true && !p.waiting.gated && p.waiting.schedulerName === 'default-scheduler';
/** Bound pods, pods nominated to a node, and pods waiting for room (the demand a pool may be grown for). */
const boundOrWaiting = (p: PodView) =>
  holding(p) && (p.node !== '' || (!p.terminating && (p.nominated !== undefined || demandable(p))));

/**
 * A balloon is a pod in the balloon namespace whose controller is fleetscope's balloon DaemonSet. The
 * label alone proves nothing (anyone can set it in any namespace): a labelled pod that is not ours is a
 * workload, never written, and reported as an impostor.
 */
export const ownedBalloon = (v: PodView): boolean =>
  v.balloon &&
  v.namespace === BALLOON_NAMESPACE &&
  v.owner?.kind === 'DaemonSet' &&
  v.owner.name === BALLOON_NAME;

/** A pod as balloons count it; `growth` is what earlier phases of the cycle added to it (node scope). */
export function balloonPod(
  v: PodView,
  growth?: ReadonlyMap<string, { cpu: number; memory: number }>,
): BalloonPod {
  const e = effectiveRequests(v);
  const g = growth?.get(v.uid);
  const requests = amounts(e.cpu + (g?.cpu ?? 0), e.memory + (g?.memory ?? 0));
  const balloon = ownedBalloon(v);
  const c = balloon ? v.containers.find((x) => x.name === BALLOON_CONTAINER) : undefined;
  const problems = balloon ? balloonPodProblems(v) : [];
  return {
    namespace: v.namespace,
    name: v.name,
    uid: v.uid,
    node: v.node,
    balloon,
    ...(v.balloon && !balloon ? { impostor: true } : {}),
    requests,
    ...(problems.length > 0 ? { problems } : {}),
    ...(balloon && v.owner?.uid ? { ownerUid: v.owner.uid } : {}),
    ...(v.node === '' ? { nodeSelector: v.nodeSelector ?? {}, tolerations: v.tolerations ?? [] } : {}),
    ...(v.waiting?.terms ? { terms: v.waiting.terms } : {}),
    ...(v.nominated ? { nominated: v.nominated } : {}),
    ...(v.resizePreemptionDisabled ? { resizePreemptionDisabled: true as const } : {}),
    like: balloon ? podLikeOf(v) : {},
    ...(c && (c.allocCpu !== undefined || c.allocMem !== undefined)
      ? { allocated: amounts(c.allocCpu ?? c.reqCpu ?? 0, c.allocMem ?? c.reqMem ?? 0) }
      : {}),
  };
}

/** The whole cluster, from the snapshot (one list of nodes and one of pods, shared with node scope). */
export function snapshotRead(
  snapshot: ClusterSnapshot,
  growth?: ReadonlyMap<string, { cpu: number; memory: number }>,
): ClusterRead {
  return {
    nodes: async () => (await snapshot.nodes()).map(balloonNode),
    pods: async () => (await snapshot.pods({ keep: boundOrWaiting })).map((p) => balloonPod(p, growth)),
  };
}

/** One node, read by name; undefined when it does not exist. */
export async function readNode(snapshot: ClusterSnapshot, node: string): Promise<NodeFacts | undefined> {
  try {
    return nodeFacts(
      await snapshot.reader.get<NodeObject>('read node', `/api/v1/nodes/${encodeURIComponent(node)}`),
    );
  } catch (err) {
    if (err instanceof ClusterAccessError && err.status === 404) return undefined;
    throw err;
  }
}

/** One node (already read) and its pods, for an explicit request served at once: one filtered list. */
export function nodeRead(snapshot: ClusterSnapshot, node: NodeFacts): ClusterRead {
  return {
    nodes: async () => [balloonNode(node)],
    pods: async () =>
      (await snapshot.pods({ fieldSelector: `spec.nodeName=${node.name}`, keep: bound })).map((p) =>
        balloonPod(p),
      ),
  };
}
