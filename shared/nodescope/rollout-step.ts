/**
 * The rollout's part of a DaemonSet's apply phase (resize-pods.ts calls it at three marked places):
 *   1. revertHarmed: each node downsized within the revert window whose pod suffers (harm.ts) is resized
 *      back to its previous size in place, first of the cycle's writes; the DaemonSet is held (revert.ts);
 *   2. keep / gate: a due decision never takes a node back down to a size it was reverted from (keep,
 *      before the guards judge it); what the guards let through passes the canary gate (canary.ts);
 *   3. noteResized: a downsize sent is remembered (previous size, when, restart count) for the window.
 * What it remembers is the apply item's `rollout` (rollout.ts), written with the resize records.
 */
import { podLikeOf as podLike } from '../cycle/pod-like.js';
import type { ContainerView, PodView } from '../cycle/views.js';
import type { ResizeRecord, ResizeReport, Resizer } from '../resize/index.js';
import { byPriority, type UpdateDecision } from './apply.js';
import { avoidRevertedFrom, gate } from './canary.js';
import type { CycleRun } from './cycle-run.js';
import { harmOf } from './harm.js';
import { harmSeen, reverted, soakedHealthy } from './revert.js';
import {
  desiredLowers,
  emptyRollout,
  lowersAny,
  type NodeDownsize,
  pruned,
  type RolloutOutcome,
  type RolloutRecord,
  sidesOf,
} from './rollout.js';
import { DEFAULT_ROLLOUT, type RolloutPolicy } from './rollout-policy.js';
import type { NodeScopeTarget } from './targets.js';

/** The resize records of the DaemonSet, as resize-pods.ts keeps them. */
export interface RecordsLike {
  readonly all: Record<string, ResizeRecord>;
  set(node: string, r: ResizeRecord | undefined): void;
}

const newOutcome = (): RolloutOutcome => ({
  canariesSent: 0,
  restSent: 0,
  heldForCanary: 0,
  heldForSoak: 0,
  heldOnBackoff: 0,
  revertedFromAvoided: 0,
  reverts: [],
  revertsPending: 0,
  paths: [],
});

const FIELDS = {
  requests: { cpu: 'reqCpu', memory: 'reqMem' },
  limits: { cpu: 'limCpu', memory: 'limMem' },
} as const satisfies Record<string, Record<string, keyof ContainerView>>;

/** Whether the desired resources lower anything the pod's spec has now. */
export const lowersPod = (desired: UpdateDecision['desired'], pod: PodView): boolean =>
  desiredLowers(desired, (name, kind, res) => {
    const c = pod.containers.find((x) => x.name === name);
    return c ? (c[FIELDS[kind][res]] as number | undefined) : undefined;
  });

export class RolloutStep {
  readonly policy: RolloutPolicy;
  readonly outcome = newOutcome();
  record: RolloutRecord;
  private readonly storedJson: string;
  private readonly reverting = new Set<string>();

  constructor(
    private readonly run: CycleRun,
    private readonly c: {
      target: NodeScopeTarget;
      pods: ReadonlyMap<string, PodView>;
      stored: RolloutRecord | undefined;
      folded: boolean;
      /** This cycle's throttled share of CPU periods per node, where a source gives one (harm.ts). */
      throttled?: ReadonlyMap<string, number>;
    },
  ) {
    this.policy = c.target.rollout ?? DEFAULT_ROLLOUT;
    this.storedJson = JSON.stringify(c.stored ?? emptyRollout());
    this.record = pruned(c.stored ?? emptyRollout(), run.now, this.policy.revertWindowMs);
  }

  get changed(): boolean {
    return JSON.stringify(this.record) !== this.storedJson;
  }

  /** 1. Reverts the harmed nodes' pods to their previous size, within the cycle's write budget. */
  async revertHarmed(resizer: Resizer, records: RecordsLike): Promise<void> {
    const now = this.run.now;
    for (const [node, seen] of Object.entries(this.record.downsized)) {
      const pod = this.c.pods.get(node);
      const d = pod ? this.actuated(node, seen, pod) : seen;
      if (pod?.uid !== d.podUid) {
        // A pod recreated since runs the template: nothing to revert in place; a harmful size stays avoided.
        if (d.harm) this.record = reverted(this.record, node, now, false);
        else this.record = { ...this.record, downsized: withoutKey(this.record.downsized, node) };
        continue;
      }
      if (!d.harm) {
        const harm = this.policy.revertWindowMs > 0 ? harmOf(d, pod, this.c.throttled?.get(node)) : undefined;
        if (!harm) continue;
        this.record = harmSeen(this.record, node, harm, now, this.run.settings.revertHold);
        this.outcome.paths.push(`revert-${harm.kind}`);
        this.run.ctx.logger?.warn('downsized pod suffers: reverting it to its previous size', {
          daemonSet: `${this.c.target.ds.namespace}/${this.c.target.ds.name}`,
          node,
          reason: harm.kind,
          detail: harm.detail,
        });
      }
      this.reverting.add(node);
      if (await this.sendRevert(resizer, records, node, pod)) {
        this.record = reverted(this.record, node, now, true);
        this.outcome.reverts.push(this.record.reverts.at(-1) as RolloutRecord['reverts'][number]);
      } else this.outcome.revertsPending++;
    }
  }

  /** The downsize with its restart baseline taken again the first cycle its resize is no longer pending. */
  private actuated(node: string, d: NodeDownsize, pod: PodView): NodeDownsize {
    if (d.actuated || d.harm || pod.uid !== d.podUid || pod.resize.state !== 'none') return d;
    const now: NodeDownsize = { ...d, actuated: true, restarts: Math.max(d.restarts, pod.restarts ?? 0) };
    this.record = { ...this.record, downsized: { ...this.record.downsized, [node]: now } };
    return now;
  }

