/**
 * A fault of the soak (issue 30, part 5): OOM kills after a downsize. When fleetscope downsizes a node's
 * DaemonSet pod, the cycle after (well within the revert window) one of the containers it lowered is
 * OOM-killed, as the kubelet reports it (lastState terminated OOMKilled, restartCount up, running again
 * since the kill): revert on harm must put that pod back at its size before the downsize, and the
 * DaemonSet's downsizes must then be held. Counted: the kills injected, the reverts that followed (an
 * accepted resize of the pod back to exactly its size before the downsize) and, from the runtimes'
 * logs, the cycles in which the hold blocked a downsize that was due.
 *
 * Only downsizes of cycles with one runtime are faulted, and only in rough cycles: a racer runs two
 * hours ahead, and a downsize it dates by its own clock would not see an OOM dated by the cluster's
 * as coming after it (a limit of the skewed-clock fault, not of revert on harm). Nor where an identity
 * fault changes the cluster's registration from the downsize to the cycle after the kill: a cluster
 * deregistered and registered again inherits nothing, the downsize to revert included.
 */
import { rfc3339 } from '../local/sim/clock.js';
import type { ClusterState } from '../local/sim/cluster.js';
import type { Simulator } from '../local/sim/index.js';
import type { Json } from '../local/sim/json.js';
import { isBalloon } from './invariants/evictions.js';
import { loweredValues, type Sizes, sizesOf } from './invariants/reverted-from.js';
import type { OomFault, ResizeRequest } from './records.js';

/** What the rollout logs each cycle its back-off holds a due downsize (shared/nodescope/rollout-step.ts). */
export const HELD_ON_BACKOFF = 'downsizes held: the DaemonSet is on back-off after a revert';

export class OomAfterDownsize {
  readonly faults: OomFault[] = [];
  /** When (clusters' clock) a cluster's registration changed: what fleetscope knew of it may be gone. */
  readonly forgotten: { cluster: string; at: number }[] = [];
  private seen = 0;
  private due: { req: ResizeRequest; container: string }[] = [];

  constructor(
    private readonly sim: Simulator,
    private readonly resizes: readonly ResizeRequest[],
    /** How many kills the run injects at most (one per node). */
    private readonly budget: number,
    /** Per cluster, the cycles its registration changes in (identity.ts registrationCycles). */
    private readonly registration: ReadonlyMap<string, ReadonlySet<number>> = new Map(),
  ) {}

  /** After a cycle: the downsizes it sent (faulted next cycle, if it had one runtime) and the reverts. */
  afterCycle(cycle: number, oneRuntime: boolean): void {
    const fresh = this.resizes.slice(this.seen);
    this.seen = this.resizes.length;
    for (const r of fresh) this.noteRevert(r, cycle);
    if (!oneRuntime) return;
    for (const r of fresh) {
      if (this.faults.length + this.due.length >= this.budget || !this.faultable(r)) continue;
      const changes = this.registration.get(r.cluster);
      if ([cycle, cycle + 1, cycle + 2].some((c) => changes?.has(c))) continue;
      const container = loweredValues(sizesOf(r.before), sizesOf(r.after))[0]?.container;
      if (container) this.due.push({ req: r, container });
    }
  }

  /** Before a cycle's runtimes run (the clock advanced): the kills of the downsizes the last cycle sent (if a rough cycle with one runtime). */
  beforeCycle(cycle: number, mayKill: boolean): void {
    for (const [cluster, cycles] of this.registration)
      if (cycles.has(cycle)) this.forgotten.push({ cluster, at: this.sim.clock.now() });
    const due = this.due;
    this.due = [];
    if (!mayKill) return;
    for (const { req, container } of due) {
      const killedAt = this.sim.clock.now() - 1000;
      if (!this.oomKill(req, container, killedAt)) continue;
      this.faults.push({
        cluster: req.cluster,
        node: req.node as string,
        pod: `${req.namespace}/${req.pod}`,
        podUid: req.podUid,
        container,
        cycle,
        killedAt,
        downsizedAt: req.at ?? 0,
        before: req.before,
        after: req.after,
      });
    }
  }

  /** An accepted downsize of a node-scope pod whose node was not faulted yet. */
  private faultable(r: ResizeRequest): boolean {
    if (r.balloon || r.status < 200 || r.status >= 300 || !r.node) return false;
    if (this.faults.some((f) => f.cluster === r.cluster && f.node === r.node)) return false;
    if (this.due.some((d) => d.req.cluster === r.cluster && d.req.node === r.node)) return false;
    return loweredValues(sizesOf(r.before), sizesOf(r.after)).length > 0;
  }

  /** A faulted pod resized back to exactly its size before the downsize: the revert followed. */
  private noteRevert(r: ResizeRequest, cycle: number): void {
    if (r.status < 200 || r.status >= 300) return;
    const f = this.faults.find((x) => x.podUid === r.podUid && x.revertCycle === undefined);
    if (f && sameSizes(sizesOf(r.after), sizesOf(f.before))) {
      f.revertCycle = cycle;
      f.revertedAt = r.at ?? 0;
    }
  }

  /** The kubelet's report of an OOM kill of `container` at `at`; false when the pod is gone or moved. */
  private oomKill(req: ResizeRequest, container: string, at: number): boolean {
    // Behind the API, as the kubelet writes it (the simulator's state; the soak runs in its process).
    const state = (this.sim as Simulator & { state(name: string): ClusterState }).state(req.cluster);
    const key = `${req.namespace}/${req.pod}`;
    const pod: Json = state.store.get('pods', key);
    if (!pod || pod.metadata?.uid !== req.podUid || isBalloon(pod.metadata?.labels)) return false;
    const statuses = (pod.status?.containerStatuses ?? []).map((s: Json) =>
      s.name !== container
        ? s
        : {
            ...s,
            state: { running: { startedAt: rfc3339(at) } },
            lastState: {
              terminated: {
                exitCode: 137,
                reason: 'OOMKilled',
                startedAt: s.state?.running?.startedAt ?? rfc3339(at),
                finishedAt: rfc3339(at),
              },
            },
            restartCount: (s.restartCount ?? 0) + 1,
          },
    );
    state.internalWrite('pods', key, { ...pod, status: { ...pod.status, containerStatuses: statuses } });
    return true;
  }
}

const sameSizes = (a: Sizes, b: Sizes): boolean => JSON.stringify(a) === JSON.stringify(b);
