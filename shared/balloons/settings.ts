/** balloons' settings: defaults, and the environment's FLEETSCOPE_BALLOONS_* over them. */
import { envNumber } from '../kernel/env.js';
import type { BackoffPolicy } from '../resize/index.js';
import { DEFAULT_BALLOON_IMAGE } from './manifests.js';

export interface BalloonSettings {
  /** Minutes between cycles (the capability's schedule). */
  periodMinutes: number;
  /** The pause image the balloon DaemonSet runs (mirror it for clusters without registry access). */
  image: string;
  /** Balloon resizes per cycle, at most (reverts of Deferred inflates always go). */
  writeBudget: number;
  /**
   * How long after inflating to read the balloons back for the kubelet's answer, so that a Deferred
   * inflate is reverted in the same cycle (a kubelet decides within a second or two).
   */
  settleMs: number;
  backoff: Partial<BackoffPolicy>;
  /** A cluster found without pods/resize is asked again after this long. */
  unsupportedRecheckMs: number;
}

export const DEFAULT_BALLOON_SETTINGS: Readonly<BalloonSettings> = Object.freeze({
  periodMinutes: 5,
  image: DEFAULT_BALLOON_IMAGE,
  writeBudget: 200,
  settleMs: 3000,
  backoff: {},
  unsupportedRecheckMs: 24 * 3_600_000,
});

export function balloonSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<BalloonSettings> {
  const out: Partial<BalloonSettings> = {};
  const num = (name: string) => envNumber(env, name);
  if (env.FLEETSCOPE_BALLOONS_IMAGE) out.image = env.FLEETSCOPE_BALLOONS_IMAGE;
  const budget = num('FLEETSCOPE_BALLOONS_WRITE_BUDGET');
  if (budget !== undefined) out.writeBudget = Math.floor(budget);
  const settle = num('FLEETSCOPE_BALLOONS_SETTLE_MS');
  if (settle !== undefined) out.settleMs = settle;
  return out;
}
