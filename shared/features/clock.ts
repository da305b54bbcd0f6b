/**
 * The clock of the feature machinery (uses, steps, rollouts): the wall clock, or the simulator's in
 * tests and demos, set once for every worker and reconciler of the process.
 */
let clock: () => number = Date.now;

export function setFeatureClock(c?: () => number): void {
  clock = c ?? Date.now;
}

export const featureNow = (): number => clock();
