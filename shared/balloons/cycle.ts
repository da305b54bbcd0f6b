/**
 * One balloon cycle of one cluster: load what the operator asked (policies, explicit sizes) and the
 * last cycle's state; make sure the PriorityClass and DaemonSet exist for the nodes to manage; follow up
 * the resizes already requested (a Deferred inflate is reverted at once); decide every node; resize
 * within the write budget; read the inflated balloons back after the kubelet had time to answer and
 * revert what it deferred, in the same cycle; store the state (conditionally on its version).
 *
 * Reads come from the cycle's shared snapshot (`read`), so nodes and pods read by node scope in the same
 * invocation are not read again.
 */
import type { PodLike, ResizeApi, ResizeRecord, ResizeReport, Resizer } from '../resize/index.js';
import type { Amounts } from './amounts.js';
import { noteAutoscalers } from './autoscalers.js';
import { recordClusterEvents } from './cluster-events.js';
import { saveCycle } from './cycle-state.js';
import { type BalloonNode, type CountedPod, decide, type NodeDecision, type StaleRequest } from './decide.js';
import { compile, idleResult, resizeUnsupported, unsupportedResult, wanted } from './gate.js';
import { BalloonObjectError, type BalloonObjects } from './incluster.js';
import type { Selection } from './manifests.js';
import { optOutOfResizePreemption, releaseOptOuts } from './opt-out-step.js';
import { type FreshPods, recheckInflates } from './recheck.js';
import { apply, followUp, settle } from './resizing.js';
import { type BalloonSettings, DEFAULT_BALLOON_SETTINGS } from './settings.js';
import type { BalloonItems, BalloonStore, FieldDetection } from './store.js';
import type { BalloonSummary } from './summary-model.js';

export interface BalloonPod extends CountedPod {
  /** The pod as the resize mechanism reads it. */
  like: PodLike;
  /** What the kubelet allocated to the balloon container (the size a Deferred inflate is reverted to). */
  allocated?: Amounts;
}

/** What the cycle reads from the cluster; the shared snapshot of the invocation provides it. */
export interface ClusterRead {
  nodes(): Promise<BalloonNode[]>;
  /** Every pod bound to a node and not finished. */
  pods(): Promise<BalloonPod[]>;
}

export interface BalloonCycleContext {
  cluster: string;
  cycleId: string;
  store: BalloonStore;
  objects: BalloonObjects;
  resizer: Resizer;
  /** The resizer's calls, for reading inflated balloons back. */
  api: ResizeApi;
  read: ClusterRead;
  /** Each inflated node's pods read afresh after the inflate (the bind race, ./recheck.ts). */
  fresh: FreshPods;
  settings?: Partial<BalloonSettings>;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Size this node only (an explicit request being served at once); the others keep their state. */
  onlyNode?: string;
  /**
   * Deflate every balloon to the floor whatever asks for a size (the first task of turning balloons
   * off): the nodes get their whole capacity back before the DaemonSet goes.
   */
  drain?: boolean;
  /** The cluster's balloon items, when the caller read them already (to choose the snapshot's reads). */
  items?: BalloonItems;
}

export interface Revert {
  node: string;
  pod: string;
  podUid: string;
  from: Amounts;
  to: Amounts;
  message: string;
  /** Pods bound or nominated to the node between the cycle's read and its inflate (./recheck.ts). */
  boundSinceRead?: string[];
}

/** A pod labelled as a balloon that fleetscope does not own (a workload; never written). */
export interface Impostor {
  namespace: string;
  name: string;
  uid: string;
  node: string;
}

export interface BalloonCycleResult {
  cluster: string;
  at: number;
  managed: boolean;
  summary: BalloonSummary;
  decisions: NodeDecision[];
  reports: ResizeReport[];
  reverts: Revert[];
  /** Explicit sizes dropped this cycle, each saying why (their node is gone, or is another node). */
  dropped: string[];
  errors: string[];
  /** Labelled pods that are not fleetscope's balloons, counted as workloads. */
  impostors: Impostor[];
  /** Drift of fleetscope's objects found and repaired this cycle (the PriorityClass). */
  repairs: string[];
}

