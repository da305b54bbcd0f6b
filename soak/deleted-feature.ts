/**
 * A fault of the soak (issue 34, defect 2): the Feature object deleted mid-wait, as `kubectl delete
 * feature` would. After the operator turns the skewed agent's feature off in a cluster (./agent.ts),
 * at the first cycle whose transition is waiting for uses, the Feature object is deleted in the
 * simulated apiserver (the agent's report of on goes with it). A missing object is not "no uses": the
 * wait must hold until the agent reports off again, which the agent's per-cycle judgement and "no
 * transition completed while a use of the current epoch reports on" see.
 */
import type { Simulator } from '../local/sim/index.js';
import { inTransition, parseRef } from '../shared/features/model.js';
import type { FeatureStore } from '../shared/features/store.js';
import { AGENT_FEATURE } from './declared.js';
import type { FlipDone } from './records.js';

export class FeatureObjectDeleter {
  /** Feature objects deleted while their transition waited for uses ("cluster @cycle"). */
  readonly deleted: string[] = [];
  private readonly done = new Set<FlipDone>();

  constructor(
    private readonly sim: Simulator,
    private readonly store: FeatureStore,
  ) {}

  /** Before a cycle's passes: delete the object of each agent-off flip whose transition now waits. */
  async step(flips: FlipDone[], cycle: number): Promise<void> {
    const ref = parseRef(AGENT_FEATURE);
    for (const f of flips) {
      if (f.feature !== AGENT_FEATURE || f.desired !== 'off' || !f.changed || this.done.has(f)) continue;
      const r = await this.store.get(f.cluster, ref);
      if (!r || !inTransition(r.state) || !r.tasks[0]?.title.startsWith('wait for uses')) continue;
      this.done.add(f);
      if (this.sim.cluster(f.cluster).store.delete('features.fleetscope.io', ref.name, ref.namespace))
        this.deleted.push(`${f.cluster} @${cycle}`);
    }
  }
}
