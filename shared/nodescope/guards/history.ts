/**
 * The resize history of one node's pod of a DaemonSet: what was sent, when, and what came of it, with
 * the guards that held a resize back and (appended by whoever reverts) reverts and why. Bounded: the
 * newest HISTORY_CAP entries per node, none older than HISTORY_TTL_MS.
 */
import type { ContainerChange, RefusalKind, ResizeReport } from '../../resize/index.js';

export const HISTORY_CAP = 20;
export const HISTORY_TTL_MS = 30 * 86_400_000;

export type HistoryOutcome =
  /** Sent through pods/resize and taken by the apiserver. */
  | 'requested'
  /** The kubelet runs the new resources. */
  | 'actuated'
  | 'deferred'
  | 'infeasible'
  /** The kubelet failed to actuate it (PodResizeInProgress/Error, e.g. a memory limit below usage). */
  | 'error'
  /** The apiserver refused it (`refusal`: Forbidden, Invalid, Conflict, ...). */
  | 'refused'
  /** Not sent: a guard (`by`) would have it refused. */
  | 'guarded'
  /** Put back to its size before (`reason` says why; `changes` what it went from and to). */
  | 'reverted';

export interface HistoryEntry {
  /** The cycle's time (ms since the epoch). */
  at: number;
  outcome: HistoryOutcome;
  pod: string;
  podUid: string;
  /** What was (or would have been) sent, per container: before and after. */
  changes?: ContainerChange[];
  /** The guard that held it: `LimitRange <name>`, `ResourceQuota <name>`, `memory usage`. */
  by?: string;
  /** Why, in people's units (a guard's or a refusal's message, a revert's reason). */
  reason?: string;
  refusal?: RefusalKind;
  /** What the caps held back of what was sent (`container "x" memory request`). */
  capped?: string[];
}

/** The entries with `added` appended, newest last, within the cap and the TTL at `now`. */
export function boundHistory(
  entries: readonly HistoryEntry[],
  added: readonly HistoryEntry[],
  now: number,
): HistoryEntry[] {
  return [...entries, ...added].filter((e) => now - e.at < HISTORY_TTL_MS).slice(-HISTORY_CAP);
}

/** A resize mechanism's report as a history entry. */
export function entryOfReport(r: ResizeReport, extra: Partial<HistoryEntry> = {}): HistoryEntry {
  const base = {
    at: r.at,
    pod: r.pod,
    podUid: r.podUid,
    ...(r.containers.length ? { changes: r.containers } : {}),
  };
  if (r.kind === 'resized')
    return { ...base, outcome: r.outcome === 'Requested' ? 'requested' : 'actuated', ...extra };
  const outcome: HistoryOutcome =
    r.refusal === 'Deferred'
      ? 'deferred'
      : r.refusal === 'Infeasible'
        ? 'infeasible'
        : r.refusal === 'ActuationError'
          ? 'error'
          : 'refused';
  return { ...base, outcome, refusal: r.refusal, reason: r.message, ...extra };
}

/** Whether `e` says again what the node's last entry said (a hold by the same guard of the same pod). */
export function repeats(last: HistoryEntry | undefined, e: HistoryEntry): boolean {
  return (
    last !== undefined &&
    e.outcome === 'guarded' &&
    last.outcome === 'guarded' &&
    last.by === e.by &&
    last.podUid === e.podUid
  );
}
