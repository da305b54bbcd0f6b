/**
 * The apply phase of one DaemonSet: follow up the resizes already under way (their records), decide
 * which pods upstream's updater would update now (apply.ts), and resize them in place (shared/resize),
 * the most urgent first, within the cycle's write budget. A pod decided on a stored recommendation is
 * re-decided on its node's full history before anything is sent.
 */

import { podLikeOf as podLike } from '../cycle/pod-like.js';
import type { PodView } from '../cycle/views.js';
import { type ResizeRecord, Resizer } from '../resize/index.js';
import { rawResizeApi } from '../resize/raw-api.js';
import { byPriority, decideUpdate, type UpdateDecision, type UpdaterSettings } from './apply.js';
import type { CycleRun, DsOutcome } from './cycle-run.js';
import { ResizeGuards } from './guards/resize-guards.js';
import { keepMemoryAboveUsage, usageFloor } from './memory-guard.js';
import type { NodeRec, OomEvent } from './model.js';
import { podRequestsOf, samePodRequests } from './pod-requests.js';
import type { DsRecommendations } from './recommend.js';
import { RolloutStep } from './rollout-step.js';
import { type ApplyRecord, type ClusterRecord, dsKeyOf } from './store.js';
import type { NodeScopeTarget } from './targets.js';

/** The cycle's resizer; a server known to have no pods/resize is not asked again until the recheck. */
export function resizerFor(run: CycleRun, clusterRec: ClusterRecord | undefined): Resizer {
  const resizer = new Resizer(rawResizeApi(run.reader), {
    now: () => run.now,
    backoff: run.settings.backoff,
  });
  if (clusterRec?.resizeUnsupportedUntil !== undefined && run.now < clusterRec.resizeUnsupportedUntil)
    resizer.unsupported = clusterRec.resizeUnsupported ?? 'the API server has no pods/resize subresource';
  return resizer;
}

/** The DaemonSet's resize records (pods with a resize pending or refused), and whether they changed. */
class ResizeRecords {
  readonly all: Record<string, ResizeRecord>;
  changed = false;
  constructor(stored: Record<string, ResizeRecord>) {
    this.all = { ...stored };
  }
  set(node: string, r: ResizeRecord | undefined): void {
    const before = this.all[node];
    if (r) this.all[node] = r;
    else delete this.all[node];
    if (JSON.stringify(before) !== JSON.stringify(r)) this.changed = true;
  }
}

interface ApplyInput {
  target: NodeScopeTarget;
  /** The pods as this cycle saw them; what they request is stored beside the records when it changed. */
  pods: ReadonlyMap<string, PodView>;
  recs: DsRecommendations;
  /** This cycle's OOM kills: they raise the node's memory, so its fresh recommendation decides. */
  ooms: readonly OomEvent[];
  /** The apply item as the cycle read it (with every DaemonSet's); read here when absent. */
  stored?: ApplyRecord;
  /** This cycle's memory usage per node and container (memory-guard.ts). */
  usage?: ReadonlyMap<string, Readonly<Record<string, number>>>;
  /** This cycle's recommendations come from a fold: a new canary wave for its downsizes (canary.ts). */
  folded?: boolean;
}

/** Resizes the DaemonSet's pods as due; the nodes whose pod a resize was requested for. */
export async function resizePods(
  run: CycleRun,
  resizer: Resizer,
  input: ApplyInput,
  outcome: DsOutcome,
): Promise<Set<string>> {
  const ds = dsKeyOf(input.target.ds.namespace, input.target.ds.name);
  const owner = { kind: 'DaemonSet', name: input.target.ds.name };
  const stored = input.stored ?? (await run.store.getApply(run.cluster, ds));
  const records = new ResizeRecords(stored.records);
  // Guards (guards/resize-guards.ts): window, caps, LimitRange, ResourceQuota; history of what comes of it.
  const guards = new ResizeGuards(run, input.target);
  const reportsFrom = run.reports.length;
  for (const [node, record] of Object.entries(records.all)) {
    const pod = input.pods.get(node);
    const seen = pod ? resizer.observe(podLike(pod), record) : { record: undefined, report: undefined };
    records.set(node, seen.record);
    if (!seen.report) continue;
    run.reports.push({ report: seen.report, owner });
    if (seen.report.kind === 'resized') outcome.resizes.completed++;
    else outcome.resizes.refused++;
  }
  // Canary and revert (rollout-step.ts): harmed downsizes reverted first; the canary gate comes after
  // the guards, in request().
  const rollout = new RolloutStep(run, { ...input, stored: stored.rollout, folded: input.folded ?? false });
  await rollout.revertHarmed(resizer, records);
  const pass = { run, resizer, input, records, outcome, guards, rollout };
  const resized = await request(pass, decide(run, input));
  const guarded = await guards.finish(run.reports.slice(reportsFrom), stored.guards, outcome);
  outcome.rollout = rollout.finish();
  const requestsChanged = !samePodRequests(stored.requests, input.pods);
  if (
    (records.changed || requestsChanged || guarded !== stored.guards || rollout.changed) &&
    !(await run.store.putApply(
      run.cluster,
      ds,
      {
        records: records.all,
        requests: podRequestsOf(input.pods),
        ...(guarded ? { guards: guarded } : {}),
        ...(stored.rollout || rollout.changed ? { rollout: rollout.record } : {}),
      },
      stored.version,
    ))
  )
    run.ctx.logger?.warn('resize records changed underneath; this cycle’s are dropped', { daemonSet: ds });
  run.phases.mark('resize');
  return resized;
}

