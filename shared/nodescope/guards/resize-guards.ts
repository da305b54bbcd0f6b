/**
 * The guards of one DaemonSet's resizes in one cycle, in the order the apply path asks them:
 *   1. closed()   nothing is sent outside the resize window (or while a guard annotation is wrong);
 *   2. cap()      each resize goes at most as far as the caps allow;
 *   3. refusal()  a resize a LimitRange or ResourceQuota of the namespace would refuse is held; asked
 *                 of every due resize before the canary gate (which picks among what passed), and
 *                 again at its send, when the quota counts what the cycle's resizes charged;
 *   4. sent()     a resize sent is charged to the namespace's quotas (the next one sees it);
 *   5. finish()   the history of every node touched, the summary for `recommendations list`, an Event
 *                 on the VPA when what is held changed.
 * The resize path (resize-pods.ts) calls each at one marked place; the rules live in their modules.
 */
import type { PodView } from '../../cycle/views.js';
import type { ContainerChange, DesiredResources } from '../../resize/index.js';
import type { UpdateDecision } from '../apply.js';
import type { CycleRun, DsOutcome, OwnedReport } from '../cycle-run.js';
import type { NodeScopeTarget } from '../targets.js';
import { capDesired } from './caps.js';
import { entryOfReport, type HistoryEntry } from './history.js';
import { appendHistory } from './history-log.js';
import { type GuardViolation, limitRangeViolations } from './limit-range.js';
import { namespacePolicies } from './namespace-policies.js';
import { guardEvent } from './report.js';
import { quotaDelta, quotaViolations } from './resource-quota.js';
import { amountsAfter, type ContainerAmounts, specAmounts } from './resources.js';
import type { GuardSpec } from './settings.js';
import { type GuardsSummary, sameGuards, saysSomething } from './summary.js';
import { nextOpening, windowOpen } from './window.js';

const NO_GUARDS: GuardSpec = { caps: {}, problems: [] };

/** Held entries written per DaemonSet and cycle at most: a LimitRange that holds every pod is said, not logged 5,000 times. */
const MAX_HELD_ENTRIES = 60;

export class ResizeGuards {
  private readonly spec: GuardSpec;
  private readonly held = new Map<string, { pods: number; reason: string }>();
  private readonly entries = new Map<string, HistoryEntry[]>();
  private readonly cappedOf = new Map<string, string[]>();
  private heldEntries = 0;
  private closedWhy: string | undefined;

  constructor(
    private readonly run: CycleRun,
    private readonly target: NodeScopeTarget,
  ) {
    this.spec = target.guards ?? NO_GUARDS;
  }

  /** Why no resize may be sent now, or undefined. */
  closed(): string | undefined {
    const { problems, windows } = this.spec;
    if (problems.length > 0) this.closedWhy = `resizes held: ${problems.join('; ')}`;
    else if (windows && !windowOpen(windows, this.run.now)) {
      const next = nextOpening(windows, this.run.now);
      this.closedWhy = `outside the resize window "${windows.map((w) => w.text).join('; ')}" at ${iso(this.run.now)} (the cluster's time)${next === undefined ? '' : `; it opens next at ${iso(next)}`}`;
    }
    return this.closedWhy;
  }

  /**
   * The decision within the caps; what was capped is noted on the node's history entry, and counted
   * when the resize is sent (sent()): a capped resize the canary holds is not one sent shorter.
   */
  cap(d: UpdateDecision): UpdateDecision {
    const c = capDesired(d.desired, d.pod, this.spec.caps);
    if (c.capped.length === 0) {
      this.cappedOf.delete(d.node);
      return d;
    }
    this.cappedOf.set(d.node, c.capped);
    return { ...d, desired: c.desired };
  }

  /** A resize left with nothing to send because its memory stayed above usage (memory-guard.ts). */
  heldByMemory(d: UpdateDecision, containers: readonly string[]): void {
    this.hold(d, {
      by: 'memory usage',
      message: `the memory limit of ${containers.map((c) => `"${c}"`).join(', ')} would go below usage`,
    });
  }

