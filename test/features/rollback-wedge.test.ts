/**
 * A rollback never waits for a cluster it did not set back (issue 34, defect 10): one set to `default`
 * by hand during the wave (equal to the rollout's value) is left alone, as documented, and so is not
 * waited for to return to its previous state: the rollback ends rolled-back instead of wedging.
 */
import { expect, it } from 'vitest';
import { decideRollout, type Observation } from '../../shared/features/rollout.js';
import { testRollout } from './fixtures.js';

const T0 = Date.UTC(2026, 11, 2);
const r = testRollout(T0, {
  waves: '1,100%',
  bounds: [2, 3],
  status: 'rolling-back',
  previous: { a: 'off', b: 'off' },
});
const seen = (b: Partial<Observation>): Observation[] => [
  // Set back by the rollback, and back Off.
  { cluster: 'a', reachable: true, state: 'Off', previousFinal: 'Off', desiredBy: 'rollout/r/rollback' },
  { cluster: 'b', reachable: true, previousFinal: 'Off', ...b },
];

it('a cluster someone else set during the wave is not waited for', () => {
  // b: set to default (on, the rollout's value) by an operator: left On by the rollback.
  const byHand = seen({ state: 'On', desiredBy: 'local:alice', desiredAt: T0 + 1000 });
  expect(decideRollout(r, byHand, T0 + 5 * 3_600_000)).toEqual({ kind: 'rolled-back' });
  // b set back by the rollback and still turning off: waited for.
  const turning = seen({ state: 'TurningOff', desired: 'off', desiredBy: 'rollout/r/rollback' });
  expect(decideRollout(r, turning, T0 + 60_000)).toEqual({
    kind: 'none',
    why: 'rolling back: b (TurningOff)',
  });
});
