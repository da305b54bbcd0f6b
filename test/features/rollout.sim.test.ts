import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECONCILE_EVERY_MINUTES, RECONCILERS } from '../../shared/features/capability.js';
import { clustersOfWave, type Rollout } from '../../shared/features/rollout.js';
import { type RolloutPorts, setRolloutStatus, startRollout } from '../../shared/features/rollout-runner.js';
import { type FeatureEnv, MINUTE, startFeatureEnv, widgetsRolloutFleet } from './helpers.js';

const WIDGETS = { namespace: 'widgets', name: 'widgets' };
const CLUSTERS = Array.from({ length: 20 }, (_, i) => `r${String(i).padStart(2, '0')}`);

describe('a rollout across the fleet', () => {
  let env: FeatureEnv;
  let ports: RolloutPorts;
  beforeAll(async () => {
    env = await startFeatureEnv(CLUSTERS.map((name, i) => ({ name, nodes: 1, seed: 100 + i })));
    ports = { ...(await widgetsRolloutFleet(env, CLUSTERS)), publish: async () => {} };
  }, 120_000);
  afterAll(async () => env?.stop());

  /** One schedule tick: every shard's scheduled reconciler, then the events they put on the bus. */
  async function tick() {
    for (let shard = 0; shard < RECONCILERS; shard++)
      await env.runtime.invoker.invoke('features-reconcile', { shard, shards: RECONCILERS });
    await env.runtime.bus.drain();
    env.sim.clock.advance(RECONCILE_EVERY_MINUTES * MINUTE);
  }
  const rollout = async (id: string) => (await ports.rollouts.get(id)) as Rollout;
  const agentConfig = async (c: string) =>
    (await env.client(c).core.listNamespacedConfigMap({ namespace: 'widgets' })).items.some(
      (m) => m.metadata?.name === 'widget-agent-config',
    );

  it('with --no-rollback, halts in the wave where a cluster fails, leaves later waves untouched, and completes when resumed', {
    timeout: 300_000,
  }, async () => {
    let r = await startRollout(ports, {
      feature: WIDGETS,
      to: 'on',
      waves: '1,10%,50%,100%',
      pauseMs: 4 * MINUTE,
      rollback: false,
      by: 'test',
    });
    expect(r.bounds).toEqual([1, 2, 10, 20]);
    const [canary] = clustersOfWave(r, 0);
    const [failing] = clustersOfWave(r, 1);
    const later = [...clustersOfWave(r, 2), ...clustersOfWave(r, 3)];
    const fault = env.sim.faults.inject({
      cluster: failing!,
      match: { method: 'POST', pathIncludes: '/configmaps' },
      fault: { type: 'status', code: 500 },
    });

    // The canary goes first, alone; the second wave waits for it and for the pause.
    await tick();
    expect((await env.store.get(canary!, WIDGETS))?.state).toBe('On');
    expect((await env.store.get(failing!, WIDGETS))?.desired).toBeUndefined();
    await tick();
    expect((await env.store.get(failing!, WIDGETS))?.desired).toBeUndefined(); // still in the pause
    for (let i = 0; i < 12 && (await rollout(r.id)).status === 'running'; i++) await tick();

    r = await rollout(r.id);
    expect(r.status).toBe('halted');
    expect(r.wave).toBe(1);
    expect(r.reason).toMatch(
      new RegExp(`^cluster ${failing}: task "apply ConfigMap widget-agent-config" failed 3 times: .*500`),
    );
    const f = (await env.store.get(failing!, WIDGETS))!;
    expect(f.state).toBe('TurningOn'); // kept where it was, retrying
    for (const c of later) {
      const rec = await env.store.get(c, WIDGETS);
      expect(rec?.desired, c).toBeUndefined();
      expect(rec?.state, c).toBe('Off');
      expect(rec?.history, c).toEqual([]);
      expect(await agentConfig(c), c).toBe(false);
    }
    // Events for every transition and task, and for the halt.
    const events = (t: string) =>
      env.runtime.bus.log.filter((e) => e.detailType === t).map((e) => e.detail as Record<string, unknown>);
    expect(events('FeatureTransitionChanged')).toContainEqual(
      expect.objectContaining({ cluster: canary, feature: 'widgets', phase: 'completed', state: 'On' }),
    );
    expect(events('FeatureTaskChanged')).toContainEqual(
      expect.objectContaining({ cluster: failing, outcome: 'failed', attempts: 3, kind: 'apply-manifests' }),
    );
    expect(events('FeatureRolloutChanged')).toContainEqual(
      expect.objectContaining({ rollout: r.id, phase: 'halted', wave: 2, clusters: [failing] }),
    );
    // Halted means halted: more ticks move nothing.
    for (let i = 0; i < 2; i++) await tick();
    expect((await rollout(r.id)).version).toBe(r.version);

    // The cause is fixed; resumed, it goes on from where it stopped and completes.
    env.sim.faults.clear(fault);
    await setRolloutStatus(ports, r.id, 'running', 'test');
    for (let i = 0; i < 60 && (await rollout(r.id)).status === 'running'; i++) await tick();
    r = await rollout(r.id);
    expect(r.status).toBe('completed');
    for (const c of CLUSTERS) expect((await env.store.get(c, WIDGETS))?.state, c).toBe('On');
    expect(r.log.map((l) => l.message)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^wave 1 started: /),
        expect.stringMatching(/^wave 1 reached on; pausing$/),
        expect.stringMatching(/^wave 2 started: /),
        expect.stringMatching(/^halted: cluster /),
        'resumed by test',
        expect.stringMatching(/^wave 4 started: /),
        'completed: every cluster is on',
      ]),
    );
  });

  it('rolls back the wave where a cluster fails: its clusters turn back, waves 3+ never start', {
    timeout: 300_000,
  }, async () => {
    // Every cluster is On, desired on by the first rollout.
    const before = new Map<string, number>();
    for (const c of CLUSTERS) before.set(c, (await env.store.get(c, WIDGETS))!.history.length);
    let r = await startRollout(ports, {
      feature: WIDGETS,
      to: 'off',
      waves: '1,10%,50%,100%',
      pauseMs: 4 * MINUTE,
      by: 'test',
    });
    const [canary] = clustersOfWave(r, 0);
    const [failing] = clustersOfWave(r, 1);
    const later = [...clustersOfWave(r, 2), ...clustersOfWave(r, 3)];
    const fault = env.sim.faults.inject({
      cluster: failing!,
      match: { method: 'DELETE', pathIncludes: '/configmaps' },
      fault: { type: 'status', code: 500 },
    });
    for (
      let i = 0;
      i < 30 && !['rolled-back', 'halted', 'completed'].includes((await rollout(r.id)).status);
      i++
    )
      await tick();
    env.sim.faults.clear(fault);
    r = await rollout(r.id);
    expect(r.status).toBe('rolled-back');
    expect(r.wave).toBe(1);
    expect(r.reason).toMatch(
      new RegExp(`^cluster ${failing}: task "delete ConfigMap widgets/widget-agent-config" failed 3 times`),
    );
    // The failed wave's cluster is back where it was: desired on again, On, its ConfigMap in place.
    const f = (await env.store.get(failing!, WIDGETS))!;
    expect(f).toMatchObject({ state: 'On', desired: 'on', desiredBy: `rollout/${r.id}/rollback` });
    expect(f.history.map((t) => `${t.to}:${t.outcome}`).slice(-2)).toEqual(['Off:reversed', 'On:completed']);
    expect(await agentConfig(failing!)).toBe(true);
    // The canary's wave passed: it stays off. Later waves were never touched.
    expect((await env.store.get(canary!, WIDGETS))?.state).toBe('Off');
    for (const c of later) {
      const rec = (await env.store.get(c, WIDGETS))!;
      expect(rec.desiredBy, c).not.toMatch(new RegExp(r.id));
      expect(rec.state, c).toBe('On');
      expect(rec.history.length, c).toBe(before.get(c));
      expect(await agentConfig(c), c).toBe(true);
    }
    expect(r.log.map((l) => l.message)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^rolling back: cluster /), 'wave 2 rolled back']),
    );
    const phases = env.runtime.bus.log
      .filter(
        (e) => e.detailType === 'FeatureRolloutChanged' && (e.detail as { rollout: string }).rollout === r.id,
      )
      .map((e) => (e.detail as { phase: string }).phase);
    expect(phases).toEqual(expect.arrayContaining(['rolling-back', 'rolled-back']));
    expect(phases).not.toContain('completed');
    // Rolled back is final: resume is refused, and a new rollout may start.
    await expect(setRolloutStatus(ports, r.id, 'running', 'test')).rejects.toThrow(/has been rolled back/);
  });
});