/** A DaemonSet that is not applied (mode Off) still records what its pods request, when it changed. */
export async function recordPodRequests(
  run: CycleRun,
  ds: string,
  pods: ReadonlyMap<string, PodView>,
  read?: ApplyRecord,
): Promise<void> {
  const stored = read ?? (await run.store.getApply(run.cluster, ds));
  if (samePodRequests(stored.requests, pods)) return;
  const requests = podRequestsOf(pods);
  const kept = {
    records: stored.records,
    requests,
    ...(stored.guards ? { guards: stored.guards } : {}),
    ...(stored.rollout ? { rollout: stored.rollout } : {}),
  };
  if (!(await run.store.putApply(run.cluster, ds, kept, stored.version)))
    run.ctx.logger?.warn('pod requests changed underneath; this cycle’s are dropped', { daemonSet: ds });
}

/** The pods worth resizing now, in upstream's order. */
function decide(run: CycleRun, { target, pods, recs, ooms }: ApplyInput): UpdateDecision[] {
  const updater = run.settings.updater;
  const oomNow = new Set(ooms.map((o) => o.node));
  const decisions: UpdateDecision[] = [];
  const decideMemo = memoFor(target, updater);
  for (const [node, pod] of pods) {
    const rec = recs.recs.get(node);
    if (!rec) continue;
    const d = decideMemo(rec, pod, run.now);
    if (d) decisions.push(d);
    else if (oomNow.has(node) && !recs.fresh.has(node)) {
      const r = recs.refresh(node);
      const again = r && decideUpdate(target, r, pod, run.now, updater);
      if (again) decisions.push(again);
    }
  }
  return decisions.sort(byPriority);
}

/**
 * The last decision per pod view, while the same view (a kept list's pod unchanged since) meets the
 * same recommendation object (the stored one, kept with the base): a steady cycle decides again only
 * for pods or recommendations that changed. Besides the pod, the recommendation, the target (its
 * digest: template, policies, mode) and the updater's settings, a decision depends on the time only
 * through "the pod is 12 hours old", which is part of what must match.
 */
interface Decided {
  rec: NodeRec;
  context: string;
  old: boolean;
  decision: UpdateDecision | undefined;
}
const decided = new WeakMap<PodView, Decided>();

export function memoFor(target: NodeScopeTarget, s: UpdaterSettings) {
  const context = `${target.digest}|${s.podLifetimeUpdateThresholdMs}|${s.minChangePriority}|${s.evictAfterOomThresholdMs}`;
  return (rec: NodeRec, pod: PodView, now: number): UpdateDecision | undefined => {
    const old = pod.startTime !== undefined && now - pod.startTime >= s.podLifetimeUpdateThresholdMs;
    const last = decided.get(pod);
    if (last && last.rec === rec && last.context === context && last.old === old) return last.decision;
    const decision = decideUpdate(target, rec, pod, now, s);
    decided.set(pod, { rec, context, old, decision });
    return decision;
  };
}

/** What one DaemonSet's resize pass works with, from the observed records to the rollout's gate. */
interface ResizePass {
  run: CycleRun;
  resizer: Resizer;
  input: ApplyInput;
  records: ResizeRecords;
  outcome: DsOutcome;
  guards: ResizeGuards;
  rollout: RolloutStep;
}

