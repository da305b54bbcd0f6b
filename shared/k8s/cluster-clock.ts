/**
 * A cluster's clock, as its API server keeps it: waits, leases and deadlines that guard a cluster run
 * on that cluster's time, not the caller's (a laptop two hours ahead must not end a 60-minute wait).
 * Every response carries the server's Date header; the skew is how far it is from this machine's
 * wall clock. Clocks within SKEW_TOLERANCE_MS agree (Date is whole seconds, a request takes its round
 * trip), so a well-kept machine sees no skew at all and keeps its own clock's precision.
 */
import type { ClusterClient } from './client.js';
import { RawReader } from './raw-reader.js';

export const SKEW_TOLERANCE_MS = 10_000;

/** The server's time minus this machine's (`wall`), in ms; 0 within the tolerance or without a Date. */
export async function clusterSkew(client: ClusterClient, wall: () => number = Date.now): Promise<number> {
  const before = wall();
  const server = await new RawReader(client).serverTime();
  const after = wall();
  if (!Number.isFinite(server)) return 0;
  const skew = server - (before + after) / 2;
  return Math.abs(skew) <= SKEW_TOLERANCE_MS ? 0 : Math.round(skew);
}
