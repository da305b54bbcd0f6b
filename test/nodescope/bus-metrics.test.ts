/** What a node-scope cycle counts for CloudWatch about canary and revert (bus-events.ts). */
import { describe, expect, it } from 'vitest';
import { nodescopeMetrics } from '../../shared/nodescope/bus-events.js';
import type { CycleResult } from '../../shared/nodescope/cycle-report.js';

const AT = Date.parse('2026-11-02T04:05:00Z');

function result(rollouts: object[]): CycleResult {
  return {
    detail: { at: new Date(AT).toISOString(), errors: [] },
    daemonSets: rollouts.map((rollout) => ({ rollout })),
    resizeReports: [],
  } as unknown as CycleResult;
}

const rollout = (o: object) => ({ canariesSent: 0, reverts: [], revertsPending: 0, ...o });

describe('node scope metrics: canary and revert', () => {
  it('counts reverts sent and pending, canaries sent, and the DaemonSets a hold stops now', () => {
    const metrics = new Map(
      nodescopeMetrics(
        result([
          rollout({ reverts: [{}, {}], hold: { until: AT + 60_000 } }),
          rollout({ revertsPending: 1, canariesSent: 3, hold: { until: AT - 1 } }), // lapsed
          rollout({}),
        ]),
      ),
    );
    expect(metrics.get('NodeScopeReverts')).toBe(2);
    expect(metrics.get('NodeScopeRevertsPending')).toBe(1);
    expect(metrics.get('NodeScopeCanariesSent')).toBe(3);
    expect(metrics.get('NodeScopeDaemonSetsHeld')).toBe(1);
  });

  it('says zero, not nothing, on a quiet cycle (an alarm on reverts needs its zeros)', () => {
    const metrics = new Map(nodescopeMetrics(result([{}].map(() => rollout({})))));
    expect(metrics.get('NodeScopeReverts')).toBe(0);
    expect(metrics.get('NodeScopeDaemonSetsHeld')).toBe(0);
  });
});
