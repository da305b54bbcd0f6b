/**
 * Discovery documents: legacy (/api, /apis, /apis/<g>, APIResourceList per group-version) and the
 * aggregated apidiscovery.k8s.io/v2 form kubectl asks for first.
 */
import type { JsonObject } from './json.js';
import { GROUP_ORDER, type ResourceDef, storageVersionHash } from './registry.js';

const CR_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];

/** Kubernetes version priority: GA > beta > alpha, higher numbers first, then the rest alphabetically. */
/**
 * Resources a real server still keeps in etcd at an older version than it serves: the hash names that
 * encoding (seen on 1.33 and 1.36 by npm run fidelity).
 */
const ETCD_VERSION: Record<string, string> = { customresourcedefinitions: 'v1beta1' };

export function compareKubeVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    return [Number(m[1]), m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2, Number(m[3] ?? 0)];
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa && !pb) return -1;
  if (!pa && pb) return 1;
  if (!pa || !pb) return a < b ? -1 : a > b ? 1 : 0;
  if (pa[1] !== pb[1]) return pb[1] - pa[1];
  if (pa[0] !== pb[0]) return pb[0] - pa[0];
  return pb[2] - pa[2];
}

export interface GroupInfo {
  name: string;
  versions: string[];
  /** Aggregated (APIService-backed) groups are listed in /apis even when their backend is down. */
  aggregated?: boolean;
}

/** Groups in the order /apis lists them: built-ins, then CRD groups, then aggregated groups. */
export function groupsOf(resources: ResourceDef[], extra: GroupInfo[] = []): GroupInfo[] {
  const byGroup = new Map<string, Set<string>>();
  for (const r of resources) {
    if (!r.group) continue;
    let s = byGroup.get(r.group);
    if (!s) {
      s = new Set();
      byGroup.set(r.group, s);
    }
    for (const v of r.versions) s.add(v);
  }
  const rank = (g: string): number => {
    const i = GROUP_ORDER.indexOf(g);
    return i < 0 ? GROUP_ORDER.length : i;
  };
  const groups: GroupInfo[] = [...byGroup.entries()].map(([name, vs]) => ({
    name,
    versions: [...vs].sort(compareKubeVersions),
  }));
  groups.sort((a, b) => rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of extra) if (!groups.some((g) => g.name === e.name)) groups.push(e);
  return groups;
}

const gv = (group: string, version: string): string => (group ? `${group}/${version}` : version);

function apiGroup(g: GroupInfo): JsonObject {
  const versions = g.versions.map((v) => ({ groupVersion: gv(g.name, v), version: v }));
  return { name: g.name, versions, preferredVersion: versions[0] };
}

export function apiVersions(serverAddress: string): JsonObject {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

export function apiGroupList(groups: GroupInfo[]): JsonObject {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(apiGroup) };
}

export function apiGroupDoc(g: GroupInfo): JsonObject {
  return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g) };
}

/** APIResourceList for one group-version. Core v1 has no apiVersion field, as recorded. */
export function apiResourceList(group: string, version: string, resources: ResourceDef[]): JsonObject {
  const list: JsonObject[] = [];
  for (const r of resources) {
    if (r.group !== group || !r.versions.includes(version)) continue;
    const entry: JsonObject = {
      name: r.resource,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.custom ? CR_VERBS : r.verbs,
    };
    if (r.shortNames?.length) entry.shortNames = r.shortNames;
    if (r.categories?.length) entry.categories = r.categories;
    if (!r.virtual && r.group !== 'metrics.k8s.io')
      entry.storageVersionHash = storageVersionHash(
        r.group,
        ETCD_VERSION[r.resource] ?? r.storageVersion,
        r.kind,
      );
    list.push(entry);
    for (const s of r.subresources) {
      if (r.custom && s.name === 'status' && !r.custom.versions[version]?.status) continue;
      const sub: JsonObject = { name: `${r.resource}/${s.name}`, singularName: '', namespaced: r.namespaced };
      if (s.group !== undefined) {
        sub.group = s.group;
        sub.version = s.version;
      }
      sub.kind = s.kind;
      sub.verbs = s.verbs;
      list.push(sub);
    }
  }
  list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const doc: JsonObject = { kind: 'APIResourceList' };
  if (group) doc.apiVersion = 'v1';
  doc.groupVersion = gv(group, version);
  doc.resources = list;
  return doc;
}

export const AGGREGATED_CONTENT_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** Whether an Accept header asks for aggregated discovery (v2 or v2beta1). */
export function wantsAggregated(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  if (!accept) return undefined;
  for (const part of accept.split(',')) {
    const p = part.replace(/\s/g, '');
    if (p.includes('g=apidiscovery.k8s.io') && p.includes('as=APIGroupDiscoveryList')) {
      if (p.includes('v=v2beta1')) return 'v2beta1';
      if (p.includes('v=v2')) return 'v2';
    }
  }
  return undefined;
}

/** apidiscovery.k8s.io APIGroupDiscoveryList for /api (core) or /apis (every group). */
export function aggregatedDiscovery(
  version: 'v2' | 'v2beta1',
  groups: GroupInfo[],
  resources: ResourceDef[],
  core: boolean,
): JsonObject {
  const items: JsonObject[] = [];
  const groupNames = core ? [''] : groups.map((g) => g.name);
  for (const name of groupNames) {
    const g = core ? { name: '', versions: ['v1'] } : groups.find((x) => x.name === name);
    if (!g) continue;
    const versions: JsonObject[] = [];
    for (const v of g.versions) {
      const rs = resources.filter((r) => r.group === name && r.versions.includes(v));
      if (rs.length === 0) continue;
      versions.push({
        version: v,
        resources: rs.map((r) => {
          const e: JsonObject = {
            resource: r.resource,
            responseKind: { group: r.group, version: v, kind: r.kind },
            scope: r.namespaced ? 'Namespaced' : 'Cluster',
            singularResource: r.singular,
            verbs: r.custom ? CR_VERBS : r.verbs,
          };
          if (r.shortNames?.length) e.shortNames = r.shortNames;
          if (r.categories?.length) e.categories = r.categories;
          const subs = r.subresources
            .filter((s) => !(r.custom && s.name === 'status' && !r.custom.versions[v]?.status))
            .map((s) => ({
              subresource: s.name,
              responseKind: { group: s.group ?? r.group, version: s.version ?? v, kind: s.kind },
              verbs: s.verbs,
            }));
          if (subs.length) e.subresources = subs;
          return e;
        }),
        freshness: 'Current',
      });
    }
    if (versions.length === 0) continue;
    const metadata: JsonObject = name ? { name, creationTimestamp: null } : { creationTimestamp: null };
    items.push({ metadata, versions });
  }
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
}