/** What one cycle gathers as it goes: every report, revert, error and resize record. */
export class CycleLedger {
  readonly reports: ResizeReport[] = [];
  readonly reverts: Revert[] = [];
  readonly errors: string[] = [];
  readonly records = new Map<string, ResizeRecord | undefined>();
  /** Nodes whose inflate was reverted this cycle: they wait for the next cycle's fresh read. */
  readonly reverted = new Set<string>();
  readonly repairs: string[] = [];
  /** Why no balloon may grow this cycle (the PriorityClass is not sound); deflates still go. */
  inflatesHeld: string | undefined;
  /** Until when no KEP-5836 key is added: the server dropped the field (its gate is off). */
  resizePreemptionOffUntil: number | undefined;
  /** What core/v1's OpenAPI says of the KEP-5836 field, kept so that it is read again only when it changes. */
  resizePreemptionField: FieldDetection | undefined;
  constructor(
    readonly ctx: BalloonCycleContext,
    readonly settings: BalloonSettings,
    readonly now: number,
  ) {}
}

/**
 * The balloons' priority class and DaemonSet, the DaemonSet on the nodes the policies and requests name.
 * A broken object is recorded and the cycle goes on (nodes still grow): without a sound PriorityClass no
 * balloon grows.
 */
async function ensureBalloonObjects(l: CycleLedger, items: BalloonItems): Promise<DaemonSetOwner> {
  const { ctx } = l;
  const selection: Selection = {
    policies: items.policies,
    explicitNodes: items.requests.map((r) => r.node),
  };
  try {
    l.repairs.push(...(await ctx.objects.ensurePriorityClass()).repaired);
  } catch (err) {
    l.inflatesHeld = (err as Error).message;
    l.errors.push(`${l.inflatesHeld}; balloons only deflate until it is fixed`);
  }
  let owner: DaemonSetOwner = { known: false };
  try {
    const ds = await ctx.objects.ensureDaemonSet(selection);
    l.repairs.push(...ds.repaired);
    owner = ds.uid ? { known: true, uid: ds.uid } : { known: false };
  } catch (err) {
    l.errors.push(`balloon DaemonSet: ${(err as Error).message}`);
    if (err instanceof BalloonObjectError) owner = { known: true };
  }
  l.errors.push(...(await ctx.objects.namespaceLimits()));
  return owner;
}

/** Whose pods are balloons: the DaemonSet's uid as read; known without a uid when it is not fleetscope's. */
type DaemonSetOwner = { known: false } | { known: true; uid?: string };

/** A pod made by another object of the balloon DaemonSet's name (not fleetscope's) is an impostor. */
function ownedBy(pods: BalloonPod[], owner: DaemonSetOwner): void {
  if (!owner.known) return;
  for (const p of pods)
    if (p.balloon && p.ownerUid !== owner.uid) {
      p.balloon = false;
      p.impostor = true;
    }
}

const impostorsOf = (pods: readonly BalloonPod[]): Impostor[] =>
  pods
    .filter((p) => p.impostor)
    .map((p) => ({ namespace: p.namespace, name: p.name, uid: p.uid, node: p.node }));

