/**
 * Finding 3 of issue 16: a task that always fails, or a wait that never ends, must not keep a feature in
 * transition forever and silently. Past its deadline the transition is shown as stuck with its reason
 * (a bus event, a metric, a Warning Event on the Feature object, `features list`, check-upgrade), and an
 * operator can retry, skip or abandon it, each recorded with who, when and why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinFeatures, FeatureCatalog } from '../../shared/features/catalog.js';
import { setDesired } from '../../shared/features/desired.js';
import { OWNER_LABEL } from '../../shared/features/harmless.js';
import { TASK_DEADLINE_MS } from '../../shared/features/machine.js';
import { actOnTransition } from '../../shared/features/operator.js';
import type { FeatureSpec } from '../../shared/features/spec.js';
import { upgradeBlockers } from '../../shared/features/upgrade.js';
import { featureJson, historyLines, listTable } from '../../shared/features/views.js';
import { drive, type FeatureEnv, startFeatureEnv } from './helpers.js';

const base = {
  description: 'test feature',
  default: 'on' as const,
  components: [],
  usesWaitSeconds: 0,
  since: '0.1.0',
  enable: [],
  origin: { file: 'test' },
};
const configMaps = { apiVersion: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'acme' };
const failing: FeatureSpec = {
  ...base,
  namespace: 'acme',
  name: 'failing',
  disable: [{ task: 'delete-objects', ...configMaps, selector: 'acme.io/failing=true' }],
};
const waiting: FeatureSpec = {
  ...base,
  namespace: 'acme',
  name: 'waiting',
  disable: [{ task: 'wait-for-no-objects', ...configMaps, selector: 'acme.io/waiting=true' }],
};
/** A feature that declares its own task deadline (10 minutes): shown stuck then, not after the default. */
const quick: FeatureSpec = {
  ...base,
  namespace: 'acme',
  name: 'quick',
  taskDeadlineMinutes: 10,
  disable: [{ task: 'wait-for-no-objects', ...configMaps, selector: 'acme.io/quick=true' }],
};
const catalog = new FeatureCatalog([...builtinFeatures(), failing, waiting, quick]);

