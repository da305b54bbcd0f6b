/**
 * What the guards held back of a DaemonSet's resizes, kept on its apply item for `recommendations
 * list` and said once as an Event when it changes: the pods held per guard, or why nothing was sent.
 */
export interface GuardsSummary {
  /** Resizes held this cycle, by guard (`LimitRange lr`): how many pods, and one pod's reason. */
  held: { by: string; pods: number; reason: string }[];
  /** Why no resize was sent at all: outside the resize window, or an annotation that does not parse. */
  closed?: string;
  /** The cycle's time when it was written (ms). */
  at: number;
}

/** The same holds (by guard) and the same closing: not worth a write or an Event. */
export function sameGuards(a: GuardsSummary | undefined, b: GuardsSummary | undefined): boolean {
  const key = (s: GuardsSummary | undefined) =>
    s ? JSON.stringify([s.closed ?? '', s.held.map((h) => `${h.by}:${h.pods}`)]) : '';
  return key(a) === key(b);
}

/** Whether a summary has anything to say. */
export const saysSomething = (s: GuardsSummary | undefined): s is GuardsSummary =>
  s !== undefined && (s.closed !== undefined || s.held.length > 0);

/** The summary in one line: `3 pods held by LimitRange lr (container "c": ...)`. */
export function guardsLine(s: GuardsSummary): string {
  if (s.closed) return s.closed;
  return s.held
    .map((h) => `${h.pods} ${h.pods === 1 ? 'pod' : 'pods'} held by ${h.by} (${h.reason})`)
    .join('; ');
}
