/**
 * The server flow's guarantees over the simulator: a crash injected between any two steps of a
 * transition, and it completes once with no step performed twice (the writes each step sends to the
 * cluster, counted by the simulator, equal an uninterrupted run's); two reconcilers racing on one
 * cluster; a desired value flipped mid-transition; a wait for no objects held until they are removed by
 * hand; a failing task retried with back-off, never skipped; an unreachable cluster keeps its place.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import { builtinFeatures, FeatureCatalog } from '../../shared/features/catalog.js';
import type { FeatureRecord } from '../../shared/features/model.js';
import type { StepMark } from '../../shared/features/reconciler.js';
import type { FeatureSpec } from '../../shared/features/spec.js';
import type { FeatureStore } from '../../shared/features/store.js';
import { WHOLE_CLUSTER_POLICY } from '../balloons/helpers.js';
import { BALLOONS, Crash, dangling, drive, type FeatureEnv, MINUTE, startFeatureEnv } from './helpers.js';

/** A third party's feature made of built-in tasks only (as a file would declare it). */
const widgets: FeatureSpec = {
  namespace: 'acme',
  name: 'widgets',
  description: 'test feature',
  default: 'off',
  components: [],
  usesWaitSeconds: 0,
  since: '0.1.0',
  enable: [],
  disable: [
    { task: 'wait-for-uses' },
    {
      task: 'delete-objects',
      apiVersion: 'v1',
      resource: 'configmaps',
      kind: 'ConfigMap',
      namespace: 'default',
      selector: 'acme.io/agent=true',
    },
    {
      task: 'wait-for-no-objects',
      apiVersion: 'v1',
      resource: 'configmaps',
      kind: 'ConfigMap',
      selector: 'acme.io/widget=true',
    },
  ],
  origin: { file: 'test' },
};

import { OWNER_LABEL } from '../../shared/features/harmless.js';

const WIDGETS = { namespace: 'acme', name: 'widgets' };
const catalog = new FeatureCatalog([...builtinFeatures(), widgets]);

