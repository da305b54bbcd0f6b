/**
 * Reading claims for people: the CLI (`claims get`, `clusterset list`), `cluster list`'s ID and
 * ClusterSet columns, and the `npm start` summary. Everything here reads the claims' store only.
 */

import { mapLimit } from '../kernel/map-limit.js';
import { textTable } from '../kernel/text-table.js';
import type { EventPublisher } from '../platform/publisher.js';
import { desiredClaims } from './identity.js';
import { joinClusterSet } from './membership.js';
import { CLUSTER_ID_CLAIM, CLUSTERSET_CLAIM, ID_CLAIM } from './rules.js';
import type { ClaimStore, StoredIdentity, SyncStatus } from './store.js';

export interface ClaimsView {
  cluster: string;
  identity?: StoredIdentity;
  custom: Record<string, string>;
  /** The claims as they must be in the cluster, by name (well-known first). */
  claims: Record<string, string>;
  sync?: SyncStatus;
}

export async function claimsView(store: ClaimStore, cluster: string): Promise<ClaimsView> {
  const [identity, custom, sync, settings] = await Promise.all([
    store.getIdentity(cluster),
    store.getCustom(cluster),
    store.getSyncStatus(cluster),
    store.settingsFor(cluster),
  ]);
  return {
    cluster,
    ...(identity ? { identity } : {}),
    custom,
    claims: Object.fromEntries(desiredClaims(identity, custom, settings)),
    ...(sync ? { sync } : {}),
  };
}

const short = (v: string, max = 80) => (v.length > max ? `${v.slice(0, max - 3)}... (${v.length} chars)` : v);

function syncLine(s: SyncStatus | undefined): string {
  if (!s) return 'not written yet';
  const base = `${s.state} at ${s.at}`;
  const ocm = s.ocm === 'mirrored' ? ', mirrored to OCM ClusterClaims' : '';
  return `${base}${ocm}${s.error ? ` (${s.error})` : ''}`;
}

