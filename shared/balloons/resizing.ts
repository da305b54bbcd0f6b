/**
 * The balloons' resizes through the shared resize mechanism, with the policy balloons need: deflates
 * first (they give capacity back and never wait), inflates within the write budget, the inflated ones
 * read back once the kubelet had time to answer, and a Deferred inflate reverted at once.
 */
import { type PodLike, pairOf, type ResizeRecord } from '../resize/index.js';
import { type Amounts, amounts, equal, RESOURCES } from './amounts.js';
import type { BalloonPod, CycleLedger, Revert } from './cycle.js';
import type { NodeDecision } from './decide.js';
import { BALLOON_CONTAINER } from './manifests.js';
import type { NodeState } from './store.js';

const desiredOf = (a: Amounts) => ({ [BALLOON_CONTAINER]: { requests: { cpu: a.cpu, memory: a.memory } } });
const specOf = (pod: PodLike): Amounts | undefined => {
  const c = pod.spec?.containers?.find((x) => x.name === BALLOON_CONTAINER);
  return c ? amountsOfList(c.resources?.requests) : undefined;
};
const amountsOfList = (l: { [r: string]: string | undefined } | undefined): Amounts => {
  const p = pairOf(l);
  return amounts(p.cpu ?? 0, p.memory ?? 0);
};

/** Follows up what earlier cycles requested; a Deferred inflate goes back to what the kubelet allocated. */
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
    if (seen.record?.state !== 'deferred') continue;
    const r = await revert(l, pod, seen.record);
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
    if (ctx.onlyNode !== undefined && d.node !== ctx.onlyNode) continue;
    const pod = d.balloon as BalloonPod;
    const desired = desiredOf(d.resizeTo);
    const record = l.records.get(d.node);
    if (!ctx.resizer.mayRequest(pod.like, desired, record).ok) continue;
    if (budget-- <= 0) break;
    try {
      const res = await ctx.resizer.resize({ pod: pod.like, desired }, record);
      l.records.set(d.node, res.record);
      if (res.report) l.reports.push(res.report);
      if (res.report?.kind !== 'resized') continue;
      d.state.balloon = d.resizeTo;
      if (isInflate(d)) inflated.push(d);
    } catch (err) {
      l.errors.push(`node ${d.node}: resizing the balloon failed: ${(err as Error).message}`);
    }
  }
  return inflated;
}

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
      if (seen.record?.state !== 'deferred') continue;
      const r = await revert(
        l,
        { ...pod, like: fresh, allocated: allocatedOf(fresh) ?? pod.allocated },
        seen.record,
      );
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

/**
 * A Deferred inflate goes back to the size the kubelet allocated: left pending, the scheduler would
 * keep counting the larger request and turn new pods away from a node that never shrank, and the
 * kubelet would apply it on its own later, whatever had been decided since.
 */
async function revert(l: CycleLedger, pod: BalloonPod, record: ResizeRecord): Promise<Revert | undefined> {
  const to = pod.allocated ?? allocatedOf(pod.like);
  const from = specOf(pod.like);
  if (!to || !from || equal(to, from)) return undefined;
  try {
    const res = await l.ctx.resizer.resize({ pod: pod.like, desired: desiredOf(to) }, undefined);
    const done: Revert = {
      node: pod.node,
      pod: pod.name,
      podUid: pod.uid,
      from,
      to,
      message: record.message ?? 'deferred by the kubelet',
    };
    l.reverts.push(done);
    if (res.report) l.reports.push(res.report);
    l.records.set(pod.node, res.record);
    return done;
  } catch (err) {
    l.errors.push(`node ${pod.node}: reverting a deferred inflate failed: ${(err as Error).message}`);
    return undefined;
  }
}
