/**
 * Small fixtures the feature suites share (no clients): a declared feature as a test writes it, a
 * rollout of three clusters, and a latch a test opens by hand (a reconciler frozen mid-step).
 */
import type { FeatureRef } from '../../shared/features/model.js';
import type { Rollout } from '../../shared/features/rollout.js';
import type { FeatureSpec } from '../../shared/features/spec.js';

/** A third party's feature as stored from a file, with nothing to do unless `extra` says so. */
export const testFeature = (ref: FeatureRef, extra: Partial<FeatureSpec> = {}): FeatureSpec => ({
  ...ref,
  description: 'test feature',
  default: 'on',
  components: [],
  usesWaitSeconds: 0,
  since: '0.1.0',
  enable: [],
  disable: [],
  origin: { file: 'test' },
  ...extra,
});

/** A running rollout of acme/widgets over a, b and c, its first wave started at `at`. */
export const testRollout = (at: number, over: Partial<Rollout> = {}): Rollout => ({
  id: 'r',
  namespace: 'acme',
  feature: 'widgets',
  to: 'on',
  waves: '1,2,100%',
  bounds: [1, 2, 3],
  clusters: ['a', 'b', 'c'],
  pauseMs: 60_000,
  stuckAfterMs: 1_800_000,
  failAfterAttempts: 3,
  status: 'running',
  wave: 0,
  waveStartedAt: at,
  createdAt: at,
  createdBy: 'op',
  updatedAt: at,
  version: 1,
  log: [],
  ...over,
});

/** A promise the test resolves by hand. */
export function latch() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open };
}
