/**
 * One node-scoped DaemonSet's part of a cycle: collect its pods and usage, load its states, take this
 * cycle's samples, recommend, fold or append, then resize (not in mode Off) and publish (not under
 * the switch fleetscope.io/writes: none, which writes nothing at all).
 */
import type { NodeFacts, PodView } from '../cycle/views.js';
import type { Resizer } from '../resize/index.js';
import { listDaemonSetMetrics, listDaemonSetPods, type VpaCrdFacts } from './collect.js';
import type { CycleRun, DsOutcome } from './cycle-run.js';
import { applyEntry } from './engine.js';
import { appendLog, writeFold } from './fold.js';
import { scopeValues, valuesNewSinceFold } from './groups.js';
import type { VpaObject } from './k8s-types.js';
import { memoryUsageByNode } from './memory-guard.js';
import { annotatePods, publishStatus } from './publish.js';
import { countScopes, DsRecommendations, statsOf } from './recommend.js';
import { recordPodRequests, resizePods } from './resize-pods.js';
import { publishRollout } from './rollout-publish.js';
import { eligibleNodes, type ThisCycle, thisCycle } from './samples.js';
import { type LoadedDs, loadDs } from './state.js';
import { type ApplyRecord, type DsHead, dsKeyOf, type StoredLog } from './store.js';
import { HOSTNAME_LABEL, type NodeScopeTarget } from './targets.js';

/** What every DaemonSet of the cycle shares. */
export interface ClusterFacts {
  crd: VpaCrdFacts;
  nodes: readonly NodeFacts[];
  resizer: Resizer;
  /** Every DaemonSet's stored log entries, read at once at the start of the cycle. */
  logs: ReadonlyMap<string, readonly StoredLog[]>;
  /** Every DaemonSet's apply item (resize records, pods' requests), read at once likewise. */
  applies: ReadonlyMap<string, ApplyRecord>;
}

export interface DsPlan {
  target: NodeScopeTarget;
  head: DsHead | undefined;
  fold: boolean;
  vpa: VpaObject | undefined;
}

export async function dsCycle(run: CycleRun, cluster: ClusterFacts, plan: DsPlan): Promise<DsOutcome> {
  const { target, head, fold } = plan;
  const storeBefore = { ...run.store.stats };
  const ds = dsKeyOf(target.ds.namespace, target.ds.name);
  const containers = target.containers.map((c) => c.name);
  // Collect first, while little else is in memory: the heap's size is what parsing pages costs most.
  const { pods, newest } = await listDaemonSetPods(run.snapshot, target);
  const metrics = await listDaemonSetMetrics(run.reader, target);
  run.phases.mark('collect');
  // A fold replays every stored cycle into every state; other cycles leave the states undecoded.
  const loaded = await loadDs(run.store, head, run.cluster, ds, containers, {
    replay: fold,
    logs: cluster.logs.get(ds) ?? [],
  });
  run.phases.mark('load states');
  run.observe(newest);
  run.observe(metrics.newest);
  const observed = thisCycle(target, pods, metrics.byPod, loaded.model, head, run.now);
  const eligible = eligibleNodes(target, cluster.nodes);
  const values = scopeValues(cluster.nodes, eligible, target.scope.groupLabel);
  const stored = await recommendAndStore(run, plan, loaded, observed, { pods, eligible, values });
  if (stored.recs.ungrouped) run.errors.push(`${ds}: ${stored.recs.ungrouped}`);
  const outcome = outcomeOf(target, loaded, observed, stored, { pods, eligible, metrics: metrics.state });
  if (metrics.state !== 'available')
    run.ctx.logger?.warn('metrics API not usable: recommending from stored history only', {
      daemonSet: ds,
      metricsApi: metrics.state,
      detail: metrics.detail,
    });
  const hostnames =
    target.scope.key === HOSTNAME_LABEL ? scopeValues(cluster.nodes, eligible, HOSTNAME_LABEL) : new Map();
  if (target.writes !== false)
    await applyAndPublish(
      run,
      cluster,
      plan,
      { pods, eligible, loaded, observed, stored, hostnames },
      outcome,
    );
  else await recordPodRequests(run, ds, pods, cluster.applies.get(ds));
  outcome.readUnits = run.store.stats.readUnits - storeBefore.readUnits;
  outcome.writeUnits = run.store.stats.writeUnits - storeBefore.writeUnits;
  if (run.ctx.keepRecommendations === false) outcome.recs = new Map();
  return outcome;
}

/**
 * Resize in place, then make the recommendations visible: annotations, the VPA's status. Mode Off
 * writes nothing to pods (no resize, no annotation) and publishes the status, as upstream's recommender.
 */
