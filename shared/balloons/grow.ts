/**
 * Grow on demand: work waiting on a ballooned node is served within a minute, not at the next 5-minute
 * cycle. Every minute, per cluster where something asks for balloons, a light read looks for waiting
 * work: pods Pending because no node had the resources (listed with `status.phase=Pending`, kept when
 * their PodScheduled condition says Unschedulable for Insufficient cpu/memory), and workload resizes the
 * kubelet Deferred (its `ResizeDeferred` Events, listed by reason, each pod then read as it is now:
 * still `PodResizePending` Deferred). Node scope's own per-node upsizes are among them. When there is
 * any, the balloons are sized at once with the ordinary rules, which already count it: a Deferred
 * resize is counted at its spec (as the scheduler counts it) and a pool's policy sizes the node for
 * its workloads plus headroom, so the balloon deflates by what is needed and the kubelet then admits
 * the resize on its own; a Pending pod is demand a policy-sized pool grows for. A Deferred resize is
 * served by its node alone (that node and its pods read); a Pending pod by the whole cluster's sizing.
 * Explicit sizes are someone's decision and are never grown (as in pending.ts).
 */
import { ClusterSnapshot } from '../cycle/snapshot.js';
import { podView } from '../cycle/views.js';
import type { PodObject } from '../cycle/wire.js';
import type { ClusterClient } from '../k8s/client.js';
import { RawReader } from '../k8s/raw-reader.js';
import { RESOURCES } from './amounts.js';
import type { BalloonCycleResult } from './ledger.js';
import { loadBalloonItems, runBalloonPhase } from './phase.js';
import { demandable, readNode } from './read.js';
import type { BalloonSettings } from './settings.js';
import type { BalloonItems, BalloonStore } from './store.js';

/** Nodes served one by one for their Deferred resizes, at most, per pass (the rest wait a minute). */
export const MAX_DEFERRED_NODES = 20;

/** What waits for room: pods Pending for resources, and the nodes of Deferred resizes. */
export interface Demand {
  pending: string[];
  deferred: { node: string; pod: string }[];
}

/**
 * Pending because no node had the cpu or memory (the scheduler's FitError), not for another reason, and
 * the default scheduler's to place (no gate, no other scheduler): what room can serve.
 */
export const pendingForResources = (p: PodObject): boolean => {
  const v = !p.spec?.nodeName && !p.metadata?.deletionTimestamp ? podView(p) : undefined;
  return v !== undefined && demandable(v);
};

/** A bound pod whose resize the kubelet holds Deferred now (not merely once, per an old Event). */
export const deferredNow = (p: PodObject): boolean =>
  !!p.spec?.nodeName && podView(p)?.resize.state === 'deferred';

interface InvolvedObject {
  involvedObject?: { kind?: string; namespace?: string; name?: string };
}

const key = (p: PodObject) => `${p.metadata?.namespace}/${p.metadata?.name}`;

/** The light read: pending pods, and the pods of recent ResizeDeferred Events read as they are. */
export async function readDemand(reader: RawReader, pageSize = 500): Promise<Demand> {
  const pending: string[] = [];
  await reader.list<PodObject>(
    'list pending pods',
    '/api/v1/pods',
    { fieldSelector: 'status.phase=Pending' },
    (ps) => {
      for (const p of ps) if (pendingForResources(p)) pending.push(key(p));
    },
    { pageSize },
  );
  const named = new Set<string>();
  await reader.list<InvolvedObject>(
    'list ResizeDeferred events',
    '/api/v1/events',
    { fieldSelector: 'reason=ResizeDeferred' },
    (es) => {
      for (const e of es) {
        const o = e.involvedObject;
        if (o?.kind === 'Pod' && o.namespace && o.name) named.add(`${o.namespace}/${o.name}`);
      }
    },
    { pageSize },
  );
  const deferred: Demand['deferred'] = [];
  for (const n of named) {
    const [namespace, name] = n.split('/') as [string, string];
    await reader.list<PodObject>(
      'read a deferred pod',
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
      { fieldSelector: `metadata.name=${name}` },
      (ps) => {
        for (const p of ps) if (deferredNow(p)) deferred.push({ node: p.spec!.nodeName!, pod: n });
      },
      { pageSize },
    );
  }
  return { pending, deferred };
}

export interface GrowInput {
  cluster: string;
  client: ClusterClient;
  store: BalloonStore;
  settings: Partial<BalloonSettings>;
  now: () => number;
  /** Names the pass (the schedule tick). */
  passId: string;
}

export interface GrowResult {
  /** Whether anything asks for balloons in the cluster (else nothing was read from it). */
  configured: boolean;
  demand?: Demand;
  results: BalloonCycleResult[];
}

/**
 * How many waiting pods a pass served with a deflate (a counter): the pending pods and Deferred resizes
 * it found, when a sizing it ran deflated at least one balloon.
 */
export function waitingServedByDeflate(g: GrowResult): number {
  const deflated = g.results.some((r) =>
    r.decisions.some((d) => {
      const to = d.resizeTo;
      const from = d.balloon?.requests;
      return to !== undefined && from !== undefined && RESOURCES.some((x) => to[x] < from[x]);
    }),
  );
  return deflated ? (g.demand?.pending.length ?? 0) + (g.demand?.deferred.length ?? 0) : 0;
}

/** One pass for one cluster: nothing asks for balloons -> one query; no demand -> two lists more. */
export async function serveDemand(input: GrowInput): Promise<GrowResult> {
  const { items, configured } = await loadBalloonItems(input.store, input.cluster);
  if (!configured) return { configured, results: [] };
  const reader = new RawReader(input.client);
  // The next pass is a minute away: keep no idle socket to the cluster until then.
  return reader.closingIdle(() => serveWith(reader, input, items, configured));
}

async function serveWith(
  reader: RawReader,
  input: GrowInput,
  items: BalloonItems,
  configured: boolean,
): Promise<GrowResult> {
  const demand = await readDemand(reader);
  const base = {
    cluster: input.cluster,
    client: input.client,
    store: input.store,
    settings: input.settings,
    now: input.now,
  };
  if (demand.pending.length > 0) {
    const snapshot = new ClusterSnapshot(reader, { pageSize: 500, allPods: true });
    const r = await runBalloonPhase({ ...base, cycleId: `grow/${input.passId}`, snapshot, items });
    return { configured, demand, results: [r] };
  }
  const results: BalloonCycleResult[] = [];
  const nodes = [...new Set(demand.deferred.map((d) => d.node))].slice(0, MAX_DEFERRED_NODES);
  for (const node of nodes) {
    const snapshot = new ClusterSnapshot(reader, { pageSize: 500 });
    const facts = await readNode(snapshot, node);
    if (!facts) continue;
    results.push(
      await runBalloonPhase({ ...base, cycleId: `grow/${input.passId}/${node}`, snapshot, onlyNode: facts }),
    );
  }
  return { configured, demand, results };
}
