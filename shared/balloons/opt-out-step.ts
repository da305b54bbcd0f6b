/**
 * The cycle's KEP-5836 step (./opt-out.ts): fleetscope's key added to the nodes balloons manage and
 * removed from the others. Adding needs a server that knows the field, asked once per cycle and only
 * when a node needs the key; removing needs no question (a node that carries the key has the field). A
 * patch is fenced on the node's resourceVersion: when the node changed meanwhile it is read again and the
 * change recomputed, so another owner's key written in between is kept.
 */
import type { BalloonNode, CountedPod } from './cluster-read.js';
import type { NodeDecision } from './decide.js';
import type { CycleLedger } from './ledger.js';
import type { NodeOptOutApi } from './node-opt-out.js';
import { hasOptOutKey, type NodeOptOutRead, OPT_OUT_FIELD, OPT_OUT_KEY, optOutChange } from './opt-out.js';
import type { BalloonItems, FieldDetection, ResizePreemptionState } from './store.js';

/** Node patches per cycle at most: a large cluster's first cycle spreads them over a few cycles. */
export const OPT_OUT_BUDGET = 200;
/** Reads and patches of one node when it keeps changing under us. */
const ATTEMPTS = 3;

export const RBAC_FEATURE = 'resize-preemption-opt-out';

const stateOf = (n: NodeOptOutRead): ResizePreemptionState | undefined =>
  hasOptOutKey(n.keys) ? { optedOut: true } : undefined;

/** Why the step stopped writing this cycle, said once (the budget is not an error: the rest next time). */
type Stop = 'forbidden' | 'dropped' | 'budget';

const STOPS: Record<Exclude<Stop, 'budget'>, string> = {
  forbidden: `patch on nodes is forbidden: fleetscope's KEP-5836 key cannot be written (grant it with \`fleetscope rbac --with ${RBAC_FEATURE}\`); Deferred resizes on ballooned nodes may preempt pods`,
  dropped: `the API server dropped ${OPT_OUT_FIELD} from the patch (its alpha gate InPlacePodVerticalScalingSchedulerPreemption is off, so no resize preempts): asked again in a day`,
};

class Step {
  private served: Promise<boolean> | undefined;
  private patches = 0;
  stop: Stop | undefined;
  /** What the OpenAPI said, when it was asked this cycle (else the known answer, carried). */
  detection: FieldDetection | undefined;
  constructor(
    private readonly api: NodeOptOutApi,
    private readonly errors: string[],
    input: Pick<OptOutInput, 'addsOff' | 'known'>,
  ) {
    this.detection = input.known;
    if (input.addsOff) this.served = Promise.resolve(false);
  }

  /** Whether the server knows the field: asked at most once per cycle. */
  fieldServed(): Promise<boolean> {
    this.served ??= this.api.fieldServed(this.detection).then(
      (d) => {
        this.detection = d;
        return d.served;
      },
      (err) => {
        this.errors.push(`KEP-5836 detection: ${(err as Error).message}`);
        return false;
      },
    );
    return this.served;
  }

  /** Brings one node's list to what management says; whether fleetscope's key is in it after. */
  async sync(first: NodeOptOutRead, managed: boolean): Promise<ResizePreemptionState | undefined> {
    let node: NodeOptOutRead | undefined = first;
    for (let i = 0; i < ATTEMPTS && node; i++) {
      const change = optOutChange(node, managed);
      if (change.kind === 'full') {
        this.errors.push(change.problem);
        return { optedOut: false, problem: change.problem };
      }
      if (change.kind === 'none' || this.stop || (managed && !(await this.fieldServed())))
        return stateOf(node);
      if (this.patches >= OPT_OUT_BUDGET) return this.halt('budget', node);
      this.patches++;
      const out = await this.api.patch(node.name, change.ops);
      if (out === 'forbidden') return this.halt('forbidden', node);
      if (out === 'gone') return undefined;
      if (out !== 'stale')
        return managed && !hasOptOutKey(out.keys) ? this.halt('dropped', out) : stateOf(out);
      node = await this.api.read(node.name);
    }
    if (!node) return undefined;
    this.errors.push(`node ${node.name}: changed ${ATTEMPTS} times while ${OPT_OUT_KEY} was written`);
    return stateOf(node);
  }

