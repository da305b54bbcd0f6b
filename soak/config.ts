/** How big and how rough a soak is. `npm run soak` runs FULL; `npm test` runs SHORT. */
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
}

export const FULL: SoakConfig = {
  clusters: 20,
  nodes: 4,
  cycles: 200,
  kills: 20,
  race: [0.4, 0.55],
  faultRate: 0.03,
  slowResponses: 4,
  cliEvery: 10,
  settleCycles: 3,
  seed: 9,
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
  settleCycles: 2,
  seed: 9,
};
