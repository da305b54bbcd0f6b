/**
 * The clock nodescope's worker reads. Production uses the wall clock; tests and the local demo run
 * clusters on a simulated clock and point this at it (the handlers run in the same process there).
 */
let current: () => number = Date.now;

export function nodescopeClock(): () => number {
  return current;
}

/** Replaces the clock (undefined restores the wall clock). */
export function setNodeScopeClock(clock?: () => number): void {
  current = clock ?? Date.now;
}