describe('feature transitions over the simulator', () => {
  let env: FeatureEnv;
  let n = 0;
  beforeAll(async () => {
    env = await startFeatureEnv([{ name: 'w', nodes: 1, seed: 9 }]);
  });
  afterAll(async () => env?.stop());

  /** A new cluster with inflated balloons and balloons On. */
  async function inflated(): Promise<string> {
    const name = `crash-${n++}`;
    await env.addCluster({ name, nodes: 2, seed: 20 + n });
    await new DynamoBalloonStore(env.runtime.db, env.runtime.table).putPolicy(name, WHOLE_CLUSTER_POLICY);
    await drive(env, name, BALLOONS, { between: () => env.cycle(name) });
    await env.cycle(name);
    env.sim.clock.advance(MINUTE);
    await env.cycle(name);
    return name;
  }

  /** Turns balloons off (mirror off), crashing after the `crashAt`-th stored step; the writes per task. */
  async function turnOff(cluster: string, crashAt?: number) {
    const marks: (StepMark & { writes: number })[] = [];
    const onStep = (m: StepMark) => {
      marks.push({ ...m, writes: env.writes(cluster) });
      if (marks.length - 1 === crashAt) throw new Crash(`crash after ${m.step} ${m.task ?? ''}`);
    };
    await env.set(cluster, BALLOONS, 'off');
    const before = env.writes(cluster);
    let crashes = 0;
    const off = await drive(env, cluster, BALLOONS, {
      ports: { mirror: false, onStep },
      onError: (err) => {
        if (!(err instanceof Crash)) throw err;
        crashes++;
      },
    });
    // Writes between a task's claim and its "performed" mark are that task's, whichever attempt made them.
    const perTask: Record<string, number> = {};
    marks.forEach((m, i) => {
      if (m.step === 'performed')
        perTask[m.task!] = (perTask[m.task!] ?? 0) + m.writes - marks[i - 1]!.writes;
    });
    return { off, perTask, total: env.writes(cluster) - before, marks, crashes };
  }

  it('completes once after a crash between any two steps, no step writing twice', {
    timeout: 240_000,
  }, async () => {
    const baseline = await turnOff(await inflated());
    expect(baseline.off.state).toBe('Off');
    // Per balloon: its resize, and the Event the balloons cycle records on the pod.
    expect(baseline.perTask['deflate every balloon to the floor']).toBe(4);
    expect(baseline.perTask['delete DaemonSet kube-system/fleetscope-balloon']).toBe(1);
    expect(baseline.total).toBe(Object.values(baseline.perTask).reduce((a, b) => a + b, 0));
    const steps = baseline.marks.length;
    expect(steps).toBeGreaterThan(20);
    for (let k = 0; k < steps; k++) {
      const where = `crash after step ${k} (${baseline.marks[k]!.step} ${baseline.marks[k]!.task ?? ''})`;
      const cluster = await inflated();
      const run = await turnOff(cluster, k);
      expect(run.crashes, where).toBe(1);
      expect(run.off.state, where).toBe('Off');
      expect(run.perTask, `writes per task, ${where}`).toEqual(baseline.perTask);
      expect(run.total, `cluster writes, ${where}`).toBe(baseline.total);
      // The history counts every cluster write once, a crashed attempt's included (DynamoDB-only tasks aside).
      for (const d of run.off.history.at(-1)!.done)
        if (d.task !== 'clear-state' && d.task !== 'wait-for-uses')
          expect(d.writes, `history's writes of "${d.title}", ${where}`).toBe(baseline.perTask[d.title] ?? 0);
      const titles = (r: typeof run) => r.off.history.at(-1)!.done.map((d) => d.title);
      expect(titles(run), where).toEqual(titles(baseline));
      expect(
        run.off.history.filter((t) => t.to === 'Off'),
        where,
      ).toHaveLength(1);
      expect(await dangling(env, cluster, BALLOONS), where).toEqual([]);
    }
  });

  /**
   * The store both racing reconcilers share: a claim is stored only once both have come to claim (or
   * after 100 ms), so they really try to claim the same task on the same version.
   */
  function racingStore(): FeatureStore {
    let parked: (() => void)[] = [];
    const meet = () =>
      new Promise<void>((resolve) => {
        parked.push(resolve);
        const release = () => {
          for (const r of parked) r();
          parked = [];
        };
        if (parked.length === 2) release();
        else setTimeout(release, 100);
      });
    const store = env.store;
    return new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'save')
          return async (next: FeatureRecord, expected: number) => {
            if (next.tasks[0]?.claim) await meet();
            return target.save(next, expected);
          };
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  }

  it('two reconcilers racing on one cluster: each task is claimed by one, and performed once', async () => {
    const cluster = await inflated();
    await env.set(cluster, BALLOONS, 'off');
    const before = env.writes(cluster);
    const performed: string[] = [];
    const conflicts = env.store.stats.conflicts;
    const onStep = (m: StepMark) => {
      if (m.step === 'performed') performed.push(m.task!);
    };
    const store = racingStore();
    for (let pass = 0; pass < 30; pass++) {
      await Promise.all([
        env.reconcile(cluster, BALLOONS, { mirror: false, onStep, store }),
        env.reconcile(cluster, BALLOONS, { mirror: false, onStep, store }),
      ]);
      const r = (await env.store.get(cluster, BALLOONS))!;
      if (r.state === 'Off') break;
      env.sim.clock.advance(Math.max((r.tasks[0]?.notBefore ?? 0) - env.now(), 1000));
    }
    const r = (await env.store.get(cluster, BALLOONS))!;
    expect(r.state).toBe('Off');
    expect(env.store.stats.conflicts - conflicts).toBeGreaterThanOrEqual(3); // they raced for claims
    // Each task once (a wait for uses is performed once per look: clear, then check).
    for (const t of r.history.at(-1)!.done.filter((d) => d.task !== 'wait-for-uses'))
      expect(
        performed.filter((p) => p === t.title),
        t.title,
      ).toHaveLength(1);
    expect(performed.filter((p) => p === 'wait for uses')).toHaveLength(2);
    // Two balloons deflated (a resize and an Event each), the uses epoch published in the Feature
    // status, the DaemonSet, the PriorityClass.
    expect(env.writes(cluster) - before).toBe(2 * 2 + 1 + 1 + 1);
  });

  it('a desired value flipped mid-transition reverses it instead of leaving it half done', async () => {
    const cluster = await inflated();
    await env.set(cluster, BALLOONS, 'off');
    await env.reconcile(cluster, BALLOONS); // deflated, waiting for uses
    expect((await env.store.get(cluster, BALLOONS))!.state).toBe('TurningOff');
    await env.set(cluster, BALLOONS, 'on');
    const on = await drive(env, cluster, BALLOONS, { between: () => env.cycle(cluster) });
    expect(on.state).toBe('On');
    const [reversedT, back] = on.history.slice(-2);
    expect(reversedT).toMatchObject({ to: 'Off', outcome: 'reversed' });
    expect(reversedT!.done.map((d) => d.title)).toEqual(['deflate every balloon to the floor']);
    expect(back).toMatchObject({
      to: 'On',
      outcome: 'completed',
      reason: expect.stringMatching(/^reverses TurningOff/),
    });
    // Nothing was deleted: the balloons inflate again on the next cycles.
    env.sim.clock.advance(MINUTE);
    await env.cycle(cluster);
    const pods = await env
      .client(cluster)
      .core.listNamespacedPod({ namespace: 'kube-system', labelSelector: 'fleetscope.io/balloon=true' });
    expect(pods.items).toHaveLength(2);
    expect(pods.items.every((p) => p.spec!.containers[0]!.resources!.requests!.cpu !== '1m')).toBe(true);
  });

  const configMap = (name: string, labels: Record<string, string>) =>
    env.client('w').core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name, labels }, data: { a: 'b' } },
    });
  const widgetPorts = { catalog, mirror: false };

  it('waits for no objects, naming them, and never deletes them: the transition goes on once they are removed by hand', async () => {
    await env.store.create({
      cluster: 'w',
      namespace: 'acme',
      name: 'widgets',
      default: 'off',
      state: 'On',
      tasks: [],
      history: [],
      version: 1,
      updatedAt: env.now(),
      desired: 'on',
    });
    await configMap('agent', { 'acme.io/agent': 'true', [OWNER_LABEL]: 'acme.widgets' });
    await configMap('w1', { 'acme.io/widget': 'true' });
    await configMap('w2', { 'acme.io/widget': 'true' });
    const r0 = (await env.store.get('w', WIDGETS))!;
    await env.store.save({ ...r0, desired: 'off', version: r0.version + 1 }, r0.version);
    for (let i = 0; i < 3; i++) {
      await env.reconcile('w', WIDGETS, widgetPorts);
      env.sim.clock.advance(2 * MINUTE);
    }
    let r = (await env.store.get('w', WIDGETS))!;
    expect(r.state).toBe('TurningOff');
    expect(r.tasks[0]!.waitingFor).toMatch(
      /^2 ConfigMap \(acme.io\/widget=true\) left: default\/w1, default\/w2 \(fleetscope does not delete them/,
    );
    const names = async () =>
      (await env.client('w').core.listNamespacedConfigMap({ namespace: 'default' })).items.map(
        (c) => c.metadata!.name,
      );
    expect(await names()).toEqual(expect.arrayContaining(['w1', 'w2']));
    expect(await names()).not.toContain('agent'); // the delete task before it did its part
    await env.client('w').core.deleteNamespacedConfigMap({ name: 'w1', namespace: 'default' });
    await env.reconcile('w', WIDGETS, widgetPorts);
    r = (await env.store.get('w', WIDGETS))!;
    expect(r.tasks[0]!.waitingFor).toMatch(/^1 ConfigMap .* left: default\/w2/);
    await env.client('w').core.deleteNamespacedConfigMap({ name: 'w2', namespace: 'default' });
    env.sim.clock.advance(2 * MINUTE);
    await env.reconcile('w', WIDGETS, widgetPorts);
    expect((await env.store.get('w', WIDGETS))!.state).toBe('Off');
  });

  it('retries a failing task with back-off, shows its error, never skips ahead; an unreachable cluster keeps its place', async () => {
    const r0 = (await env.store.get('w', WIDGETS))!;
    await env.store.save({ ...r0, desired: 'on', version: r0.version + 1 }, r0.version);
    await env.reconcile('w', WIDGETS, widgetPorts);
    expect((await env.store.get('w', WIDGETS))!.state).toBe('On');
    await configMap('agent', { 'acme.io/agent': 'true', [OWNER_LABEL]: 'acme.widgets' });
    const r1 = (await env.store.get('w', WIDGETS))!;
    await env.store.save({ ...r1, desired: 'off', version: r1.version + 1 }, r1.version);
    const fault = env.sim.faults.inject({
      cluster: 'w',
      match: { method: 'DELETE' },
      fault: { type: 'status', code: 500 },
    });
    const attempts: number[] = [];
    for (let i = 0; i < 3; i++) {
      await env.reconcile('w', WIDGETS, widgetPorts);
      const r = (await env.store.get('w', WIDGETS))!;
      expect(r.tasks[0]!.title).toBe('delete ConfigMap in default (acme.io/agent=true)');
      expect(r.tasks[0]!.lastError).toMatch(/500|Internal/i);
      expect(r.tasks).toHaveLength(2); // the wait for no objects after it was never started
      attempts.push(r.tasks[0]!.attempts);
      const due = r.tasks[0]!.notBefore! - env.now();
      expect(due).toBeGreaterThan(0); // backing off
      env.sim.clock.advance(due);
    }
    expect(attempts).toEqual([1, 2, 3]);
    env.sim.faults.clear(fault);
    // The cluster cannot be reached at all: the transition stays where it was, with the reason.
    const down = env.sim.faults.inject({ cluster: 'w', fault: { type: 'reset' } });
    await env.reconcile('w', WIDGETS, widgetPorts);
    const held = (await env.store.get('w', WIDGETS))!;
    expect(held.state).toBe('TurningOff');
    expect(held.tasks[0]).toMatchObject({
      title: 'delete ConfigMap in default (acme.io/agent=true)',
      attempts: 4,
    });
    env.sim.faults.clear(down);
    env.sim.clock.advance(held.tasks[0]!.notBefore! - env.now());
    await env.reconcile('w', WIDGETS, widgetPorts);
    const off = (await env.store.get('w', WIDGETS))!;
    expect(off.state).toBe('Off');
    expect(off.history.at(-1)!.done.find((d) => d.task === 'delete-objects')).toMatchObject({
      attempts: 4,
      writes: 1,
    });
  });

  it('a feature whose default changes (a new fleetscope, a re-registered file) follows it unless the operator set a value', async () => {
    const gadgets: FeatureSpec = { ...widgets, name: 'gadgets', disable: [], usesWaitSeconds: 0 };
    const ref = { namespace: 'acme', name: 'gadgets' };
    await env.reconcile('w', ref, { catalog: new FeatureCatalog([gadgets]), mirror: false });
    expect((await env.store.get('w', ref))!.state).toBe('Off');
    const now = new FeatureCatalog([{ ...gadgets, default: 'on' }]);
    await env.reconcile('w', ref, { catalog: now, mirror: false });
    const r = (await env.store.get('w', ref))!;
    expect(r).toMatchObject({ default: 'on', state: 'On' });
    expect(r.history.at(-1)).toMatchObject({ to: 'On', reason: 'default on', outcome: 'completed' });
  });

  it('a cluster whose Feature objects cannot be written is not tried again at every pass', async () => {
    const ref = { namespace: 'acme', name: 'gadgets' };
    const catalog = new FeatureCatalog([{ ...widgets, name: 'gadgets', default: 'on', disable: [] }]);
    let connects = 0;
    const down = {
      catalog,
      connect: async () => {
        connects++;
        throw new Error('connection refused');
      },
    };
    const stale = (await env.store.view('w', ref)).record!;
    await env.store.save({ ...stale, version: stale.version + 1 }, stale.version); // the mirror is now behind
    await env.reconcile('w', ref, down);
    expect(connects).toBe(1);
    expect((await env.store.view('w', ref)).mirror).toMatchObject({
      error: expect.stringMatching(/connection refused/),
    });
    env.sim.clock.advance(5 * MINUTE);
    await env.reconcile('w', ref, down);
    expect(connects).toBe(1);
    env.sim.clock.advance(11 * MINUTE);
    await env.client('w').core.createNamespace({ body: { metadata: { name: 'acme' } } }); // the third party's
    await env.reconcile('w', ref, { catalog });
    expect((await env.store.view('w', ref)).mirror).toEqual({ version: stale.version + 1, at: env.now() });
  });
});