async function applyAndPublish(
  run: CycleRun,
  cluster: ClusterFacts,
  plan: DsPlan,
  c: {
    pods: ReadonlyMap<string, PodView>;
    eligible: ReadonlySet<string>;
    loaded: LoadedDs;
    observed: ThisCycle;
    stored: Stored;
    hostnames: ReadonlyMap<string, string>;
  },
  outcome: DsOutcome,
): Promise<void> {
  const { recs } = c.stored;
  const { target } = plan;
  const ooms = c.observed.entry.ooms;
  const ds = dsKeyOf(target.ds.namespace, target.ds.name);
  const stored = cluster.applies.get(ds);
  let vpa = plan.vpa;
  if (target.apply === 'off') await recordPodRequests(run, ds, c.pods, stored);
  else {
    const usage = memoryUsageByNode(c.observed.entry);
    const input = { target, pods: c.pods, recs, ooms, stored, usage, folded: c.stored.folded };
    const resized = await resizePods(run, cluster.resizer, input, outcome);
    await annotatePods(run, c.pods, recs.recs, resized, outcome);
    // Reverts said on the VPA (rollout-publish.ts), before the status patch that keeps its condition.
    vpa = await publishRollout(run, target, vpa, outcome.rollout);
  }
  // Recounted now, after the refreshes of this cycle, unless a fold counted them.
  const stats = () =>
    c.stored.stats ?? statsOf(c.loaded.model, c.eligible, recs.recs, recs.dsWide, c.observed.lastSampleAt);
  const status = { ...plan, vpa, crd: cluster.crd, folded: c.stored.folded };
  await publishStatus(run, status, recs, stats, outcome, c.hostnames);
}

interface Stored {
  recs: DsRecommendations;
  folded: boolean;
  logBytes: number;
  baseBytes: number;
  /** A fold's counts as of its recommendations (before GC), for the VPA status. */
  stats?: DsHead['stats'];
}

/** Recommend, then store: a fold (every state, this cycle applied) or this cycle's log entry. */
async function recommendAndStore(
  run: CycleRun,
  { target, head, fold }: DsPlan,
  loaded: LoadedDs,
  observed: ThisCycle,
  live: {
    pods: ReadonlyMap<string, PodView>;
    eligible: ReadonlySet<string>;
    values: ReadonlyMap<string, string>;
  },
): Promise<Stored> {
  const { model } = loaded;
  const { entry } = observed;
  if (!fold) {
    const recs = DsRecommendations.stored(
      target,
      model,
      loaded.logs,
      entry,
      live.eligible,
      head,
      live.values,
    );
    run.phases.mark('recommend');
    entry.groups = valuesNewSinceFold(model, live.values);
    const logBytes = await appendLog(run, target, head, entry, loaded.baseOrder);
    run.phases.mark('store');
    return { recs, folded: false, logBytes, baseBytes: 0 };
  }
  applyEntry(model, entry);
  run.phases.mark('add samples');
  const recs = DsRecommendations.folded(target, model, entry, live.eligible, live.values);
  run.phases.mark('recommend');
  const stats = statsOf(model, live.eligible, recs.recs, recs.dsWide, observed.lastSampleAt);
  const podNodes = new Set(live.pods.keys());
  const { folded, baseBytes } = await writeFold(run, target, head, loaded, recs, stats, {
    podNodes,
    eligible: live.eligible,
  });
  run.phases.mark('store');
  return { recs, folded, logBytes: 0, baseBytes, stats };
}

function outcomeOf(
  target: NodeScopeTarget,
  loaded: LoadedDs,
  observed: ThisCycle,
  stored: Stored,
  seen: { pods: ReadonlyMap<string, PodView>; eligible: ReadonlySet<string>; metrics: DsOutcome['metrics'] },
): DsOutcome {
  return {
    namespace: target.ds.namespace,
    name: target.ds.name,
    vpa: target.vpa.name,
    updateMode: target.updateMode,
    metrics: seen.metrics,
    pods: seen.pods.size,
    eligible: seen.eligible.size,
    scopes: countScopes(loaded.model),
    fallbackNodes: stored.recs.fallbackNodes(),
    samples: observed.sampleCount,
    ooms: observed.entry.ooms.length,
    folded: stored.folded,
    logBytes: stored.logBytes,
    baseBytes: stored.baseBytes,
    dsWide: stored.recs.dsWide,
    recs: stored.recs.recs,
    resizes: { requested: 0, completed: 0, refused: 0, skipped: 0 },
    annotated: 0,
    statusPatched: false,
    readUnits: 0,
    writeUnits: 0,
    pendingLogs: loaded.logCycles.length,
  };
}
