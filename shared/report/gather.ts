/**
 * Reads what the report shows from the fleetscope table (DynamoDB only: no cluster is contacted, so a
 * report costs reads, never API calls to clusters). The model itself is built by build.ts.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BalloonStore } from '../balloons/store.js';
import { ClaimsStore } from '../claims/store.js';
import { loadCatalog } from '../features/catalog.js';
import { danglingState, danglingUses } from '../features/dangling.js';
import { FeatureStore } from '../features/store.js';
import { RegistryStore } from '../fleet/registry-store.js';
import { mapLimit } from '../kernel/map-limit.js';
import { getRecommendations, listDaemonSets } from '../nodescope/query.js';
import { NodeScopeStore } from '../nodescope/store.js';
import type { ReportInputs } from './build.js';

export interface ReportSource {
  db: DynamoDBDocumentClient;
  table: string;
}

/** Parallel reads per kind of item: enough to be quick, few enough not to throttle an on-demand table. */
const READS_IN_FLIGHT = 8;

/** The inputs for the whole fleet, or for the clusters named. */
export async function gatherReportInputs(src: ReportSource, only?: string[]): Promise<ReportInputs> {
  const registered = (await new RegistryStore(src.db, src.table).list()).map((c) => c.name).sort();
  const clusters = only ? registered.filter((c) => only.includes(c)) : registered;
  const wanted = new Set(clusters);
  const [statuses, nodescope, balloons, claims, features] = await Promise.all([
    new RegistryStore(src.db, src.table).statuses(clusters),
    nodescopeInputs(src, clusters, wanted),
    balloonInputs(src, clusters),
    claimsInputs(src, wanted),
    featureInputs(src, wanted),
  ]);
  return { clusters, statuses, ...nodescope, balloons, ...claims, features };
}

async function nodescopeInputs(src: ReportSource, clusters: string[], wanted: Set<string>) {
  const store = new NodeScopeStore(src.db, src.table);
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

async function balloonInputs(src: ReportSource, clusters: string[]) {
  const store = new BalloonStore(src.db, src.table);
  return mapLimit(clusters, READS_IN_FLIGHT, async (cluster) => {
    // One query: the cluster's balloon items carry its state beside its policies.
    const { state, policies } = await store.load(cluster);
    return { cluster, ...(state ? { state } : {}), policies: policies.length };
  });
}

async function claimsInputs(src: ReportSource, wanted: Set<string>) {
  const store = new ClaimsStore(src.db, src.table);
  const identities = (await store.listIdentities()).filter((i) => wanted.has(i.cluster));
  const names = identities.map((i) => i.cluster);
  const [syncs, custom] = await Promise.all([
    store.syncStatuses(names),
    mapLimit(names, READS_IN_FLIGHT, (c) => store.customNames(c)),
  ]);
  return { identities, syncs, customClaims: new Map(names.map((c, i) => [c, custom[i] ?? []])) };
}

async function featureInputs(src: ReportSource, wanted: Set<string>) {
  const store = new FeatureStore(src.db, src.table);
  const catalog = await loadCatalog(store);
  const records = (await store.listAll()).filter((r) => wanted.has(r.cluster));
  return mapLimit(records, READS_IN_FLIGHT, async (record) => {
    if (record.state !== 'Off') return { record, dangling: [] };
    const spec = catalog.get(record);
    const [view, state] = await Promise.all([
      store.view(record.cluster, record),
      spec ? danglingState(spec, { cluster: record.cluster, db: src.db, table: src.table }) : [],
    ]);
    return { record, dangling: [...danglingUses(view.uses), ...state] };
  });
}
