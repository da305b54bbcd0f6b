/**
 * The balloons' resizes through the shared resize mechanism, with the policy balloons need: deflates
 * first (they give capacity back and never wait), inflates within the write budget, the inflated ones
 * read back once the kubelet had time to answer, and a Deferred inflate reverted at once.
 */
import { desiredDigest, observeResize, type PodLike, pairOf, type ResizeRecord } from '../resize/index.js';
import { type Amounts, amounts, each, equal, min, RESOURCES } from './amounts.js';
import type { BalloonPod } from './cluster-read.js';
import type { NodeDecision } from './decide.js';
import type { CycleLedger, Revert } from './ledger.js';
import { BALLOON_CONTAINER } from './manifests.js';
import type { NodeState } from './store.js';

const desiredOf = (a: Amounts) => ({ [BALLOON_CONTAINER]: { requests: { cpu: a.cpu, memory: a.memory } } });
/** The balloon container's requests (absent: the pod has no balloon container). */
export const specOf = (pod: PodLike): Amounts | undefined => {
  const c = pod.spec?.containers?.find((x) => x.name === BALLOON_CONTAINER);
  return c ? amountsOfList(c.resources?.requests) : undefined;
};
const amountsOfList = (l: { [r: string]: string | undefined } | undefined): Amounts => {
  const p = pairOf(l);
  return amounts(p.cpu ?? 0, p.memory ?? 0);
};

/**
 * Follows up what earlier cycles requested, and reverts any increase of a balloon the kubelet holds
 * back (Deferred or Infeasible), decided from the pod as it is: whoever wrote it, whether or not a
 * record of it survived.
 */
export async function followUp(
  l: CycleLedger,
  pods: BalloonPod[],
  previous: Readonly<Record<string, NodeState>>,
): Promise<void> {
  for (const pod of pods) {
    if (!pod.balloon || pod.node === '') continue;
    const seen = l.ctx.resizer.observe(pod.like, previous[pod.node]?.resize);
    if (seen.report) l.reports.push(seen.report);
    l.records.set(pod.node, seen.record);
    const r = await revert(l, pod);
    if (!r) continue;
    l.reverted.add(pod.node);
    pod.requests = r.to;
  }
}

/** Sends the decided resizes within the budget; returns the nodes whose balloon was inflated. */
export async function apply(l: CycleLedger, decisions: NodeDecision[]): Promise<NodeDecision[]> {
  const { ctx } = l;
  const inflated: NodeDecision[] = [];
  let budget = l.settings.writeBudget;
  // Deflates first: they give capacity back and never wait for anything.
  const order = [...decisions].sort(
    (a, b) => Number(isInflate(a)) - Number(isInflate(b)) || a.node.localeCompare(b.node),
  );
  for (const d of order) {
    if (!d.resizeTo || !d.balloon) continue;
    // Without a sound PriorityClass an inflated balloon could be preempted or preempt: deflates only.
    if (l.inflatesHeld && isInflate(d)) continue;
    if (ctx.onlyNode !== undefined && d.node !== ctx.onlyNode) continue;
    const pod = d.balloon as BalloonPod;
    const record = l.records.get(d.node);
    // While a deflate is Deferred, the request is lowered to the pending spec wherever the plan does not
    // inflate (it counts the larger allocated size): a pending deflate is never raised back up to a
    // held size, so the request replaces the Deferred one at once. A planned inflate is kept.
    const pending = record?.state === 'deferred' ? specOf(pod.like) : undefined;
    const to = pending ? belowPending(d.resizeTo, pending, pod.requests) : d.resizeTo;
    if (pending && equal(to, pending)) continue;
    const desired = desiredOf(to);
    if (!ctx.resizer.mayRequest(pod.like, desired, pending ? undefined : gateOf(record, to, pod)).ok)
      continue;
    if (budget-- <= 0) break;
    try {
      const res = await ctx.resizer.resize({ pod: pod.like, desired }, record);
      l.records.set(d.node, res.record);
      if (res.report) l.reports.push(res.report);
      if (res.report?.kind !== 'resized') continue;
      d.state.balloon = to;
      if (isInflate(d)) inflated.push(d);
    } catch (err) {
      l.errors.push(`node ${d.node}: resizing the balloon failed: ${(err as Error).message}`);
    }
  }
  return inflated;
}

/**
 * What holds a request back: for an inflate, the record with its back-off; a deflate gives capacity back
 * and is never held back by a back-off (a refused or failed inflate must not keep a node small for an
 * hour), only by the very same request in progress or refused as it stands.
 */
