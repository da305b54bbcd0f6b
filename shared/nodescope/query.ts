/**
 * Reading recommendations back: per cluster, DaemonSet and node, from DynamoDB alone.
 *   stored  what the last fold stored (per node, and DaemonSet-wide in the head)
 *   live    recomputed from the stored states (base + log) exactly as the next cycle would, so it
 *           equals what the last cycle computed: the check that a restart loses nothing
 */
import { nodeRecommendation, recommendDsWide } from './engine.js';
import type { ContainerRec, NodeRec } from './model.js';
import type { PodRequests } from './pod-requests.js';
import { loadDs } from './state.js';
import { type DsHead, dsKeyOf, type NodeScopeStore } from './store.js';
import type { NodeScopeTarget } from './targets.js';

export interface DaemonSetRecommendations {
  cluster: string;
  namespace: string;
  name: string;
  vpa: string;
  updateMode: string;
  /** As of (RFC 3339, the cluster's clock): the base's time (stored) or the last stored cycle's (live). */
  asOf: string;
  mode: 'stored' | 'live';
  dsWide: Record<string, ContainerRec>;
  nodes: Record<string, NodeRec>;
  stats: DsHead['stats'];
  /** What the DaemonSet's template requests, per container: what a new pod starts with. */
  requests: Record<string, { cpu?: number; memory?: number }>;
  /** What each node's pod requests now (the pods, not the template), as the last cycle saw them. */
  podRequests: PodRequests;
}

/** The target as the head recorded it (enough to recommend exactly as the cycle did). */
export function targetFromHead(head: DsHead): NodeScopeTarget {
  return {
    vpa: head.vpa,
    ds: { namespace: head.namespace, name: head.name, uid: '' },
    selector: '',
    placement: { tolerations: [] },
    containers: head.template,
    updateMode: head.updateMode as NodeScopeTarget['updateMode'],
    apply: 'off',
    policies: head.policies,
    via: 'annotation',
    digest: head.digest,
  };
}

export async function listDaemonSets(store: NodeScopeStore, cluster?: string): Promise<DsHead[]> {
  const heads = cluster ? await store.listHeads(cluster) : await store.listAllHeads();
  return heads.sort((a, b) =>
    `${a.cluster}/${a.namespace}/${a.name}` < `${b.cluster}/${b.namespace}/${b.name}` ? -1 : 1,
  );
}

export async function getRecommendations(
  store: NodeScopeStore,
  cluster: string,
  namespace: string,
  name: string,
  opts: { node?: string; live?: boolean } = {},
): Promise<DaemonSetRecommendations | undefined> {
  const ds = dsKeyOf(namespace, name);
  const head = await store.getHead(cluster, ds);
  if (!head) return undefined;
  const [loaded, apply] = await Promise.all([
    loadDs(store, head, cluster, ds, head.containers, { replay: opts.live ?? false }),
    store.getApply(cluster, ds),
  ]);
  const nodes: Record<string, NodeRec> = {};
  let dsWide = head.dsWide;
  let asOf = new Date(head.baseAt).toISOString();
  if (opts.live) {
    const target = targetFromHead(head);
    dsWide = recommendDsWide(target, loaded.model);
    // The nodes the last fold recommended for (those the DaemonSet can run on) plus any new ones seen.
    const names = new Set<string>();
    for (const [n, r] of loaded.model.nodes) if (r.rec || r.states.some((s) => s)) names.add(n);
    for (const n of names) {
      if (opts.node && n !== opts.node) continue;
      const rec = loaded.model.nodes.get(n);
      const r = nodeRecommendation(target, rec, dsWide);
      if (r) nodes[n] = r;
    }
    // The last cycle's own time (the cluster's clock), not its key: a key may come from another clock.
    const lastAt = Math.max(head.baseAt, ...loaded.logs.map((l) => l.at));
    asOf = new Date(lastAt).toISOString();
  } else {
    for (const [n, r] of loaded.model.nodes) {
      if (opts.node && n !== opts.node) continue;
      if (r.rec) nodes[n] = r.rec;
    }
  }
  return {
    cluster,
    namespace,
    name,
    vpa: head.vpa.name,
    updateMode: head.updateMode,
    asOf,
    mode: opts.live ? 'live' : 'stored',
    dsWide,
    nodes,
    stats: head.stats,
    requests: Object.fromEntries(head.template.map((c) => [c.name, c.requests])),
    podRequests: apply.requests ?? {},
  };
}
