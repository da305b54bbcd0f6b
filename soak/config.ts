import { allSchedules } from '../shared/capabilities.js';
import { MIRROR_RETRY_MS } from '../shared/features/reconciler.js';
import { AGENT_FEATURE, FAILING_FEATURE } from './declared.js';
import type { Desired } from './records.js';

/**
 * How big and how rough a soak is. `npm run soak` runs FULL (sized to end within 30 minutes on a
 * shared 2-core machine), `npm run soak -- --long` LONG (the 20-cluster, 200-cycle run: hours there);
 * `npm test` runs SHORT.
 */
export interface SoakConfig {
  clusters: number;
  nodes: number;
  /** Soak cycles: each advances the simulated clock by the shortest schedule period and runs every schedule once. */
  cycles: number;
  /** SIGKILLs of a runtime, at random points of random cycles. */
  kills: number;
  /** The share of the cycles, [from, to), during which two runtimes race on the same state. */
  race: [number, number];
  /** The share of Kubernetes requests that get a fault (429, 500, 503, reset, 409 on writes). */
  faultRate: number;
  /** Responses slower than the client's timeout (10 s each, so few). */
  slowResponses: number;
  /** A pair of concurrent CLI commands (ClusterSet membership, IDs) every this many cycles; 0: none. */
  cliEvery: number;
  /** Clean cycles at the end (no faults, kills or race), after which the invariants are checked. */
  settleCycles: number;
  seed: number;
  /** The share of the clusters (the first ones) with an elastic node pool sized by a balloon policy. */
  balloonShare: number;
  /** Elastic nodes per balloon cluster. */
  elasticNodes: number;
  /** The chance, per balloon cluster and cycle, that its batch workload changes (pods come or go). */
  workloadChange: number;
  /**
   * Feature flips an operator makes during the run: the cluster (index), when (a share of the cycles)
   * and the desired value ('default': back to the feature's default).
   */
  flips: FeatureFlip[];
  /** When (a share of the cycles) the last cluster's kube-system is rebuilt (./identity.ts). */
  rebuildAt: number;
  /** When the second cluster's deregistration is killed; it is finished and registered again next cycle. */
  deregisterAt: number;
  /**
   * When the first cluster is adopted by a second control plane (`cluster adopt --force`, killed
   * mid-way, then run to its end); the cycle after, the soak's own takes it back the same way.
   */
  adoptAt: number;
  /** OOM kills injected after downsizes (./oom-faults.ts), at most one per node. */
  oomFaults: number;
}

export interface FeatureFlip {
  cluster: number;
  at: number;
  /** NAME (fleetscope's own) or NAMESPACE/NAME (a declared one, ./declared.ts). */
  feature: string;
  desired: Desired;
}

/** What the simulated clock advances each cycle: the shortest schedule period. */
export const soakPeriodMs = (): number => Math.min(...allSchedules().map((s) => s.everyMinutes)) * 60_000;

/**
 * Clean cycles enough for what waits on the clock once faults stop: a Feature mirror whose write
 * failed in the last rough cycle is written again only after MIRROR_RETRY_MS.
 */
const settleAtLeast = (cycles: number): number =>
  Math.max(cycles, Math.ceil(MIRROR_RETRY_MS / soakPeriodMs()) + 1);

/** The cycle (1-based, never the first: it registers the fleet) at a share of the run. */
export const cycleAt = (cfg: Pick<SoakConfig, 'cycles'>, at: number): number =>
  Math.max(2, Math.min(cfg.cycles, Math.round(at * cfg.cycles)));

/** The cycle (1-based, never the first: it registers the fleet) at which a flip happens. */
export const flipCycle = (cfg: Pick<SoakConfig, 'cycles'>, f: FeatureFlip): number => cycleAt(cfg, f.at);

const flip = (
  cluster: number,
  at: number,
  desired: FeatureFlip['desired'],
  feature = 'balloons',
): FeatureFlip => ({ cluster, at, feature, desired });

export const FULL: SoakConfig = {
  clusters: 10,
  nodes: 4,
  cycles: 80,
  kills: 8,
  race: [0.4, 0.55],
  faultRate: 0.03,
  slowResponses: 2,
  cliEvery: 8,
  settleCycles: settleAtLeast(10),
  seed: 9,
  balloonShare: 0.5,
  elasticNodes: 2,
  workloadChange: 0.3,
  flips: [
    // Off and on twice; the second on during the race.
    flip(0, 0.15, 'off'),
    flip(0, 0.35, 'on'),
    flip(0, 0.5, 'off'),
    flip(0, 0.75, 'on'),
    // Off, reversed at once (mid-transition), then off for good during the race.
    flip(2, 0.2, 'off'),
    flip(2, 0.205, 'on'),
    flip(2, 0.45, 'off'),
    // Off, then back to the default (on).
    flip(4, 0.3, 'off'),
    flip(4, 0.7, 'default'),
    // A cluster without balloons: off for good.
    flip(7, 0.25, 'off'),
    // The agent with a skewed clock: its feature off for good, off and on again, off during the race.
    flip(3, 0.1, 'off', AGENT_FEATURE),
    flip(6, 0.2, 'off', AGENT_FEATURE),
    flip(6, 0.6, 'on', AGENT_FEATURE),
    flip(9, 0.45, 'off', AGENT_FEATURE),
    // A declaration whose task always fails: it must end stuck, shown so.
    flip(5, 0.3, 'on', FAILING_FEATURE),
    flip(8, 0.8, 'on', FAILING_FEATURE),
  ],
  rebuildAt: 0.3,
  deregisterAt: 0.65,
  // After the first CLI pair (cycle 8) made the first cluster a ClusterSet member, and after its flips.
  adoptAt: 0.85,
  oomFaults: 6,
};

/** The long run: twice the clusters, two and a half times the cycles, as many kills again. */
export const LONG: SoakConfig = {
  ...FULL,
  clusters: 20,
  cycles: 200,
  kills: 20,
  slowResponses: 4,
  cliEvery: 10,
  oomFaults: 12,
};

export const SHORT: SoakConfig = {
  clusters: 3,
  nodes: 2,
  cycles: 8,
  kills: 2,
  race: [0.25, 0.5],
  faultRate: 0.03,
  slowResponses: 0,
  cliEvery: 4,
  // Turning balloons off waits 10 minutes for uses: the last flip must end before the checks.
  settleCycles: settleAtLeast(5),
  seed: 9,
  balloonShare: 0.5,
  elasticNodes: 2,
  workloadChange: 0.5,
  flips: [
    flip(0, 0.25, 'off'),
    // Back on, so that a cluster whose registration never changed runs balloons through the clean
    // cycles (its scripted workload then makes them deflate and inflate: ./balloons.ts).
    flip(0, 0.5, 'on'),
    flip(1, 0.25, 'off'),
    flip(1, 0.4, 'on'),
    // Late enough that the agent has read on (its Feature object is mirrored at the first passes).
    flip(2, 0.85, 'off', AGENT_FEATURE),
    flip(2, 0.25, 'on', FAILING_FEATURE),
  ],
  rebuildAt: 0.5,
  // Before the first CLI pair (cycle 4), so that the ClusterSet it makes outlives the deregistration.
  deregisterAt: 0.25,
  // After the first CLI pair made the first cluster a ClusterSet member; away at cycle 6, back at 7.
  adoptAt: 0.75,
  oomFaults: 2,
};