describe('a stuck transition', () => {
  let env: FeatureEnv;
  const cluster = 'stuck';
  const metrics: string[] = [];
  const ports = { catalog, count: (m: string) => metrics.push(m) };
  beforeAll(async () => {
    env = await startFeatureEnv([{ name: cluster, nodes: 1, seed: 6 }]);
    await env.client(cluster).core.createNamespace({ body: { metadata: { name: 'acme' } } });
  });
  afterAll(async () => env?.stop());

  const configMap = (name: string, label: string) =>
    env.client(cluster).core.createNamespacedConfigMap({
      namespace: 'acme',
      // Made by the feature (its ownership label): a declared feature deletes only what it created.
      body: { metadata: { name, labels: { [label]: 'true', [OWNER_LABEL]: `acme.${label.split('/')[1]}` } } },
    });
  const record = async (spec: FeatureSpec) => (await env.store.get(cluster, spec))!;
  /** Reconciles at every moment the first task is due until `until` on the clock. */
  async function passUntil(spec: FeatureSpec, until: number) {
    for (let i = 0; i < 200 && env.now() < until; i++) {
      await env.reconcile(cluster, spec, ports);
      const t = (await record(spec)).tasks[0];
      env.sim.clock.advance(Math.max(1000, Math.min((t?.notBefore ?? 0) - env.now(), until - env.now())));
    }
    await env.reconcile(cluster, spec, ports);
  }

  it('a task that always fails is shown stuck past its deadline, retried and skipped by an operator', async () => {
    await drive(env, cluster, failing, { ports });
    await configMap('f1', 'acme.io/failing');
    const fault = env.sim.faults.inject({
      cluster,
      match: { method: 'DELETE' },
      fault: { type: 'status', code: 500 },
    });
    await setDesired(env.store, failing, cluster, 'off', 'test', {}, env.now());
    const started = env.now();
    await passUntil(failing, started + TASK_DEADLINE_MS - 60_000);
    expect((await record(failing)).tasks[0]!.stuck, 'not before its deadline').toBeUndefined();
    await passUntil(failing, started + TASK_DEADLINE_MS + 31 * 60_000);
    const stuck = await record(failing);
    expect(stuck.state).toBe('TurningOff');
    expect(stuck.tasks[0]!.stuck?.reason).toMatch(
      /not done after 60 minutes: failing \(\d+ attempts\): .*500/,
    );
    expect(metrics.filter((m) => m === 'FeatureTransitionsStuck')).toHaveLength(1); // marked once
    // Seen: features list, a Warning Event on the Feature object, check-upgrade.
    const row = listTable([featureJson(stuck, [])], false).join('\n');
    expect(row).toMatch(/TurningOff \(stuck\)/);
    expect(row).toMatch(/STUCK since/);
    const events = await env.client(cluster).core.listNamespacedEvent({ namespace: 'acme' });
    expect(events.items.map((e) => [e.reason, e.type, e.involvedObject.name])).toContainEqual([
      'TransitionStuck',
      'Warning',
      'failing',
    ]);
    const blockers = upgradeBlockers([{ record: stuck, uses: [] }], catalog, {});
    expect(blockers[0]!.reason).toMatch(/^TurningOff STUCK at "delete ConfigMap in acme/);

    // An unknown task is named, with the tasks there are; nothing is written.
    await expect(
      actOnTransition(
        env.store,
        failing,
        cluster,
        { verb: 'skip', task: 'nuke', reason: 'r', by: 'local:ann' },
        env.now(),
      ),
    ).rejects.toThrow(/--task "nuke": no such task .*"delete ConfigMap in acme \(acme.io\/failing=true\)"/);
    expect((await record(failing)).version).toBe(stuck.version);

    // retry: looked at again now (the fault still there: it fails again, not stuck until a new deadline).
    const retried = await actOnTransition(
      env.store,
      failing,
      cluster,
      { verb: 'retry', reason: 'the API server was patched', by: 'local:ann' },
      env.now(),
    );
    expect(retried.tasks[0]!.stuck).toBeUndefined();
    await env.reconcile(cluster, failing, ports);
    const again = await record(failing);
    expect(again.tasks[0]!.attempts).toBe(stuck.tasks[0]!.attempts + 1);
    expect(again.tasks[0]!.stuck).toBeUndefined();

    // skip: recorded as skipped (not performed), with who and why; the transition completes.
    await actOnTransition(
      env.store,
      failing,
      cluster,
      { verb: 'skip', task: 'delete-objects', reason: 'f1 is removed by hand', by: 'local:bob' },
      env.now(),
    );
    env.sim.faults.clear(fault);
    await env.reconcile(cluster, failing, ports);
    const off = await record(failing);
    expect(off.state).toBe('Off');
    const last = off.history.at(-1)!;
    expect(last.done.at(-1)).toMatchObject({ task: 'delete-objects', skipped: true });
    expect(last.actions).toEqual([
      {
        verb: 'retry',
        task: expect.stringMatching(/^delete ConfigMap/),
        by: 'local:ann',
        at: expect.any(Number),
        reason: 'the API server was patched',
      },
      {
        verb: 'skip',
        task: expect.stringMatching(/^delete ConfigMap/),
        by: 'local:bob',
        at: expect.any(Number),
        reason: 'f1 is removed by hand',
      },
    ]);
    expect(historyLines(off).join('\n')).toMatch(
      /skip "delete ConfigMap .*" by local:bob at .*: f1 is removed by hand/,
    );
    // Once Off, there is nothing to act on: said so.
    await expect(
      actOnTransition(
        env.store,
        failing,
        cluster,
        { verb: 'retry', reason: 'r', by: 'local:ann' },
        env.now(),
      ),
    ).rejects.toThrow(/acme\/failing in cluster stuck is Off: no transition in progress to retry/);
  });

  it('a wait that never ends is shown stuck; abandoned, the feature turns back where it came from', async () => {
    await drive(env, cluster, waiting, { ports });
    await configMap('w1', 'acme.io/waiting');
    await setDesired(env.store, waiting, cluster, 'off', 'test', {}, env.now());
    await passUntil(waiting, env.now() + TASK_DEADLINE_MS + 2 * 60_000);
    const stuck = await record(waiting);
    expect(stuck.tasks[0]!.stuck?.reason).toMatch(/still waiting for 1 ConfigMap .* left: acme\/w1/);
    await actOnTransition(
      env.store,
      waiting,
      cluster,
      { verb: 'abandon', reason: 'w1 belongs to a tenant; keep widgets on', by: 'local:ann' },
      env.now(),
    );
    const on = await drive(env, cluster, waiting, { ports });
    expect(on).toMatchObject({ state: 'On', desired: 'on', desiredBy: 'local:ann' });
    const [gaveUp, back] = on.history.slice(-2);
    expect(gaveUp).toMatchObject({
      to: 'Off',
      outcome: 'abandoned',
      actions: [{ verb: 'abandon', by: 'local:ann' }],
    });
    expect(back).toMatchObject({
      to: 'On',
      outcome: 'completed',
      reason: expect.stringMatching(/^abandoned TurningOff by local:ann/),
    });
  });

  it("a feature's declared task deadline is the one it is held to", async () => {
    await drive(env, cluster, quick, { ports });
    await configMap('q1', 'acme.io/quick');
    await setDesired(env.store, quick, cluster, 'off', 'test', {}, env.now());
    const started = env.now();
    await passUntil(quick, started + 9 * 60_000);
    expect((await record(quick)).tasks[0]!.stuck, 'not before its own deadline').toBeUndefined();
    await passUntil(quick, started + 11 * 60_000);
    expect((await record(quick)).tasks[0]!.stuck?.reason).toMatch(
      /not done after 10 minutes: still waiting for 1 ConfigMap/,
    );
  });
});
