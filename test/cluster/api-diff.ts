/**
 * The real-cluster counterpart of test/features/cluster-diff.ts: instead of watching the simulator's
 * store, every listable kind the apiserver serves (found by discovery, so a kind a feature starts to
 * touch is covered without a list to keep) is listed through the API before on, after use and after off,
 * and compared with the same words and the same allowances. Ids are the simulator's (`plural.group/ns/name`).
 */
import { type Allowed, damageOf } from '../features/cluster-diff.js';
import type { ClusterHandle } from '../support/real-cluster.js';

type Obj = {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: object };
};
/** The aggregator's own APIService per served group version (a CRD's group included): the CRD is judged. */
const automanaged = (o: Obj) => o.metadata?.labels?.['kube-aggregator.kubernetes.io/automanaged'] === 'true';
export type Snapshot = Map<string, Obj & { spec?: object }>;

/** What the real control plane itself keeps changing (heartbeats, records of what happened, metrics). */
const CHURN = [
  /^events(\.events\.k8s\.io)?\//,
  /^leases\.coordination\.k8s\.io\/kube-(node-lease|system)\//,
  /^endpoints\//,
  /^endpointslices\.discovery\.k8s\.io\//,
  /^nodes\//,
];
const SKIP_GROUPS = new Set(['metrics.k8s.io']);

interface Resource {
  name: string;
  verbs: string[];
}

async function resources(k: ClusterHandle, path: string): Promise<Resource[]> {
  const r = await k.raw('GET', path);
  if (r.status !== 200) throw new Error(`discovery ${path}: ${r.status} ${r.text}`);
  return ((r.json?.resources ?? []) as Resource[]).filter(
    (x) => !x.name.includes('/') && x.verbs.includes('list'),
  );
}

/** Every object of every listable kind, by id. */
export async function snapshot(k: ClusterHandle): Promise<Snapshot> {
  const lists: { path: string; prefix: string }[] = [];
  for (const res of await resources(k, '/api/v1'))
    lists.push({ path: `/api/v1/${res.name}`, prefix: res.name });
  const groups = (await k.raw('GET', '/apis')).json?.groups as {
    name: string;
    preferredVersion: { groupVersion: string };
  }[];
  for (const g of groups.filter((x) => !SKIP_GROUPS.has(x.name))) {
    const gv = g.preferredVersion.groupVersion;
    for (const res of await resources(k, `/apis/${gv}`))
      lists.push({ path: `/apis/${gv}/${res.name}`, prefix: `${res.name}.${g.name}` });
  }
  const out: Snapshot = new Map();
  for (const l of lists) {
    const r = await k.raw('GET', l.path);
    if (r.status !== 200) throw new Error(`listing ${l.path}: ${r.status} ${r.text}`);
    for (const o of (r.json?.items ?? []) as Obj[]) {
      const m = o.metadata ?? {};
      const id = `${l.prefix}/${m.namespace ? `${m.namespace}/` : ''}${m.name}`;
      if (!CHURN.some((c) => c.test(id)) && !automanaged(o)) out.set(id, o);
    }
  }
  return out;
}

/** Every difference the feature may not leave, in words ([] when it left the cluster as it was). */
export function damage(before: Snapshot, used: Snapshot, after: Snapshot, allowed: Allowed): string[] {
  const created = new Set([...used.keys(), ...after.keys()].filter((id) => !before.has(id)));
  return damageOf(created, before, (id) => after.get(id), allowed);
}
