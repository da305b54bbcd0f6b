/**
 * A scope: one container of a DaemonSet on one node. Its state is the aggregate (histograms and CPU
 * sample statistics) plus the container-instance bookkeeping (memory window, last sample times) that
 * decides how the next sample lands.
 */
import type { GoTime } from '../gotime.js';
import { HOUR } from '../gotime.js';
import { AggregateContainerState } from './aggregate.js';
import { type AggregationsConfig, sameAggregationsConfig } from './aggregations-config.js';
import { ContainerState } from './container.js';

export class ScopeState {
  readonly container: ContainerState;

  constructor(
    readonly aggregate: AggregateContainerState,
    container?: ContainerState,
  ) {
    this.container = container ?? new ContainerState(aggregate);
    if (this.container.aggregator !== aggregate)
      throw new Error('the container state must feed the aggregate');
  }

  static create(config: AggregationsConfig, creationTime: GoTime): ScopeState {
    return new ScopeState(new AggregateContainerState(config, creationTime));
  }

  get config(): AggregationsConfig {
    return this.aggregate.config;
  }

  clone(): ScopeState {
    const aggregate = this.aggregate.clone();
    return new ScopeState(aggregate, this.container.clone(aggregate));
  }
}

/**
 * AggregateStateByContainerName for one container name: a fresh aggregate into which every given
 * aggregate is merged in order, exactly as upstream builds the state it recommends from (a single state
 * merged into a fresh one equals itself unless its reference is not a multiple of the half-life, as
 * after loading an odd checkpoint). The inputs are not modified. The creation time of the result is the
 * earliest of the inputs'.
 */
export function mergeAggregates(states: readonly AggregateContainerState[]): AggregateContainerState {
  const first = states[0];
  if (!first) throw new RangeError('mergeAggregates needs at least one state');
  let creation = first.creationTime;
  for (const s of states) {
    if (!sameAggregationsConfig(s.config, first.config))
      throw new Error('cannot merge states created with different aggregation settings');
    if (s.creationTime < creation) creation = s.creationTime;
  }
  const merged = new AggregateContainerState(first.config, creation);
  for (const s of states) merged.mergeContainerState(s);
  return merged;
}

/** aggregateContainerStateGCInterval: upstream garbage-collects states at most this often. */
export const AGGREGATE_STATE_GC_INTERVAL = HOUR;

/**
 * When upstream's garbage collector deletes a state (spec §3.5): when it is expired (no CPU sample for
 * interval × count, 8 days; without any CPU sample, 8 days since creation), or when it has no CPU
 * sample and nothing contributes to it any more (no live pod of a live controller on the scope).
 */
export function isGarbage(state: AggregateContainerState, now: GoTime, contributive: boolean): boolean {
  if (!contributive && state.isEmpty()) return true;
  return state.isExpired(now);
}
