/**
 * How a DaemonSet's downsizes roll out (canary.ts) and when a resize is undone (harm.ts), as its VPA's
 * annotations say:
 *   nodescope.fleetscope.io/canary: "10%"        share of the DaemonSet's pods downsized first ("off": all at once)
 *   nodescope.fleetscope.io/canary-soak: "30m"   how long the canaries must stay healthy before the rest
 *   nodescope.fleetscope.io/revert-window: "1h"  how long after a downsize harm reverts it ("0": never)
 * A value that does not parse refuses the target, naming the annotation (nothing is written until it is
 * fixed), as fleetscope.io/writes does: a typo must not silently mean "no canary".
 */
import { DurationError, parseGoDuration } from '../recommendation/gotime.js';

export const CANARY_ANNOTATION = 'nodescope.fleetscope.io/canary';
export const CANARY_SOAK_ANNOTATION = 'nodescope.fleetscope.io/canary-soak';
export const REVERT_WINDOW_ANNOTATION = 'nodescope.fleetscope.io/revert-window';

export interface RolloutPolicy {
  /** Share (0..1] of the DaemonSet's pods a downsize goes to first; 0: no canary, every pod at once. */
  canaryShare: number;
  /** How long the canaries stay healthy before the rest is downsized (ms). */
  soakMs: number;
  /** How long after a downsize an OOM kill, a restart, a readiness loss or throttling reverts it (ms); 0: never. */
  revertWindowMs: number;
}

export const DEFAULT_ROLLOUT: Readonly<RolloutPolicy> = Object.freeze({
  canaryShare: 0.1,
  soakMs: 30 * 60_000,
  revertWindowMs: 60 * 60_000,
});

const WEEK_MS = 7 * 86_400_000;

/** The policy the annotations give, or what is wrong with one of them. */
export function rolloutPolicyOf(
  annotations: Readonly<Record<string, string>> | undefined,
): RolloutPolicy | string {
  const a = annotations ?? {};
  const share = canaryShareOf(a[CANARY_ANNOTATION]);
  if (typeof share === 'string') return share;
  const soak = durationOf(a[CANARY_SOAK_ANNOTATION], CANARY_SOAK_ANNOTATION, DEFAULT_ROLLOUT.soakMs, false);
  if (typeof soak === 'string') return soak;
  const window = durationOf(
    a[REVERT_WINDOW_ANNOTATION],
    REVERT_WINDOW_ANNOTATION,
    DEFAULT_ROLLOUT.revertWindowMs,
    true,
  );
  if (typeof window === 'string') return window;
  return { canaryShare: share, soakMs: soak, revertWindowMs: window };
}

const problem = (name: string, value: string, want: string) =>
  `annotation ${name} "${value}" is not ${want} (nothing is written until it is)`;

function canaryShareOf(v: string | undefined): number | string {
  if (v === undefined) return DEFAULT_ROLLOUT.canaryShare;
  const t = v.trim();
  if (t === 'off') return 0;
  const m = /^(\d+(?:\.\d+)?)%$/.exec(t);
  const pct = m ? Number(m[1]) : Number.NaN;
  if (!(pct >= 0 && pct <= 100))
    return problem(CANARY_ANNOTATION, v, 'a share such as "10%" (0% to 100%) or "off"');
  return pct / 100;
}

function durationOf(v: string | undefined, name: string, dflt: number, zeroOk: boolean): number | string {
  if (v === undefined) return dflt;
  const want = `a duration such as "30m" or "1h30m" (${zeroOk ? '0 to' : 'above 0, up to'} 168h)`;
  let ms: number;
  try {
    ms = Number(parseGoDuration(v.trim()) / 1_000_000n);
  } catch (err) {
    if (err instanceof DurationError) return problem(name, v, want);
    throw err;
  }
  if (ms < 0 || ms > WEEK_MS || (ms === 0 && !zeroOk)) return problem(name, v, want);
  return ms;
}