function gateOf(record: ResizeRecord | undefined, to: Amounts, pod: BalloonPod): ResizeRecord | undefined {
  if (RESOURCES.some((r) => to[r] > pod.requests[r])) return record;
  const same = record?.desired === desiredDigest(desiredOf(to));
  return same && record?.state !== 'error' ? record : undefined;
}

/**
 * The decided size, no larger than the pending spec except where the plan inflates (above what is
 * counted: it sent that only where the whole new request fits). Where the pending spec equals what is
 * counted, nothing is pending there and the minimum is the decision itself.
 */
const belowPending = (decided: Amounts, pending: Amounts, counted: Amounts): Amounts =>
  each((r) => (decided[r] > counted[r] ? decided[r] : Math.min(decided[r], pending[r])));

const isInflate = (d: NodeDecision) =>
  d.resizeTo !== undefined &&
  d.balloon !== undefined &&
  RESOURCES.some((r) => d.resizeTo![r] > d.balloon!.requests[r]);

/** Reads the inflated balloons back once the kubelet had time to answer, and reverts what it deferred. */
export async function settle(l: CycleLedger, inflated: NodeDecision[]): Promise<void> {
  const { ctx } = l;
  if (l.settings.settleMs > 0)
    await (ctx.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(l.settings.settleMs);
  for (const d of inflated) {
    const pod = d.balloon as BalloonPod;
    try {
      const fresh = await ctx.api.readPod(pod.namespace, pod.name);
      if (!fresh || fresh.metadata?.uid !== pod.uid) continue;
      const seen = ctx.resizer.observe(fresh, l.records.get(d.node));
      if (seen.report) l.reports.push(seen.report);
      l.records.set(d.node, seen.record);
      const r = await revert(l, { ...pod, like: fresh, allocated: allocatedOf(fresh) ?? pod.allocated });
      if (r) d.state.balloon = r.to;
    } catch (err) {
      l.errors.push(`node ${d.node}: reading the balloon back failed: ${(err as Error).message}`);
    }
  }
}

export function allocatedOf(pod: PodLike): Amounts | undefined {
  const s = pod.status?.containerStatuses?.find((c) => c.name === BALLOON_CONTAINER);
  const list = s?.allocatedResources ?? s?.resources?.requests;
  return list ? amountsOfList(list) : undefined;
}

/** An increase of the balloon that the kubelet holds back, from the pod's status; undefined for none. */
export function heldIncrease(
  pod: PodLike,
  allocated: Amounts | undefined,
): { from: Amounts; to: Amounts; message: string } | undefined {
  const obs = observeResize(pod);
  if (obs.state !== 'deferred' && obs.state !== 'infeasible') return undefined;
  const from = specOf(pod);
  const to = allocated ?? allocatedOf(pod);
  // A deflate is never reverted: it gives capacity back, and the kubelet applies it once it can.
  if (!from || !to || !RESOURCES.some((r) => from[r] > to[r])) return undefined;
  return { from, to: min(from, to), message: obs.message ?? `${obs.reason ?? obs.state} by the kubelet` };
}

/**
 * A Deferred or Infeasible increase goes back to the size the kubelet allocated (a decrease in the same
 * request is kept): left pending, the scheduler would keep counting the larger request and turn new pods
 * away from a node that never shrank, and the kubelet would apply it on its own later, whatever had been
 * decided since. fleetscope's own Infeasible request keeps its back-off through the revert.
 */
async function revert(l: CycleLedger, pod: BalloonPod): Promise<Revert | undefined> {
  const held = heldIncrease(pod.like, pod.allocated);
  if (!held) return undefined;
  const refused = l.records.get(pod.node);
  try {
    const res = await l.ctx.resizer.resize({ pod: pod.like, desired: desiredOf(held.to) }, undefined);
    const done: Revert = { node: pod.node, pod: pod.name, podUid: pod.uid, ...held };
    l.reverts.push(done);
    if (res.report) l.reports.push(res.report);
    // Our own refused request keeps its back-off; another writer's refusal must not hold ours back.
    const ours = refused !== undefined && refused.desired === desiredDigest(desiredOf(held.from));
    const keep = ours && (refused.state === 'infeasible' || refused.state === 'rejected');
    l.records.set(pod.node, keep ? refused : res.record);
    return done;
  } catch (err) {
    l.errors.push(`node ${pod.node}: reverting a held-back inflate failed: ${(err as Error).message}`);
    return undefined;
  }
}
