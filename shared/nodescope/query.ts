/**
 * Reading recommendations back: per cluster, DaemonSet and node, from DynamoDB alone.
 *   stored  what the last fold stored (per node, and DaemonSet-wide in the head)
 *   live    recomputed from the stored states (base + log) exactly as the next cycle would, so it
 *           equals what the last cycle computed: the check that a restart loses nothing
 */

import { groupsFromHead, storedValues } from './groups.js';
import type { GuardsSummary } from './guards/summary.js';
import type { ContainerRec, DsModel, NodeRec } from './model.js';
import type { PodRequests } from './pod-requests.js';
import { DsRecommendations } from './recommend.js';
import { loadCurrent } from './state.js';
import { type DsHead, dsKeyOf, type NodeScopeStore } from './store.js';
import { type NodeScopeTarget, scopeOf, type TargetScope } from './targets.js';

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
  /** The scope, and each group's recommendation by scope value of its group label. */
  scope: TargetScope;
  groups: Record<string, Record<string, ContainerRec>>;
  nodes: Record<string, NodeRec>;
  stats: DsHead['stats'];
  /** What the DaemonSet's template requests, per container: what a new pod starts with. */
  requests: Record<string, { cpu?: number; memory?: number }>;
  /** What each node's pod requests now (the pods, not the template), as the last cycle saw them. */
  podRequests: PodRequests;
  /** What the resize guards held back at the last cycle that changed it (guards/summary.ts). */
  guards?: GuardsSummary;
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
    scope: head.scope ?? scopeOf('node', undefined),
    digest: head.digest,
  };
}

/**
 * Recommends for some nodes from stored states alone, as a fold would: groups from the membership the
 * last fold recorded and the stored cycles since (a node's labels are not stored otherwise).
 */
export function recommendFromStorage(
  head: DsHead,
  model: DsModel,
  nodes: ReadonlySet<string>,
  logs: readonly { groups?: readonly [string, string][] }[] = [],
): DsRecommendations {
  const values = new Map<string, string>();
  for (const [n, v] of storedValues(model, logs)) if (nodes.has(n)) values.set(n, v);
  const entry = { at: head.baseAt, gen: head.gen, containers: head.containers, samples: [], ooms: [] };
  return DsRecommendations.folded(targetFromHead(head), model, entry, nodes, values);
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
  const [current, apply] = await Promise.all([
    loadCurrent(store, cluster, ds, { replay: opts.live ?? false }),
    store.getApply(cluster, ds),
  ]);
  if (!current) return undefined;
  const { head, loaded } = current;
  const nodes: Record<string, NodeRec> = {};
  let dsWide = head.dsWide;
  let groups = groupsFromHead(head);
  let asOf = new Date(head.baseAt).toISOString();
  if (opts.live) {
    // The nodes the last fold recommended for (those the DaemonSet can run on) plus any new ones seen
    // (with samples, or grouped by a cycle since).
    const names = new Set<string>();
    for (const [n, r] of loaded.model.nodes)
      if (r.rec || r.states.some((s) => s) || r.raw?.some((b) => b)) names.add(n);
    for (const l of loaded.logs) for (const [n] of l.groups) names.add(n);
    const recs = recommendFromStorage(head, loaded.model, names, loaded.logs);
    dsWide = recs.dsWide;
    groups = recs.groups;
    for (const [n, r] of recs.recs) if (!opts.node || n === opts.node) nodes[n] = r;
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
    scope: head.scope ?? scopeOf('node', undefined),
    groups: Object.fromEntries(groups),
    nodes,
    stats: head.stats,
    requests: Object.fromEntries(head.template.map((c) => [c.name, c.requests])),
    podRequests: apply.requests ?? {},
    ...(apply.guards ? { guards: apply.guards } : {}),
  };
}
