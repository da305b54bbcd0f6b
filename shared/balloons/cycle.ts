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
import { noteAutoscalers } from './autoscalers.js';
import { recordClusterEvents } from './cluster-events.js';
import type { BalloonPod, CountedPod } from './cluster-read.js';
import { saveCycle } from './cycle-state.js';
import { decide, type StaleRequest } from './decide.js';
import { compile, idleResult, resizeUnsupported, unsupportedResult, wanted } from './gate.js';
import { BalloonObjectError } from './incluster.js';
import { type BalloonCycleContext, type BalloonCycleResult, CycleLedger } from './ledger.js';
import type { Selection } from './manifests.js';
import { optOutOfResizePreemption, releaseOptOuts } from './opt-out-step.js';
import { recheckInflates } from './recheck.js';
import { apply, followUp, settle } from './resizing.js';
import { DEFAULT_BALLOON_SETTINGS } from './settings.js';
import type { BalloonItems, Impostor } from './store.js';

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
  for (const d of decisions) if (d.balloon?.problems) l.unsound.push(unsoundBalloon(d.node, d.balloon));
  l.errors.push(...l.unsound);
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
    unsound: l.unsound,
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
