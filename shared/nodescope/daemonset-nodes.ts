/**
 * The nodes of a cluster a DaemonSet can run on, read live: what an import of history from elsewhere
 * (VerticalPodAutoscalerCheckpoints) is checked against, so another cluster's nodes, or nodes the
 * DaemonSet cannot run on, never enter its states (and its DaemonSet-wide recommendation).
 */

import { nodeFacts } from '../cycle/views.js';
import type { NodeObject } from '../cycle/wire.js';
import type { ClusterClient } from '../k8s/client.js';
import { placementOf, placementProblem } from './eligibility.js';
import type { PodSpecLike } from './k8s-types.js';

/** Why a node cannot take the DaemonSet's history, or undefined when it can. */
export type PlacementCheck = (node: string) => string | undefined;

/** The nodes the DaemonSet can run on, with their labels: what groups by a label key are made of. */
export interface DaemonSetNodes {
  check: PlacementCheck;
  eligible: Map<string, Record<string, string>>;
}

export async function daemonSetNodes(
  client: ClusterClient,
  cluster: string,
  namespace: string,
  name: string,
): Promise<DaemonSetNodes> {
  const ds = await client.call('read daemonset', () =>
    client.apps.readNamespacedDaemonSet({ namespace, name }),
  );
  const placement = placementOf((ds.spec?.template?.spec ?? {}) as PodSpecLike);
  const nodes = await client.listAll('list nodes', (page) => client.core.listNode(page));
  const facts = new Map(nodes.map((n) => [n.metadata?.name ?? '', nodeFacts(n as unknown as NodeObject)]));
  const check: PlacementCheck = (node) => {
    const f = facts.get(node);
    if (!f) return `not a node of cluster ${cluster}`;
    const problem = placementProblem(placement, f);
    return problem ? `${namespace}/${name} cannot run there: ${problem}` : undefined;
  };
  const eligible = new Map<string, Record<string, string>>();
  for (const [node, f] of facts) if (!check(node)) eligible.set(node, f.labels);
  return { check, eligible };
}

export async function daemonSetPlacement(
  client: ClusterClient,
  cluster: string,
  namespace: string,
  name: string,
): Promise<PlacementCheck> {
  return (await daemonSetNodes(client, cluster, namespace, name)).check;
}
