/**
 * The balloons feature's own task (KEP-3920 hook): deflate every balloon to the floor, so that turning
 * balloons off gives every node its whole capacity back before the DaemonSet goes, and never leaves
 * capacity that doesn't exist. Loaded only when a transition performs it.
 */
import { ClusterSnapshot } from '../cycle/snapshot.js';
import type { LeftoverContext, TaskContext, TaskOutcome } from '../features/spec.js';
import { RawReader } from '../k8s/raw-reader.js';
import { type Amounts, equal } from './amounts.js';
import type { BalloonPod } from './cluster-read.js';
import type { NodeDecision } from './decide.js';
import { NodeOptOutApi } from './node-opt-out.js';
import { hasOptOutKey, OPT_OUT_FIELD, OPT_OUT_KEY } from './opt-out.js';
import { syncResizePreemptionOptOut } from './opt-out-step.js';
import { runBalloonPhase } from './phase.js';
import { balloonNode } from './read.js';
import { specOf } from './resizing.js';

export async function deflateEveryBalloon(ctx: TaskContext): Promise<TaskOutcome> {
  const client = await ctx.client();
  const result = await runBalloonPhase({
    cluster: ctx.cluster,
    cycleId: `feature/${new Date(ctx.now).toISOString()}`,
    client,
    snapshot: new ClusterSnapshot(new RawReader(client), { pageSize: 500, allPods: true }),
    store: ctx.balloons,
    now: () => ctx.now,
    drain: true,
  });
  // Its cluster writes (the resizes and their Events) are counted by the task's write fence; the
  // balloon state it stores is cleared by a later task of the same transition. An unsound balloon is
  // held at the floor (deflated, never inflated): not a failure here (a priority-0 one wedged the
  // turn-off for good).
  const failed = result.errors.filter((e) => !result.unsound.includes(e));
  if (failed.length) throw new Error(failed.slice(0, 3).join('; '));
  const left = result.decisions.filter((d) => d.resizeTo && !deflated(d, d.resizeTo));
  if (left.length === 0) return { done: true };
  return {
    done: false,
    waitingFor: `${left.length} balloon(s) not deflated yet: ${left
      .slice(0, 5)
      .map((d) => d.node)
      .join(', ')}`,
    pollMs: 30_000,
  };
}

/**
 * At the size asked. An unsound balloon's pod may hold more than its balloon container (a webhook's
 * sidecar, init containers, overhead) that no resize of fleetscope's changes: it is deflated once its
 * balloon container is at the size (or it has none).
 */
function deflated(d: NodeDecision, to: Amounts): boolean {
  if (equal(d.state.balloon, to)) return true;
  const pod = d.balloon as Partial<BalloonPod> | undefined;
  if (!pod?.problems || !pod.like) return false;
  const own = specOf(pod.like);
  return own === undefined || equal(own, to);
}

/**
 * The balloons feature's last cluster task on 1.37+ (KEP-5836): fleetscope's key taken off every node's
 * `disableResizePreemption`, other owners' keys kept. A node list, then one fenced patch per node that
 * carries the key; nothing at all is written where no node does (every server before 1.37).
 */
export async function releaseResizePreemptionOptOut(ctx: TaskContext): Promise<TaskOutcome> {
  const reader = new RawReader(await ctx.client());
  const nodes = await everyNode(reader);
  const errors: string[] = [];
  const out = await syncResizePreemptionOptOut(new NodeOptOutApi(reader), errors, {
    nodes,
    managed: new Set(),
  });
  if (errors.length) throw new Error(errors.slice(0, 3).join('; '));
  if (out.budgetSpent)
    return {
      done: false,
      waitingFor: `more nodes carry ${OPT_OUT_KEY}: the next attempt removes more`,
      pollMs: 1000,
    };
  return { done: true };
}

const everyNode = async (reader: RawReader) =>
  (await new ClusterSnapshot(reader, { pageSize: 500 }).nodes()).map(balloonNode);

/** An Off feature's leftover the task checks cannot see: nodes still carrying fleetscope's KEP-5836 key. */
export async function balloonsLeftovers(ctx: LeftoverContext): Promise<string[]> {
  const nodes = (await everyNode(new RawReader(await ctx.client()))).filter((n) => hasOptOutKey(n.optOut));
  return nodes.length
    ? [
        `${nodes.length} node(s) still carry ${OPT_OUT_KEY} in ${OPT_OUT_FIELD}: ${nodes
          .slice(0, 5)
          .map((n) => n.name)
          .join(', ')}`,
      ]
    : [];
}