async function request(pass: ResizePass, decisions: readonly UpdateDecision[]): Promise<Set<string>> {
  const { run, resizer, input, records, outcome, guards, rollout } = pass;
  const owner = { kind: 'DaemonSet', name: input.target.ds.name };
  const resized = new Set<string>();
  // Guard: outside the resize window nothing is sent (recommendations and status go on), and the canary's
  // wave is left as it stands (no canary is chosen among resizes that cannot go).
  if (decisions.length > 0 && guards.closed()) {
    outcome.resizes.outsideWindow = decisions.length;
    return resized;
  }
  if (resizer.unsupported) return resized;
  // The guards judge first; the canary picks among what they let through (rollout-step.ts), so a canary
  // is never a resize a guard holds, and a guard test sees every resize it would have judged.
  const { passed, unjudged } = await judged(pass, decisions);
  const sendable = new Set(passed.map((d) => d.node));
  for (const d of rollout.gate([...passed, ...unjudged])) {
    if (resizer.unsupported) break;
    if (!sendable.has(d.node)) continue; // beyond the write budget: not judged, not sent this cycle
    // Guard again, at the send: a ResourceQuota counts what this cycle's resizes already charged.
    if (await guards.refusal(d)) {
      outcome.resizes.skipped++;
      continue;
    }
    if (!run.budget.take()) break;
    const current = podLike(d.pod);
    const result = await resizer.resize({ pod: current, desired: d.desired }, records.all[d.node]);
    if (result.requests > 1) run.budget.take(result.requests - 1);
    records.set(d.node, result.record);
    if (!result.report) continue;
    run.reports.push({ report: result.report, owner });
    rollout.noteResized(d, result.report);
    if (result.report.kind === 'resized') {
      await guards.sent(d, outcome);
      outcome.resizes.requested++;
      resized.add(d.node);
    } else outcome.resizes.refused++;
  }
  return resized;
}

/**
 * Every due decision as it would be sent (refreshed, within the caps, memory kept above usage, never
 * back to a reverted-from size), judged by the guards (LimitRange, ResourceQuota); those they let
 * through, in upstream's order. Not judged (no refresh, which decodes the node's history, and no guard),
 * but handed to the gate as decided: a downsize the rollout holds whatever the guards say (the back-off,
 * or no canary of a wave still soaking), and, unless the gate is to choose a new wave's canaries among
 * all that passed, what lies beyond the cycle's write budget (it could not be sent this cycle anyway).
 */
async function judged(
  pass: ResizePass,
  decisions: readonly UpdateDecision[],
): Promise<{ passed: UpdateDecision[]; unjudged: UpdateDecision[] }> {
  const { run, resizer, input, records, outcome, guards, rollout } = pass;
  const { target, recs } = input;
  const passed: UpdateDecision[] = [];
  const unjudged: UpdateDecision[] = [];
  const choosing = rollout.choosingCanaries();
  for (const candidate of decisions) {
    if (rollout.heldRegardless(candidate) || (!choosing && passed.length >= run.budget.left)) {
      unjudged.push(candidate);
      continue;
    }
    let d: UpdateDecision | undefined = candidate;
    if (!recs.fresh.has(d.node)) {
      // Decided on the stored recommendation: apply the one from the node's full history, if still due.
      const r = recs.refresh(d.node);
      d = r ? decideUpdate(target, r, d.pod, run.now, run.settings.updater) : undefined;
      if (!d) continue;
    }
    // Never back down to a size the node was reverted from; not while its revert is under way.
    d = rollout.keep(d);
    if (!d) continue;
    d = guards.cap(d); // Guard: one step at most as far as the caps allow.
    // A memory limit below the container's usage is refused by the kubelet: that memory stays as it runs.
    const floor = usageFloor(input.usage?.get(d.node), records.all[d.node], d.pod.uid);
    const kept = keepMemoryAboveUsage(d.desired, d.pod, floor);
    if (kept.held.length > 0) {
      outcome.resizes.memoryHeld = (outcome.resizes.memoryHeld ?? 0) + 1;
      if (Object.keys(kept.desired).length === 0) {
        guards.heldByMemory(d, kept.held);
        outcome.resizes.skipped++;
        continue;
      }
      d = { ...d, desired: kept.desired };
    }
    if (!resizer.mayRequest(podLike(d.pod), d.desired, records.all[d.node]).ok) {
      outcome.resizes.skipped++;
      continue;
    }
    // Guard: what a LimitRange or ResourceQuota of the namespace would refuse is held, not sent.
    if (await guards.refusal(d)) {
      outcome.resizes.skipped++;
      continue;
    }
    passed.push(d);
  }
  return { passed, unjudged };
}