  private async sendRevert(
    resizer: Resizer,
    records: RecordsLike,
    node: string,
    pod: PodView,
  ): Promise<boolean> {
    const d = this.record.downsized[node];
    if (!d || resizer.unsupported) return false;
    const current = podLike(pod);
    if (!resizer.mayRequest(current, d.before, records.all[node]).ok) return false;
    if (!this.run.budget.take()) return false;
    const result = await resizer.resize({ pod: current, desired: d.before }, records.all[node]);
    if (result.requests > 1) this.run.budget.take(result.requests - 1);
    records.set(node, result.record);
    const owner = { kind: 'DaemonSet', name: this.c.target.ds.name };
    const why = d.harm ? `${d.harm.kind}: ${d.harm.detail}` : 'harm after a downsize';
    if (result.report) this.run.reports.push({ report: result.report, owner, revertOf: why });
    // No report: the pod already runs the previous size (a noop), which is what a revert wants.
    return !result.report || result.report.kind === 'resized';
  }

  /**
   * 2a. The decision without what would go back to a reverted-from size; undefined when nothing is left,
   * or while the node's revert is under way. Asked of each decision before the guards judge it.
   */
  keep(d: UpdateDecision): UpdateDecision | undefined {
    if (this.reverting.has(d.node)) return undefined;
    const desired = avoidRevertedFrom(d.desired, this.record.revertedFrom[d.node]);
    if (desired !== d.desired) this.outcome.revertedFromAvoided++;
    return desired ? { ...d, desired } : undefined;
  }

  /**
   * Whether the decision, as decided, is a downsize the gate holds this cycle whatever the guards say
   * and however a refresh moves it: the DaemonSet is on back-off, or a wave not yet soaked has other
   * canaries. The apply path then neither refreshes nor judges it (the gate still counts it held).
   */
  heldRegardless(d: UpdateDecision): boolean {
    const { hold, wave } = this.record;
    const now = this.run.now;
    const held =
      (hold !== undefined && now < hold.until) ||
      (this.canaryOn() &&
        wave !== undefined &&
        wave.releasedAt === undefined &&
        now - wave.startedAt < this.policy.soakMs &&
        !wave.canaries.includes(d.node));
    return held && lowersPod(d.desired, d.pod);
  }

  /** Whether this cycle's gate may choose a new wave's canaries (among every downsize the guards pass). */
  choosingCanaries(): boolean {
    const { hold, wave } = this.record;
    if (!this.canaryOn() || (hold !== undefined && this.run.now < hold.until)) return false;
    return wave === undefined || (wave.releasedAt !== undefined && this.c.folded);
  }

  private canaryOn(): boolean {
    return this.policy.canaryShare > 0 && this.policy.canaryShare < 1;
  }

  /**
   * 2b. Of the decisions as finally made and let through by the guards (resize-pods.ts), the ones that
   * may go now, in upstream's order; the wave moved on as the gate says.
   */
  gate(decisions: readonly UpdateDecision[]): UpdateDecision[] {
    const items = decisions.map((d) => ({ ...d, downsize: lowersPod(d.desired, d.pod) }));
    const g = gate(items, {
      rollout: this.record,
      policy: this.policy,
      pods: this.c.pods.size,
      now: this.run.now,
      folded: this.c.folded,
    });
    this.record = { ...this.record, wave: g.wave };
    if (g.paths.includes('rest-after-soak')) this.record = soakedHealthy(this.record);
    this.outcome.paths.push(...g.paths);
    for (const h of g.held)
      if (h.why === 'hold') this.outcome.heldOnBackoff++;
      else if (h.why === 'canary') this.outcome.heldForCanary++;
      else this.outcome.heldForSoak++;
    if (g.paths.includes('held-on-backoff')) this.logHold(g.held.length);
    return g.allowed.map(({ downsize: _d, ...d }) => d).sort(byPriority);
  }

  /** Why a due downsize was not sent: an operator asks "why did this not shrink?" (and the soak counts it). */
  private logHold(held: number): void {
    const hold = this.record.hold;
    this.run.ctx.logger?.info('downsizes held: the DaemonSet is on back-off after a revert', {
      daemonSet: `${this.c.target.ds.namespace}/${this.c.target.ds.name}`,
      held,
      ...(hold ? { until: new Date(hold.until).toISOString(), revertedNode: hold.node } : {}),
    });
  }

  /** 3. A resize sent: a downsize is remembered for the revert window; an increase forgets the last. */
  noteResized(d: UpdateDecision, report: ResizeReport): void {
    if (report.kind !== 'resized' || report.outcome !== 'Requested') return;
    if (!lowersAny(report.containers)) {
      this.record = { ...this.record, downsized: withoutKey(this.record.downsized, d.node) };
      return;
    }
    const throttled = this.c.throttled?.get(d.node);
    this.record = {
      ...this.record,
      downsized: {
        ...this.record.downsized,
        [d.node]: {
          podUid: d.pod.uid,
          at: this.run.now,
          ...sidesOf(report.containers),
          restarts: d.pod.restarts ?? 0,
          ...(throttled !== undefined ? { throttled } : {}),
        },
      },
    };
    if (this.record.wave?.releasedAt === undefined && this.record.wave) this.outcome.canariesSent++;
    else this.outcome.restSent++;
  }

  /** The outcome with the record's wave and hold as they stand. */
  finish(): RolloutOutcome {
    const { wave, hold } = this.record;
    return { ...this.outcome, ...(wave ? { wave } : {}), ...(hold ? { hold } : {}) };
  }
}

function withoutKey<T>(o: Record<string, T>, k: string): Record<string, T> {
  if (!(k in o)) return o;
  const { [k]: _gone, ...rest } = o;
  return rest;
}
