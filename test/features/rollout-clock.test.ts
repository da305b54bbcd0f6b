/**
 * `--stuck-after` judged on the cluster's clock (issue 34, defect 3): a transition's start is stored on
 * the cluster's clock (its API server's), so its age is the cluster's now minus that start, never the
 * control plane's now minus it. A cluster two hours ahead of the control plane is judged stuck when it
 * is, not two hours late; one two hours behind is not judged stuck at once after a resume.
 */
import { expect, it } from 'vitest';
import { decideRollout, type Observation } from '../../shared/features/rollout.js';
import { testRollout } from './fixtures.js';

const T0 = Date.UTC(2026, 11, 3, 12);
const MIN = 60_000;
const HOUR = 60 * MIN;
const r = testRollout(T0, { waves: '100%', bounds: [3], clusters: ['a'], stuckAfterMs: 30 * MIN });
/** Cluster a, in TurningOn since `startedOnCluster`, its clock `skewMs` off the control plane's. */
const turning = (startedOnCluster: number, skewMs: number): Observation[] => [
  {
    cluster: 'a',
    reachable: true,
    state: 'TurningOn',
    desired: 'on',
    desiredBy: 'rollout/r',
    transitionStartedAt: startedOnCluster,
    clusterSkewMs: skewMs,
    task: { title: 'wait for uses', attempts: 1, waitingFor: 'agent still reporting "off"' },
  },
];

it('a cluster two hours ahead, stuck for 40 minutes on its clock, is judged stuck', () => {
  const now = T0 + 41 * MIN; // the control plane's
  const seen = turning(T0 + 1 * MIN + 2 * HOUR, 2 * HOUR);
  expect(decideRollout(r, seen, now)).toEqual({
    kind: 'rollback',
    reason: 'cluster a: stuck in TurningOn for 40m, waiting for: agent still reporting "off"',
  });
});

it('a cluster two hours ahead, 10 minutes into its transition, is not', () => {
  const seen = turning(T0 + 1 * MIN + 2 * HOUR, 2 * HOUR);
  expect(decideRollout(r, seen, T0 + 11 * MIN).kind).toBe('none');
});

it('a cluster two hours behind, 10 minutes into a transition after a resume, is not', () => {
  // Resumed 40 minutes into the wave; the transition started on the cluster at the resume.
  const resumed = { ...r, resumedAt: T0 + 40 * MIN };
  const seen = turning(T0 + 40 * MIN - 2 * HOUR, -2 * HOUR);
  expect(decideRollout(resumed, seen, T0 + 50 * MIN).kind).toBe('none');
  // And 31 minutes into it, it is.
  expect(decideRollout(resumed, seen, T0 + 71 * MIN)).toMatchObject({ kind: 'rollback' });
});
