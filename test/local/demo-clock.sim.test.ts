/**
 * One clock in the demo (issue 18): under `npm start --speedup 60` the schedules, the simulated clusters
 * and the features' waits all run on the clusters' clock. Driven here on that clock, moved by hand as
 * `npm start`'s ticker would move it (60 s of sim time per wall second): new clusters' features, which
 * read TurningOn for two cycle periods, reach On without a wall minute passing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalControlPlane, startControlPlane } from '../../local/start.js';
import { compactSummary, fullSummary, summarySections } from '../../local/summary.js';
import { DynamoFeatureStore } from '../../shared/features/store-dynamo.js';

const SPEEDUP = 60;

describe('npm start at --speedup 60, on the demo clusters clock', () => {
  let plane: LocalControlPlane;
  const said: string[] = [];

  beforeAll(async () => {
    plane = await startControlPlane({
      kubeconfig: undefined,
      clusters: 2,
      nodes: 3,
      speedup: SPEEDUP,
      stateDir: undefined,
      manualClock: true,
      say: (l) => said.push(l),
    });
  }, 60_000);
  afterAll(async () => plane?.stop());

  const states = async () =>
    (await new DynamoFeatureStore(plane.runtime.db, plane.runtime.table).listAll()).map((r) => r.state);

  it('brings the new clusters features from TurningOn to On as the schedules run', async () => {
    const { runtime, fleet } = plane;
    const sim = fleet.demo!.sim;
    expect(runtime.clock()).toBe(sim.clock.now());
    await runtime.scheduler.runOnce();
    expect(await states()).toContain('TurningOn');
    const t0 = sim.clock.now();
    const ran: string[] = [];
    // One wall second of `npm start` at a time: the ticker moves the clusters' clock, the scheduler polls.
    for (let second = 0; second < 30 && (await states()).some((s) => s !== 'On'); second++) {
      sim.clock.advance(1000 * SPEEDUP);
      ran.push(...(await runtime.scheduler.runDue()).map((s) => s.id));
    }
    const final = await states();
    expect(final.length).toBeGreaterThan(0);
    expect(final.every((s) => s === 'On')).toBe(true);
    // The schedules ran on the same clock: at least two cycles and several feature passes went by.
    expect(ran.filter((id) => id === 'cycle').length).toBeGreaterThanOrEqual(2);
    expect(sim.clock.now() - t0).toBeLessThanOrEqual(30 * 60_000);
  }, 240_000);

  it('prints, after the first full summary, what changed in a screenful', async () => {
    const { runtime, fleet } = plane;
    const first = await summarySections(runtime);
    const full = fullSummary('summary 1', first);
    fleet.demo!.sim.clock.advance(5 * 60_000);
    await runtime.scheduler.runDue();
    const next = await summarySections(runtime);
    const compact = compactSummary('summary 2', first, next);
    // The full tables run to several screens; what changed fits one, headline first.
    expect(full.length).toBeGreaterThan(compact.length);
    expect(compact.length).toBeLessThanOrEqual(40);
    expect(compact[0]).toBe('--- summary 2 ---');
    // A section that did not change is left out: the features all stayed On.
    expect(compact.some((l) => l.startsWith('features:'))).toBe(false);
    // Nothing changed at all: nothing to print (npm start prints no summary then).
    expect(compactSummary('summary 3', next, next)).toEqual([]);
  }, 120_000);
});
