/**
 * Revert on harm, the bookkeeping: a harmed node goes back to the size it had before its downsize (in
 * place), the size it was reverted from is never asked for again (canary.ts avoidRevertedFrom), and the
 * DaemonSet's downsizes are held for a back-off that doubles with each revert in a row (a wave whose
 * canaries soaked healthy resets the count). The next recommendation still comes from upstream's math:
 * the OOM kill is in the histogram as any other.
 */
import type { ContainerDesired, DesiredResources } from '../resize/index.js';
import type { HarmKind, Hold, NodeDownsize, RevertEntry, RolloutRecord } from './rollout.js';
import { MAX_REVERTS, REVERTED_FROM_MS } from './rollout.js';

export interface HoldSettings {
  /** The first revert holds the DaemonSet's downsizes this long; each one in a row doubles it. */
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_HOLD: Readonly<HoldSettings> = Object.freeze({
  baseMs: 60 * 60_000,
  maxMs: 24 * 3_600_000,
});

/** The hold after one more revert: base × 2^(consecutive − 1), at most maxMs. */
export function holdAfter(
  prev: Hold | undefined,
  harm: { node: string; reason: HarmKind },
  now: number,
  s: HoldSettings,
): Hold {
  const consecutive = (prev?.consecutive ?? 0) + 1;
  const ms = Math.min(s.maxMs, s.baseMs * 2 ** (consecutive - 1));
  return { until: now + ms, consecutive, node: harm.node, reason: harm.reason, at: now };
}

/** The record once harm was seen on `node`: kept to revert (until sent), the wave ended, the hold set. */
export function harmSeen(
  r: RolloutRecord,
  node: string,
  harm: { kind: HarmKind; detail: string },
  now: number,
  s: HoldSettings,
): RolloutRecord {
  const d = r.downsized[node] as NodeDownsize;
  return {
    ...r,
    downsized: { ...r.downsized, [node]: { ...d, harm: { ...harm, at: now } } },
    wave: undefined,
    hold: holdAfter(r.hold, { node, reason: harm.kind }, now, s),
  };
}

/** The record once the revert of `node` was sent (or the pod is gone): the size reverted from remembered. */
export function reverted(r: RolloutRecord, node: string, now: number, sent: boolean): RolloutRecord {
  const d = r.downsized[node] as NodeDownsize;
  const harm = d.harm as NonNullable<NodeDownsize['harm']>;
  const { [node]: _gone, ...downsized } = r.downsized;
  const entry: RevertEntry = {
    node,
    podUid: d.podUid,
    at: now,
    reason: harm.kind,
    detail: harm.detail,
    from: d.after,
    to: d.before,
    sent,
  };
  return {
    ...r,
    downsized,
    revertedFrom: {
      ...r.revertedFrom,
      [node]: {
        at: now,
        until: now + REVERTED_FROM_MS,
        reason: harm.kind,
        size: loweredOnly(d.before, d.after),
      },
    },
    reverts: [...r.reverts, entry].slice(-MAX_REVERTS),
  };
}

/** The values the downsize lowered (only those are avoided later: the others were not the harm). */
export function loweredOnly(before: DesiredResources, after: DesiredResources): DesiredResources {
  const out: DesiredResources = {};
  for (const [name, a] of Object.entries(after)) {
    const c: ContainerDesired = {};
    for (const kind of ['requests', 'limits'] as const)
      for (const res of ['cpu', 'memory'] as const) {
        const v = a[kind]?.[res];
        const b = before[name]?.[kind]?.[res];
        if (v !== undefined && b !== undefined && v < b) c[kind] = { ...c[kind], [res]: v };
      }
    if (c.requests || c.limits) out[name] = c;
  }
  return out;
}

/** A wave released after a healthy soak: reverts in a row start counting again. */
export function soakedHealthy(r: RolloutRecord): RolloutRecord {
  return r.hold ? { ...r, hold: { ...r.hold, consecutive: 0 } } : r;
}
