/**
 * Reads what the report shows from the capabilities' stores (no cluster is contacted, so a report costs
 * store reads, never API calls to clusters). The model itself is built by build.ts; the stores are wired
 * by the caller (./stores-dynamo.ts: the fleetscope table).
 */
import type { BalloonStore } from '../balloons/store.js';
import type { ClaimStore } from '../claims/store.js';
import { loadCatalog } from '../features/catalog.js';
import { danglingUses } from '../features/dangling.js';
import type { FeatureSpec } from '../features/spec.js';
import type { FeatureStore } from '../features/store.js';
import type { Registry } from '../fleet/registry.js';
import { mapLimit } from '../kernel/map-limit.js';
import { getRecommendations, listDaemonSets } from '../nodescope/query.js';
import type { NodeScopeStore } from '../nodescope/store.js';
import type { ReportInputs } from './build.js';

/** The stores the report reads, each capability's own. */
export interface ReportStores {
  registry: Pick<Registry, 'list' | 'statuses'>;
  nodescope: NodeScopeStore;
  balloons: Pick<BalloonStore, 'load'>;
  claims: Pick<ClaimStore, 'listIdentities' | 'syncStatuses' | 'customNames'>;
  features: FeatureStore;
  /** What an Off feature left stored under its clear-state prefixes (features/dangling.ts). */
  danglingState(spec: FeatureSpec, cluster: string): Promise<string[]>;
}

/** Parallel reads per kind of item: enough to be quick, few enough not to throttle an on-demand table. */
const READS_IN_FLIGHT = 8;

/** The inputs for the whole fleet, or for the clusters named. */
export async function gatherReportInputs(src: ReportStores, only?: string[]): Promise<ReportInputs> {
  const registered = (await src.registry.list()).map((c) => c.name).sort();
  const clusters = only ? registered.filter((c) => only.includes(c)) : registered;
  const wanted = new Set(clusters);
  const [statuses, nodescope, balloons, claims, features] = await Promise.all([
    src.registry.statuses(clusters),
    nodescopeInputs(src, clusters, wanted),
    balloonInputs(src, clusters),
    claimsInputs(src, wanted),
    featureInputs(src, wanted),
  ]);
  return { clusters, statuses, ...nodescope, balloons, ...claims, features };
}

async function nodescopeInputs(src: ReportStores, clusters: string[], wanted: Set<string>) {
  const store = src.nodescope;
  const heads = (await listDaemonSets(store)).filter((h) => wanted.has(h.cluster));
  const cycles = await mapLimit(clusters, READS_IN_FLIGHT, (c) => store.getCluster(c));
  const daemonSets = await mapLimit(heads, READS_IN_FLIGHT, async (head) => {
    const [recs, apply] = await Promise.all([
      getRecommendations(store, head.cluster, head.namespace, head.name, { live: true }),
      store.getApply(head.cluster, `${head.namespace}/${head.name}`),
    ]);
    return { head, ...(recs ? { recs } : {}), ...(apply.rollout ? { rollout: apply.rollout } : {}) };
  });
  return {
    daemonSets,
    nodescopeCycled: new Set(clusters.filter((_, i) => cycles[i]?.lastCycle)),
  };
}

async function balloonInputs(src: ReportStores, clusters: string[]) {
  const store = src.balloons;
  return mapLimit(clusters, READS_IN_FLIGHT, async (cluster) => {
    // One query: the cluster's balloon items carry its state beside its policies.
    const { state, policies } = await store.load(cluster);
    return { cluster, ...(state ? { state } : {}), policies: policies.length };
  });
}

async function claimsInputs(src: ReportStores, wanted: Set<string>) {
  const store = src.claims;
  const identities = (await store.listIdentities()).filter((i) => wanted.has(i.cluster));
  const names = identities.map((i) => i.cluster);
  const [syncs, custom] = await Promise.all([
    store.syncStatuses(names),
    mapLimit(names, READS_IN_FLIGHT, (c) => store.customNames(c)),
  ]);
  return { identities, syncs, customClaims: new Map(names.map((c, i) => [c, custom[i] ?? []])) };
}

async function featureInputs(src: ReportStores, wanted: Set<string>) {
  const store = src.features;
  const catalog = await loadCatalog(store);
  const records = (await store.listAll()).filter((r) => wanted.has(r.cluster));
  return mapLimit(records, READS_IN_FLIGHT, async (record) => {
    if (record.state !== 'Off') return { record, dangling: [] };
    const spec = catalog.get(record);
    const [view, state] = await Promise.all([
      store.view(record.cluster, record),
      spec ? src.danglingState(spec, record.cluster) : [],
    ]);
    return { record, dangling: [...danglingUses(view.uses), ...state] };
  });
}
