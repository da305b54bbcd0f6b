/**
 * The live set of scheduled reconcilers (finding 5 of issue 16): each announces itself at every pass
 * with a heartbeat that never goes back in time, alive for ALIVE_MS (a claim period less a pass). The
 * hash ring is the reconcilers alive now, so a reconciler that stops announcing (its schedule disabled,
 * its invocations failing) has its share taken over by the others within one claim period, and one
 * that comes back takes it back at once.
 *
 * One pass over a cluster at a time, whoever runs it (the scheduled owner, or the event-triggered
 * function acting on an event): a lease per cluster, taken when absent, lapsed or already this holder's,
 * and given back after the pass. The event-triggered function that finds the owner's pass under way
 * leaves the cluster to it instead of racing it.
 *
 * Ports; the DynamoDB adapters are in ./members-dynamo.ts.
 */
import { CLAIM_MS } from './machine.js';

/** The passes' period (the schedules run every 2 minutes). */
export const PASS_MS = 2 * 60_000;
/**
 * A heartbeat keeps its reconciler alive this long: more than a pass (a live one never drops out), and
 * short enough that the others' next pass after it lapses falls within one claim period.
 */
export const ALIVE_MS = CLAIM_MS - PASS_MS;

export interface ClusterPass {
  /** Takes the cluster's pass for `by`; false while another's pass holds it. */
  take(cluster: string, by: string): Promise<boolean>;
  /** Gives the pass back (if still held by `by`). */
  release(cluster: string, by: string): Promise<void>;
  /** Runs `fn` holding the cluster's pass; undefined (not run) when another's pass holds it. */
  run<T>(cluster: string, by: string, fn: () => Promise<T>): Promise<T | undefined>;
}

export interface ReconcilerRing {
  readonly id: string;
  /** Announces this reconciler alive until now + one claim period; false if a later heartbeat is stored. */
  announce(): Promise<boolean>;
  /** The reconcilers alive now (their heartbeat's period not over), by id. */
  live(): Promise<string[]>;
}

/** Runs `fn` holding the cluster's pass; undefined (not run) when another's pass holds it. */
export async function holdingPass<T>(
  pass: Pick<ClusterPass, 'take' | 'release'>,
  cluster: string,
  by: string,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  if (!(await pass.take(cluster, by))) return undefined;
  try {
    return await fn();
  } finally {
    await pass.release(cluster, by);
  }
}
