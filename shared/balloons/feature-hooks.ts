/**
 * The balloons feature's own task (KEP-3920 hook): deflate every balloon to the floor, so that turning
 * balloons off gives every node its whole capacity back before the DaemonSet goes, and never leaves
 * capacity that doesn't exist. Loaded only when a transition performs it.
 */
import { ClusterSnapshot } from '../cycle/snapshot.js';
import type { TaskContext, TaskOutcome } from '../features/spec.js';
import { RawReader } from '../k8s/raw-reader.js';
import { equal } from './amounts.js';
import { runBalloonPhase } from './phase.js';

export async function deflateEveryBalloon(ctx: TaskContext): Promise<TaskOutcome> {
  const client = await ctx.client();
  const result = await runBalloonPhase({
    cluster: ctx.cluster,
    cycleId: `feature/${new Date(ctx.now).toISOString()}`,
    client,
    snapshot: new ClusterSnapshot(new RawReader(client), { pageSize: 500, allPods: true }),
    db: ctx.db,
    table: ctx.table,
    now: () => ctx.now,
    drain: true,
  });
  // Its cluster writes (the resizes and their Events) are counted by the task's write fence; the
  // balloon state it stores is cleared by a later task of the same transition.
  if (result.errors.length) throw new Error(result.errors.slice(0, 3).join('; '));
  const left = result.decisions.filter((d) => d.resizeTo && !equal(d.state.balloon, d.resizeTo));
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
