/**
 * A fault of the soak (issue 34, defects 3 and 4): a control plane whose clock is off. The racer runs
 * two hours ahead of the clusters; when the race ends the main runtime moves to a machine 45 minutes
 * behind them (stopped, and started again there on the same state) and stays there, restarts after a
 * kill included. Everything such a runtime reads as the time is off (the soak's clock it is sent, its
 * wall clock: ./child.ts); the clusters keep theirs. Waits, leases and deadlines must run on the
 * cluster's time (the API server's Date), which the reconciler says it does, once per pass that had
 * something to do, in its log: those lines are how often the fault was hit.
 */
import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

const MINUTE = 60_000;
export const RACER_SKEW_MS = 120 * MINUTE;
export const MOVED_SKEW_MS = -45 * MINUTE;

/** What the reconciler logs when it runs a pass on the cluster's clock instead of its own. */
const ON_CLUSTER_TIME = "this machine's clock is off the cluster's";

export interface SkewedLog {
  file: string;
  skewMs: number;
}

/** Passes run on the cluster's clock by runtimes whose clock ran ahead and behind. */
export interface SkewedPasses {
  ahead: number;
  behind: number;
}

export async function skewedPasses(logs: SkewedLog[]): Promise<SkewedPasses> {
  const out: SkewedPasses = { ahead: 0, behind: 0 };
  for (const l of logs) {
    if (l.skewMs === 0 || !existsSync(l.file)) continue;
    const n = await countLines(l.file, ON_CLUSTER_TIME);
    if (l.skewMs > 0) out.ahead += n;
    else out.behind += n;
  }
  return out;
}

async function countLines(file: string, text: string): Promise<number> {
  let n = 0;
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) if (line.includes(text)) n++;
  return n;
}