/** `claims get --cluster NAME`: the claims with their values, where they come from, and the last sync. */
export function describeClaims(view: ClaimsView): string[] {
  const i = view.identity;
  const rows: [string, string][] = [];
  if (!i) {
    rows.push([ID_CLAIM, '(none yet: the cluster has not been reached since registration)']);
  } else {
    rows.push([
      ID_CLAIM,
      `${i.clusterId}  (${i.idSource === 'operator' ? 'set by the operator' : 'kube-system UID'})`,
    ]);
    if (view.claims[CLUSTER_ID_CLAIM])
      rows.push([CLUSTER_ID_CLAIM, `${view.claims[CLUSTER_ID_CLAIM]}  (same ID, newer name)`]);
    rows.push([
      CLUSTERSET_CLAIM,
      i.clusterSet
        ? `${i.clusterSet}  (member since ${i.memberSince ?? '?'})`
        : '(absent: not a member of a ClusterSet)',
    ]);
    if (i.pending)
      rows.push([
        'pending',
        `${i.pending.op} ${i.pending.set} since ${i.pending.at} (the reconciler finishes or drops it)`,
      ]);
  }
  for (const [name, value] of Object.entries(view.custom).sort(([a], [b]) => a.localeCompare(b)))
    rows.push([name, short(value)]);
  const width = Math.max(...rows.map(([k]) => k.length), 'in-cluster'.length);
  return [
    `cluster ${view.cluster}`,
    ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`),
    `  ${'in-cluster'.padEnd(width)}  ${syncLine(view.sync)}`,
  ];
}

/** The ID and ClusterSet of each named cluster ("-" when unknown / not a member): for `cluster list`. */
export async function identityColumns(
  store: ClaimStore,
  clusters: string[],
): Promise<Record<string, { id?: string; clusterSet?: string }>> {
  // One query for the fleet, not one read per cluster: a listing may be a moment behind.
  const byCluster = new Map((await store.listIdentities()).map((i) => [i.cluster, i]));
  // Absent stays absent (JSON and YAML carry it): a table shows its own placeholder.
  const out: Record<string, { id?: string; clusterSet?: string }> = {};
  for (const c of clusters) {
    const i = byCluster.get(c);
    out[c] = {
      ...(i?.clusterId ? { id: i.clusterId } : {}),
      ...(i?.clusterSet ? { clusterSet: i.clusterSet } : {}),
    };
  }
  return out;
}

/** --sort-by keys of the claims table (`claims get` without --cluster). */
export const CLAIMS_SORTS: Record<string, (a: StoredIdentity, b: StoredIdentity) => number> = {
  cluster: (a, b) => a.cluster.localeCompare(b.cluster),
  id: (a, b) => a.clusterId.localeCompare(b.clusterId),
  clusterset: (a, b) =>
    (a.clusterSet ?? '~').localeCompare(b.clusterSet ?? '~') || a.cluster.localeCompare(b.cluster),
};

/**
 * Every cluster's claims in one table (npm start's summary; `claims get` without --cluster); wide adds
 * where the ID came from and when the claims were last checked in the cluster.
 */
export async function claimsSummaryLines(
  store: ClaimStore,
  opts: { wide?: boolean; sortBy?: string } = {},
): Promise<string[]> {
  const sort = CLAIMS_SORTS[opts.sortBy ?? 'cluster'] ?? CLAIMS_SORTS.cluster;
  const identities = (await store.listIdentities()).sort(sort);
  const sets = new Set(identities.map((i) => i.clusterSet).filter(Boolean));
  const lines = [`claims: ${identities.length} cluster(s) with an ID, ${sets.size} ClusterSet(s)`];
  if (identities.length === 0) return lines;
  // Syncs 100 to a request; custom claim names (not their values) a query per cluster, 32 at a time.
  const syncs = await store.syncStatuses(identities.map((i) => i.cluster));
  const customNames = await mapLimit(identities, 32, (i) => store.customNames(i.cluster));
  const rows = identities.map((i, k) => {
    const sync = syncs.get(i.cluster);
    const names = [...(customNames[k] ?? [])].sort();
    return [
      i.cluster,
      i.clusterId,
      i.clusterSet ?? '-',
      names.length ? names.join(',') : '-',
      sync ? `${sync.state}${sync.error ? `: ${short(sync.error, 60)}` : ''}` : '-',
      ...(opts.wide ? [i.idSource ?? '-', sync?.at ?? '-'] : []),
    ];
  });
  const head = ['CLUSTER', 'ID (id.k8s.io)', 'CLUSTERSET', 'CUSTOM CLAIMS', 'IN-CLUSTER'];
  if (opts.wide) head.push('ID SOURCE', 'LAST CHECK');
  lines.push(...textTable([head, ...rows]));
  return lines;
}

/** Members of each ClusterSet (`clusterset list`). */
export async function clusterSetLines(store: ClaimStore, only?: string, wide = false): Promise<string[]> {
  const identities = await store.listIdentities();
  const bySet = new Map<string, StoredIdentity[]>();
  for (const i of identities) {
    const set = i.clusterSet ?? i.pending?.set;
    if (!set || (only && set !== only)) continue;
    bySet.set(set, [...(bySet.get(set) ?? []), i]);
  }
  if (bySet.size === 0) return [only ? `ClusterSet ${only} has no members` : 'no ClusterSets'];
  const rows = [['CLUSTERSET', 'CLUSTER', 'ID', 'MEMBER SINCE', ...(wide ? ['ID SOURCE', 'PENDING'] : [])]];
  for (const set of [...bySet.keys()].sort()) {
    for (const i of bySet.get(set)!.sort((a, b) => a.cluster.localeCompare(b.cluster))) {
      rows.push([
        set,
        i.cluster,
        i.clusterId,
        i.clusterSet === set ? (i.memberSince ?? '-') : `(${i.pending?.op} in progress)`,
        ...(wide
          ? [i.idSource ?? '-', i.pending ? `${i.pending.op} ${i.pending.set ?? ''}`.trim() : '-']
          : []),
      ]);
    }
  }
  return textTable(rows);
}

/**
 * `npm start`: puts the demo clusters into ClusterSets, alternately (demo-1 -> sets[0], demo-2 -> sets[1],
 * ...). Idempotent across restarts; a cluster already in another set stays there. Returns what it did.
 */
export async function joinDemoClusterSets(
  store: ClaimStore,
  publisher: EventPublisher,
  clusters: string[],
  sets: string[] = ['blue', 'green'],
): Promise<string[]> {
  const lines: string[] = [];
  for (const [n, cluster] of clusters.entries()) {
    const set = sets[n % sets.length]!;
    try {
      const current = await store.getIdentity(cluster);
      if (current?.clusterSet && current.clusterSet !== set) continue;
      const r = await joinClusterSet({ store, publisher }, cluster, set);
      if (r.changed) lines.push(`${cluster} joined ClusterSet ${set} (id.k8s.io ${r.clusterId})`);
    } catch (err) {
      lines.push(`${cluster} could not join ${set}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return lines;
}