  private halt(why: Stop, node: NodeOptOutRead): ResizePreemptionState | undefined {
    if (!this.stop && why !== 'budget') this.errors.push(STOPS[why]);
    this.stop = why;
    return stateOf(node);
  }
}

export interface OptOutInput {
  nodes: readonly BalloonNode[];
  /** The nodes balloons manage: they get the key; the others lose it. */
  managed: ReadonlySet<string>;
  pods?: readonly CountedPod[];
  /** The server dropped the field lately (its gate is off): only removals, no question asked. */
  addsOff?: boolean;
  /** What the OpenAPI said before: not read again while its document is the same. */
  known?: FieldDetection;
}

export interface OptOutOutcome {
  byNode: Map<string, ResizePreemptionState>;
  /** The server dropped the field from a patch this cycle: its gate is off. */
  dropped: boolean;
  /** The patch budget ran out: nodes are left for the next cycle (or attempt). */
  budgetSpent: boolean;
  /** What the OpenAPI says (asked this cycle, or known), to keep for the next one. */
  detection?: FieldDetection;
}

/**
 * Adds fleetscope's key to the `managed` nodes and removes it from the others that carry it. Returns
 * each node's KEP-5836 state: whether the key is there, a list too full to take it, and the Deferred
 * resizes the kubelet holds there without preemption (PodResizePreemptionDisabled).
 */
export async function syncResizePreemptionOptOut(
  api: NodeOptOutApi,
  errors: string[],
  input: OptOutInput,
): Promise<OptOutOutcome> {
  const step = new Step(api, errors, input);
  const held = heldResizes(input.pods ?? []);
  const byNode = new Map<string, ResizePreemptionState>();
  for (const n of input.nodes) {
    const read = { name: n.name, resourceVersion: n.resourceVersion ?? '', keys: n.optOut ?? [] };
    const state = await step.sync(read, input.managed.has(n.name));
    const h = held.get(n.name);
    if (state || h) byNode.set(n.name, { optedOut: false, ...state, ...(h ? { held: h } : {}) });
  }
  return {
    byNode,
    dropped: step.stop === 'dropped',
    budgetSpent: step.stop === 'budget',
    ...(step.detection ? { detection: step.detection } : {}),
  };
}

/** Pods whose Deferred resize the kubelet holds without preemption, by node ("ns/name"). */
function heldResizes(pods: readonly CountedPod[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const p of pods)
    if (p.resizePreemptionDisabled && p.node)
      out.set(p.node, [...(out.get(p.node) ?? []), `${p.namespace}/${p.name}`]);
  return out;
}

/** The nodes some source sizes (not while draining): they carry fleetscope's key. */
const managedNodes = (decisions: readonly NodeDecision[]): Set<string> =>
  new Set(decisions.filter((d) => d.desired).map((d) => d.node));

/** A cycle with nothing to manage: the key is only taken off the nodes that still carry it. */
export async function releaseOptOuts(l: CycleLedger, nodes: readonly BalloonNode[]): Promise<void> {
  await syncResizePreemptionOptOut(l.ctx.objects.optOut, l.errors, { nodes, managed: new Set() });
}

/**
 * The cycle's step: fleetscope's key on the managed nodes, off the others, each node's state noted in
 * its decision. A server that dropped the field (its gate off) gets no key for a day.
 */
export async function optOutOfResizePreemption(
  l: CycleLedger,
  items: BalloonItems,
  nodes: readonly BalloonNode[],
  decisions: readonly NodeDecision[],
  pods: readonly CountedPod[],
): Promise<void> {
  const offUntil = items.state?.resizePreemptionOffUntil;
  const addsOff = offUntil !== undefined && l.now < offUntil;
  const out = await syncResizePreemptionOptOut(l.ctx.objects.optOut, l.errors, {
    nodes,
    managed: managedNodes(decisions),
    pods,
    addsOff,
    ...(items.state?.resizePreemptionField ? { known: items.state.resizePreemptionField } : {}),
  });
  l.resizePreemptionField = out.detection;
  if (addsOff || out.dropped)
    l.resizePreemptionOffUntil = addsOff ? offUntil : l.now + l.settings.unsupportedRecheckMs;
  for (const d of decisions) {
    const o = out.byNode.get(d.node);
    if (o) d.state.resizePreemption = o;
  }
}
