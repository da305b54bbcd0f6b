/**
 * One nodescope cycle for one cluster, as its phases (docs/nodescope.md, "What a cycle does"):
 *   targets      find-targets.ts   the VPA CRD, VPAs, upstream VPA and DaemonSets; refused and skipped
 *                                  VPAs and upstream's conflicts published (publish-upstream.ts)
 *   collect      collect.ts        nodes, and per DaemonSet its pods and PodMetrics (through the snapshot)
 *   samples      samples.ts        this cycle's samples and OOM kills
 *   recommend    recommend.ts      per node and DaemonSet-wide
 *   state        fold.ts           a log entry, or a new base when a fold is due
 *   apply        resize-pods.ts    in-place resizes within the cycle's write budget
 *   publish      publish.ts        pod annotations and the VPA condition
 * The per-DaemonSet phases run in ds-cycle.ts; the summary and cluster record in cycle-report.ts.
 * Nothing is kept in memory between invocations but copies used only while their inputs are unchanged
 * (base-cache.ts: the decoded bases, checked against the head read; resize-pods.ts: the last decision
 * per pod view and recommendation; pod-requests.ts: the apply item's requests, by their bytes), the
 * bases and requests under one heap budget (kept-budget.ts).
 */
import { ClusterAccessError } from '../k8s/errors.js';
import { type CycleResult, finishCycle } from './cycle-report.js';
import { type CycleContext, CycleRun, type DsOutcome, describe } from './cycle-run.js';
import { type ClusterFacts, dsCycle } from './ds-cycle.js';
import { type FoundTargets, findTargets, vpaKey } from './find-targets.js';
import { chooseFolds, expireUntargeted, headsByDs } from './fold.js';
import { publishRefusals } from './publish.js';
import { publishNotices } from './publish-upstream.js';
import { resizerFor } from './resize-pods.js';
import { type DsHead, dsKeyOf } from './store.js';

export type { CycleResult } from './cycle-report.js';
export type { CycleContext, CycleLogger, DsOutcome } from './cycle-run.js';
export { foldDue, headOfTarget } from './fold.js';

export async function runCycle(ctx: CycleContext): Promise<CycleResult> {
  const run = new CycleRun(ctx);
  const clusterRec = await ctx.store.getCluster(ctx.cluster);
  run.startClock();
  const found = await findTargets(run.reader, run.settings.pageSize);
  const nodes = found.targets.length > 0 ? await run.snapshot.nodes() : [];
  run.phases.mark('collect');
  const resizer = resizerFor(run, clusterRec);
  const newlyRejected = await publishRefusals(run, found, clusterRec);
  const notices = await publishNotices(run, found, clusterRec);
  // Every DaemonSet's log in one query, not one each, and before the heads: a fold deletes the entries
  // it replayed only after it moved the head, so a head read after them names a base they extend (or,
  // a fold in between, a newer one that holds them). Read the other way round, a fold in between would
  // leave the head's base (kept in process) without them.
  const logs = found.targets.length > 0 ? await ctx.store.listClusterLogs(ctx.cluster) : new Map();
  const heads = await headsByDs(ctx.store, ctx.cluster);
  run.phases.mark('load states');
  // Every DaemonSet's apply item in one batch, not one read each.
  const dss = found.targets.map((t) => dsKeyOf(t.ds.namespace, t.ds.name));
  const applies = dss.length > 0 ? await ctx.store.getApplies(ctx.cluster, dss) : new Map();
  run.phases.mark('resize');
  const facts = { crd: found.crdFacts, nodes, resizer, logs, applies };
  const outcomes = await eachDaemonSet(run, found, heads, facts);
  await expireUntargeted(run, heads, found.targets);
  // NotReady nodes are counted from the list the cycle read anyway (none read: not known, not zero).
  const notReady = found.targets.length > 0 ? nodes.filter((n) => !n.ready).length : undefined;
  return finishCycle(run, {
    found,
    nodes: nodes.length,
    notReady,
    outcomes,
    newlyRejected,
    notices,
    resizer,
    clusterRec,
  });
}

/** Each target in turn: one DaemonSet failing is recorded and the next goes on. */
async function eachDaemonSet(
  run: CycleRun,
  found: FoundTargets,
  heads: ReadonlyMap<string, DsHead>,
  cluster: ClusterFacts,
): Promise<DsOutcome[]> {
  const folds = chooseFolds(found.targets, heads, run.now, run.settings);
  const outcomes: DsOutcome[] = [];
  for (const target of found.targets) {
    const ds = dsKeyOf(target.ds.namespace, target.ds.name);
    const vpa = found.vpas.get(vpaKey(target.vpa.namespace, target.vpa.name));
    try {
      outcomes.push(await dsCycle(run, cluster, { target, head: heads.get(ds), fold: folds.has(ds), vpa }));
    } catch (err) {
      run.errors.push(`${ds}: ${describe(err)}`);
      run.ctx.logger?.warn('node-scoped DaemonSet cycle failed', { daemonSet: ds, error: describe(err) });
      if (clusterWide(err)) throw err;
    }
  }
  return outcomes;
}

/** A failure of the whole cluster (unreachable, credentials) ends the cycle; others do not. */
function clusterWide(err: unknown): boolean {
  return (
    err instanceof ClusterAccessError &&
    (err.kind === 'network' ||
      err.kind === 'tls' ||
      err.kind === 'credentials' ||
      err.status === 401 ||
      err.status === 403)
  );
}