  /** The guard that would have the resize refused (it is then held, not sent), or undefined. */
  async refusal(d: UpdateDecision): Promise<GuardViolation | undefined> {
    const ns = await namespacePolicies(this.run, this.target.ds.namespace);
    if (ns.unreadable || (ns.limitRanges.length === 0 && ns.quotas.length === 0)) return undefined;
    const after = amountsAfter(d.pod, d.desired);
    const violation =
      limitRangeViolations(ns.limitRanges, after)[0] ??
      quotaViolations(ns.quotas, quotaDelta(specAmounts(d.pod), after), ns.ledger.charged)[0];
    if (violation) this.hold(d, violation);
    return violation;
  }

  /** The resize was sent: the namespace's quotas are charged with what it adds; a capped one is counted. */
  async sent(d: UpdateDecision, outcome: DsOutcome): Promise<void> {
    if (this.cappedOf.has(d.node)) outcome.resizes.capped = (outcome.resizes.capped ?? 0) + 1;
    const ns = await namespacePolicies(this.run, this.target.ds.namespace);
    if (ns.quotas.length > 0)
      ns.ledger.charge(ns.quotas, quotaDelta(specAmounts(d.pod), amountsAfter(d.pod, d.desired)));
  }

  private hold(d: UpdateDecision, v: GuardViolation): void {
    const h = this.held.get(v.by);
    this.held.set(v.by, { pods: (h?.pods ?? 0) + 1, reason: h?.reason ?? v.message });
    if (this.heldEntries >= MAX_HELD_ENTRIES) return;
    this.heldEntries++;
    this.add(d.node, {
      at: this.run.now,
      outcome: 'guarded',
      pod: d.pod.name,
      podUid: d.pod.uid,
      changes: changesOf(d.pod, d.desired),
      by: v.by,
      reason: v.message,
    });
  }

  private add(node: string, e: HistoryEntry): void {
    const list = this.entries.get(node) ?? [];
    list.push(e);
    this.entries.set(node, list);
  }

  /**
   * After the DaemonSet's resizes: its reports (this cycle's, `reports`) and holds go to the nodes'
   * histories; the summary to keep on the apply item (undefined: none to keep); an Event on the VPA
   * when it says something new.
   */
  async finish(
    reports: readonly OwnedReport[],
    stored: GuardsSummary | undefined,
    outcome: DsOutcome,
  ): Promise<GuardsSummary | undefined> {
    for (const { report, revertOf } of reports) {
      if (!report.node) continue;
      const capped =
        report.kind === 'resized' && report.outcome === 'Requested'
          ? this.cappedOf.get(report.node)
          : undefined;
      // A revert sent is said as one, with its harm; one refused is said as the refusal it met.
      const revert =
        revertOf && report.kind === 'resized' ? { outcome: 'reverted' as const, reason: revertOf } : {};
      this.add(report.node, entryOfReport(report, { ...(capped ? { capped } : {}), ...revert }));
    }
    outcome.resizes.guarded = [...this.held.values()].reduce((n, h) => n + h.pods, 0) || undefined;
    if (outcome.resizes.guarded === undefined) delete outcome.resizes.guarded;
    const ds = `${this.target.ds.namespace}/${this.target.ds.name}`;
    if (this.entries.size > 0) await appendHistory(this.run, ds, this.entries);
    const summary: GuardsSummary = {
      held: [...this.held].map(([by, h]) => ({ by, ...h })),
      ...(this.closedWhy ? { closed: this.closedWhy } : {}),
      at: this.run.now,
    };
    const now = saysSomething(summary) ? summary : undefined;
    if (sameGuards(now, stored)) return stored;
    if (now) await guardEvent(this.run, this.target, now);
    return now;
  }
}

const iso = (t: number) => new Date(t).toISOString().replace(/:\d\d\.\d{3}Z$/, 'Z');

/** What a resize would change, per container: before and after (the resize mechanism's shape). */
function changesOf(pod: PodView, desired: DesiredResources): ContainerChange[] {
  const before = new Map(specAmounts(pod).map((c) => [c.name, c]));
  return amountsAfter(pod, desired)
    .filter((c) => desired[c.name])
    .map((c) => ({ name: c.name, before: pairs(before.get(c.name)), after: pairs(c) }));
}

const pairs = (c: ContainerAmounts | undefined) => ({
  requests: { ...c?.requests },
  limits: { ...c?.limits },
});