export async function runBalloonCycle(ctx: BalloonCycleContext): Promise<BalloonCycleResult> {
  const l = new CycleLedger(ctx, { ...DEFAULT_BALLOON_SETTINGS, ...ctx.settings }, (ctx.now ?? Date.now)());
  const items = ctx.items ?? (await ctx.store.load(ctx.cluster));
  const policies = compile(items, l.errors);
  const nodes = await ctx.read.nodes();
  // Nothing managed any more: only fleetscope's KEP-5836 key is taken off the nodes that still carry it.
  if (!wanted(items, nodes) && !ctx.drain) return releaseOptOuts(l, nodes).then(() => idleResult(l));
  if (ctx.drain && !(await ctx.objects.daemonSetExists()))
    return releaseOptOuts(l, nodes).then(() => idleResult(l));
  const unsupported = await resizeUnsupported(l, items);
  if (unsupported) return unsupportedResult(l, items, unsupported);
  const owner = ctx.drain ? { known: false as const } : await ensureBalloonObjects(l, items);
  const pods = await ctx.read.pods();
  ownedBy(pods, owner);
  const impostors = impostorsOf(pods);
  const usage = await ctx.objects.nodeUsage().catch(() => undefined);
  const previous = items.state?.nodes ?? {};
  await followUp(l, pods, previous);
  const { decisions, stale } = decide({
    ...(ctx.drain ? { drain: true } : {}),
    ...(usage ? { usage } : {}),
    now: l.now,
    nodes,
    pods,
    policies,
    requests: items.requests,
    previous,
  });
  noteAutoscalers(decisions, nodes);
  // Before any inflate: a workload's resize Deferred by it must wait for the node to grow, not preempt.
  await optOutOfResizePreemption(l, items, nodes, decisions, pods);
  const dropped = await dropStale(
    l,
    ctx.onlyNode ? stale.filter((s) => s.request.node === ctx.onlyNode) : stale,
  );
  for (const d of decisions) if (d.balloon?.problems) l.errors.push(unsoundBalloon(d.node, d.balloon));
  const inflated = await apply(
    l,
    decisions.filter((d) => !l.reverted.has(d.node)),
  );
  if (inflated.length > 0) {
    // The bind race: once right away (before a kubelet admits what was bound meanwhile), once after
    // the settle wait (a scheduler that bound from a view older than the inflate).
    const known = new Set(pods.map((p) => p.uid));
    await recheckInflates(l, inflated, known);
    await settle(l, inflated);
    await recheckInflates(l, inflated, known);
  }
  await recordClusterEvents(ctx.objects, {
    decisions,
    reports: l.reports,
    reverts: l.reverts,
    impostors: newImpostors(impostors, items.state?.impostors),
    repairs: l.repairs,
    now: l.now,
  });
  // A cycle of one node (an explicit request) saw only that node's pods: keep the others' impostors.
  const kept = ctx.onlyNode
    ? [...impostors, ...(items.state?.impostors ?? []).filter((p) => p.node !== ctx.onlyNode)]
    : impostors;
  const summary = await saveCycle(l, decisions, previous, items.state?.version, kept);
  return {
    cluster: ctx.cluster,
    at: l.now,
    managed: true,
    summary,
    decisions,
    reports: l.reports,
    reverts: l.reverts,
    dropped,
    errors: l.errors,
    impostors,
    repairs: l.repairs,
  };
}

/**
 * Explicit sizes whose node is gone or is another node are deleted (only the very item read: a size set
 * again meanwhile stays) and said once; they are not errors, and never size the node that took the name.
 */
async function dropStale(l: CycleLedger, stale: readonly StaleRequest[]): Promise<string[]> {
  const out: string[] = [];
  for (const { request, why } of stale) {
    try {
      await l.ctx.store.deleteRequestIf(l.ctx.cluster, request.node, request.requestedAt);
      out.push(`explicit size for node ${request.node} dropped: ${why}`);
    } catch (err) {
      l.errors.push(
        `explicit size for node ${request.node} (${why}) could not be dropped: ${(err as Error).message}`,
      );
    }
  }
  return out;
}

/** A balloon pod that is not what a balloon must be, named with each field and what is done about it. */
const unsoundBalloon = (node: string, b: CountedPod) =>
  `node ${node}: balloon pod ${b.namespace}/${b.name} has ${b.problems!.join('; ')}: deflated to the floor and never inflated (the DaemonSet's template is kept as balloons need it: delete the pod to have it recreated from it)`;

/** Impostors not reported by the last cycle (one Event each, not one per cycle). */
const newImpostors = (now: Impostor[], before: readonly Impostor[] | undefined): Impostor[] => {
  const seen = new Set((before ?? []).map((p) => p.uid));
  return now.filter((p) => !seen.has(p.uid));
};
