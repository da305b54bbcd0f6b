/**
 * The pure parts of the feature machinery: the state machine's steps, the task list every transition
 * gets, task and declaration parsing (every bad field named), the client flow's rule, reconciler
 * sharding, rollout waves and decisions, and the upgrade check.
 */
import { describe, expect, it } from 'vitest';
import { CAPABILITIES } from '../../shared/capabilities.js';
import { builtinFeatures, FeatureCatalog, PLATFORM_CORE } from '../../shared/features/catalog.js';
import { DeclarationError, parseDeclarations } from '../../shared/features/declaration.js';
import { valueFor } from '../../shared/features/gate.js';
import {
  announced,
  backoffMs,
  CLAIM_MS,
  claimed,
  nextStep,
  reversed,
  started,
  taskDone,
  taskFailed,
  taskWaiting,
  withDesired,
} from '../../shared/features/machine.js';
import type { FeatureRecord } from '../../shared/features/model.js';
import {
  decideRollout,
  parseWaves,
  type Rollout,
  unhealthy,
  waveBounds,
} from '../../shared/features/rollout.js';
import { clusterHealth } from '../../shared/features/rollout-health.js';
import { hashOrder, ownerOf } from '../../shared/features/sharding.js';
import { type FeatureSpec, tasksOf } from '../../shared/features/spec.js';
import { parseTask, type TaskSpec } from '../../shared/features/task-kinds.js';
import { upgradeBlockers } from '../../shared/features/upgrade.js';

const T0 = Date.UTC(2026, 10, 2);
const del: TaskSpec = {
  task: 'delete-objects',
  apiVersion: 'v1',
  resource: 'configmaps',
  namespace: 'a',
  name: 'b',
};
const spec: FeatureSpec = {
  namespace: 'acme',
  name: 'widgets',
  description: '',
  default: 'off',
  enable: [],
  disable: [del],
  components: [],
  usesWaitSeconds: 60,
  since: '0.2.0',
  kubernetes: { min: '1.33', why: 'in-place resize' },
  origin: { file: 'f.yaml' },
};
const off = (): FeatureRecord => announced('c1', spec, (to) => tasksOf(spec, to), T0);

describe('the state machine', () => {
  it('starts a transition when the desired value and the state differ, with a wait for uses every transition needs', () => {
    const r = off();
    expect(r.state).toBe('Off');
    expect(nextStep(r, T0)).toEqual({ kind: 'idle' });
    const on = withDesired(r, 'on', 'op', {}, T0);
    expect(nextStep(on, T0)).toEqual({ kind: 'start', to: 'On' });
    const s = started(on, 'On', tasksOf(spec, 'On'), 'x', T0);
    expect(s.state).toBe('TurningOn');
    expect(s.tasks.map((t) => t.spec.task)).toEqual(['wait-for-uses']); // enable: the wait last
    expect(tasksOf(spec, 'Off').map((t) => t.task)).toEqual(['wait-for-uses', 'delete-objects']); // disable: first
    expect(s.version).toBe(on.version + 1);
  });

  it('claims the first task before it is performed, and nobody else performs it until the claim lapses', () => {
    const r = started(off(), 'Off', tasksOf(spec, 'Off'), 'x', T0);
    const c = claimed(r, 'rec-a', T0);
    expect(nextStep(c, T0 + 1000)).toMatchObject({ kind: 'later', until: T0 + CLAIM_MS });
    expect(nextStep(c, T0 + CLAIM_MS + 1)).toMatchObject({ kind: 'perform' });
  });

  it('removes a done task, and the last one sets the final state and records the transition', () => {
    let r = started({ ...off(), state: 'On' }, 'Off', tasksOf(spec, 'Off'), 'desired off', T0);
    r = taskDone(claimed(r, 'a', T0), 0, T0 + 1);
    expect(r.state).toBe('TurningOff');
    expect(r.tasks).toHaveLength(1);
    r = taskDone(claimed(r, 'a', T0 + 2), 3, T0 + 3);
    expect(r.state).toBe('Off');
    expect(r.tasks).toEqual([]);
    expect(r.transition).toBeUndefined();
    expect(r.history.at(-1)).toMatchObject({ to: 'Off', outcome: 'completed', reason: 'desired off' });
    expect(r.history.at(-1)!.done.map((d) => d.writes)).toEqual([0, 3]);
  });

  it('retries a failed task with a growing back-off and never skips it', () => {
    let r = started(off(), 'Off', [del], 'x', T0);
    r = taskFailed(claimed(r, 'a', T0), 'boom', 0, T0);
    expect(r.tasks[0]).toMatchObject({ attempts: 1, lastError: 'boom', notBefore: T0 + backoffMs(1) });
    expect(nextStep(r, T0 + 1000)).toMatchObject({ kind: 'later', why: expect.stringContaining('boom') });
    r = taskFailed(claimed(r, 'a', T0 + backoffMs(1)), 'boom', 0, T0 + backoffMs(1));
    expect(r.tasks[0]!.attempts).toBe(2);
    expect(backoffMs(2)).toBe(2 * backoffMs(1));
    expect(backoffMs(50)).toBe(30 * 60_000);
    expect(nextStep(r, T0 + 10 * backoffMs(2))).toMatchObject({
      kind: 'perform',
      task: { title: r.tasks[0]!.title },
    });
  });

  it('a wait keeps its progress and says what it waits for', () => {
    const r = taskWaiting(
      claimed(started(off(), 'Off', [del], 'x', T0), 'a', T0),
      { waitingFor: 'two widgets', progress: { clearedAt: T0 }, pollMs: 5000 },
      0,
      60_000,
      T0,
    );
    expect(r.tasks[0]).toMatchObject({
      waitingFor: 'two widgets',
      progress: { clearedAt: T0 },
      notBefore: T0 + 5000,
    });
    expect(r.tasks[0]!.claim).toBeUndefined();
  });

  it('reverses a transition whose desired value flipped, once no task is in progress', () => {
    let r = withDesired({ ...off(), state: 'On' }, 'off', 'op', {}, T0);
    r = started(r, 'Off', tasksOf(spec, 'Off'), 'desired off', T0);
    const busy = claimed(withDesired(r, 'on', 'op', {}, T0), 'a', T0);
    expect(nextStep(busy, T0 + 1)).toMatchObject({
      kind: 'later',
      why: expect.stringContaining('reversal waits'),
    });
    const free = withDesired(r, 'on', 'op', {}, T0);
    expect(nextStep(free, T0)).toEqual({ kind: 'reverse', to: 'On' });
    const back = reversed(free, 'On', tasksOf(spec, 'On'), T0);
    expect(back.state).toBe('TurningOn');
    expect(back.history.at(-1)).toMatchObject({ to: 'Off', outcome: 'reversed' });
    expect(back.transition!.reason).toMatch(/reverses TurningOff/);
  });
});

describe('the catalog', () => {
  it('has a feature for every capability but the platform core, in fleetscope-system, named after it', () => {
    const without = CAPABILITIES.filter((c) => !c.feature).map((c) => c.id);
    expect(without.sort()).toEqual([...PLATFORM_CORE].sort());
    for (const f of builtinFeatures()) {
      expect(f.namespace).toBe('fleetscope-system');
      expect(CAPABILITIES.find((c) => c.feature === f)?.id).toBe(f.name);
      // Every hook a task names exists, and every task parses as a file's would (hooks aside).
      for (const t of [...f.enable, ...f.disable]) {
        if (t.task === 'hook') expect(f.hooks?.[t.hook], `${f.name}: hook ${t.hook}`).toBeDefined();
        else expect(parseTask(t, f.name, { allowHooks: true }).problems).toEqual([]);
      }
    }
  });
});

describe('the client flow', () => {
  it('acts when On, and when TurningOn only once nothing but waits for uses is left', () => {
    const r = off();
    expect(valueFor(undefined, 'on')).toBe('on');
    expect(valueFor(r, 'on')).toBe('off');
    const turning = started(r, 'On', [del, { task: 'wait-for-uses' }], 'x', T0);
    expect(valueFor(turning, 'off')).toBe('off');
    expect(valueFor(taskDone(claimed(turning, 'a', T0), 0, T0), 'off')).toBe('on');
    expect(valueFor({ ...r, state: 'TurningOff' }, 'on')).toBe('off');
    expect(valueFor({ ...r, state: 'On' }, 'off')).toBe('on');
  });
});

describe('tasks and declarations', () => {
  it('parses a task, and names the field of every problem', () => {
    expect(parseTask({ task: 'wait-for-uses', waitSeconds: 30 }, 'x', { allowHooks: false }).task).toEqual({
      task: 'wait-for-uses',
      waitSeconds: 30,
    });
    expect(parseTask({ task: 'explode' }, 'features[0].disable[1]', { allowHooks: false }).problems).toEqual([
      {
        path: 'features[0].disable[1].task',
        message: expect.stringMatching(/unknown task kind "explode" \(known: wait-for-uses/),
      },
    ]);
    const bad = parseTask(
      { task: 'delete-objects', apiVersion: 'v1', kind: 'Pod', selector: 'a in (', extra: 1 },
      'd[0]',
      { allowHooks: false },
    ).problems.map((p) => p.path);
    expect(bad).toEqual(expect.arrayContaining(['d[0].selector', 'd[0]']));
    expect(parseTask({ task: 'hook', hook: 'x' }, 'd[0]', { allowHooks: false }).problems[0]!.path).toBe(
      'd[0].task',
    );
    expect(
      parseTask({ task: 'delete-objects', apiVersion: 'v1' }, 'd[0]', { allowHooks: true }).problems[0]!.path,
    ).toBe('d[0].kind');
  });

  it('refuses a declaration file whole, naming each bad field', () => {
    const file = `
features:
  - namespace: fleetscope-system
    name: ok
  - namespace: acme
    name: widgets
    default: maybe
    disable:
      - task: wait-for-no-objects
        apiVersion: example.com/v1
        kind: Widget
        selector: "tier in (a,"
      - task: clear-state
        prefixes: ["balloons#state"]
      - task: nuke
`;
    let err: DeclarationError | undefined;
    try {
      parseDeclarations(file, 'w.yaml');
    } catch (e) {
      err = e as DeclarationError;
    }
    expect(err).toBeInstanceOf(DeclarationError);
    const paths = err!.problems.map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'features[0].namespace',
        'features[1].default',
        'features[1].disable[0].selector',
        'features[1].disable[1].prefixes[0]',
        'features[1].disable[2].task',
      ]),
    );
    expect(err!.message).toMatch(/unknown task kind "nuke"/);
  });

  it('reads a good declaration with its defaults', () => {
    const [d] = parseDeclarations(
      'features:\n  - namespace: acme\n    name: widgets\n    disable:\n      - {task: delete-objects, apiVersion: v1, kind: ConfigMap, namespace: acme, name: w}\n',
      'w.yaml',
    );
    expect(d).toMatchObject({
      namespace: 'acme',
      name: 'widgets',
      default: 'off',
      usesWaitSeconds: 600,
      origin: { file: 'w.yaml' },
    });
    expect(d!.disable).toEqual([
      { task: 'delete-objects', apiVersion: 'v1', kind: 'ConfigMap', namespace: 'acme', name: 'w' },
    ]);
  });
});

describe('reconciler sharding', () => {
  it('gives every cluster one owner, the same from every reconciler, and moves few when a reconciler is added', () => {
    const clusters = Array.from({ length: 400 }, (_, i) => `c${i}`);
    const two = clusters.map((c) => ownerOf(c, 2));
    expect(clusters.map((c) => ownerOf(c, 2))).toEqual(two);
    expect(new Set(two)).toEqual(new Set([0, 1]));
    const share = two.filter((s) => s === 0).length / clusters.length;
    expect(share).toBeGreaterThan(0.4);
    expect(share).toBeLessThan(0.6);
    const three = clusters.map((c) => ownerOf(c, 3));
    const moved = clusters.filter((_, i) => three[i] !== two[i]);
    // Only clusters taken by the new shard move: about a third, never one between the old shards.
    expect(moved.every((c) => ownerOf(c, 3) === 2)).toBe(true);
    expect(moved.length / clusters.length).toBeLessThan(0.45);
    expect(hashOrder(['a', 'b', 'c'], (x) => x, 's')).toEqual(hashOrder(['c', 'b', 'a'], (x) => x, 's'));
  });
});

describe('rollout waves', () => {
  it('parses the waves and bounds them: one canary, each wave adding at least one, the last all', () => {
    expect(waveBounds(parseWaves('1,10%,50%,100%'), 20)).toEqual([1, 2, 10, 20]);
    expect(waveBounds(parseWaves('1,10%,50%,100%'), 3)).toEqual([1, 2, 3]);
    expect(() => parseWaves('1,50%')).toThrow(/last wave must be 100%/);
    expect(() => parseWaves('1,x,100%')).toThrow(/"x" is neither/);
    expect(() => parseWaves('0,100%')).toThrow(/at least 1 cluster/);
  });

  const base: Rollout = {
    id: 'r',
    namespace: 'acme',
    feature: 'widgets',
    to: 'on',
    waves: '1,100%',
    bounds: [1, 3],
    clusters: ['a', 'b', 'c'],
    pauseMs: 600_000,
    stuckAfterMs: 1_800_000,
    failAfterAttempts: 3,
    rollback: false,
    status: 'running',
    wave: 0,
    createdAt: T0,
    createdBy: 'op',
    updatedAt: T0,
    version: 1,
    log: [],
  };
  const on = (cluster: string) => ({
    cluster,
    state: 'On' as const,
    desired: 'on' as const,
    reachable: true,
  });

  it('starts a wave, waits, pauses once reached, then moves on; completes after the last', () => {
    expect(decideRollout(base, [], T0)).toEqual({ kind: 'start-wave', clusters: ['a'] });
    const w0 = { ...base, waveStartedAt: T0 };
    expect(decideRollout(w0, [{ ...on('a'), state: 'TurningOn' }], T0).kind).toBe('none');
    expect(decideRollout(w0, [on('a')], T0)).toEqual({ kind: 'reached' });
    const paused = { ...w0, waveReachedAt: T0 };
    expect(decideRollout(paused, [on('a')], T0 + 60_000).kind).toBe('none');
    expect(decideRollout(paused, [on('a')], T0 + 600_000)).toEqual({ kind: 'next-wave' });
    expect(decideRollout({ ...paused, wave: 1 }, [on('b'), on('c')], T0 + 1)).toMatchObject({ kind: 'none' });
    expect(decideRollout({ ...base, wave: 1, waveStartedAt: T0 }, [on('b'), on('c')], T0)).toEqual({
      kind: 'complete',
    });
  });

  it('halts on a failed, stuck, unhealthy or overridden cluster, saying why', () => {
    const w0 = { ...base, waveStartedAt: T0 };
    const failing = {
      ...on('a'),
      state: 'TurningOn' as const,
      task: { title: 't', attempts: 3, lastError: '503', failedAt: T0 + 1 },
    };
    expect(decideRollout(w0, [failing], T0 + 2)).toEqual({
      kind: 'halt',
      reason: 'cluster a: task "t" failed 3 times: 503',
    });
    const stuck = { ...on('a'), state: 'TurningOn' as const, transitionStartedAt: T0 };
    expect(decideRollout(w0, [stuck], T0 + 31 * 60_000)).toMatchObject({
      kind: 'halt',
      reason: expect.stringMatching(/stuck in TurningOn for 31m/),
    });
    const paused = { ...w0, waveReachedAt: T0 };
    expect(decideRollout(paused, [{ ...on('a'), reachable: false }], T0 + 1)).toMatchObject({
      reason: 'cluster a: unreachable during the pause',
    });
    expect(decideRollout(paused, [{ ...on('a'), state: 'TurningOff' }], T0 + 1)).toMatchObject({
      kind: 'halt',
    });
    // A value the wave has not written yet (set before it started) is the wave's to write, not a halt.
    expect(
      decideRollout(w0, [{ ...on('a'), desired: 'off', desiredBy: 'op', desiredAt: T0 - 1 }], T0).kind,
    ).not.toBe('halt');
    expect(
      decideRollout(w0, [{ ...on('a'), desired: 'off', desiredBy: 'op', desiredAt: T0 + 1 }], T0),
    ).toMatchObject({
      reason: "cluster a: its desired value is off (set by op), not the rollout's on",
    });
    // After a resume, only a new failure halts it again.
    expect(decideRollout({ ...w0, resumedAt: T0 + 5 }, [failing], T0 + 6).kind).toBe('none');
  });
});

describe('rollout rollback, approval and health', () => {
  const r: Rollout = {
    id: 'r',
    namespace: 'acme',
    feature: 'widgets',
    to: 'off',
    waves: '1,100%',
    bounds: [1, 3],
    clusters: ['a', 'b', 'c'],
    pauseMs: 60_000,
    stuckAfterMs: 1_800_000,
    failAfterAttempts: 3,
    status: 'running',
    wave: 0,
    waveStartedAt: T0,
    createdAt: T0,
    createdBy: 'op',
    updatedAt: T0,
    version: 1,
    log: [],
    baseline: {
      a: { inventory: true, reachable: true, cycleErrors: 1, refusedResizes: 0, notReadyNodes: 0 },
    },
  };
  const healthy = { inventory: true, reachable: true, cycleErrors: 1, refusedResizes: 0, notReadyNodes: 0 };
  const off = (health = healthy) => ({
    cluster: 'a',
    state: 'Off' as const,
    desired: 'off' as const,
    reachable: health.reachable,
    health,
  });

  it('a failing wave rolls back (unless --no-rollback), and is rolled back once its clusters are back', () => {
    const failing = {
      ...off(),
      state: 'TurningOff' as const,
      task: { title: 't', attempts: 3, failedAt: T0 + 1 },
    };
    expect(decideRollout(r, [failing], T0 + 2)).toEqual({
      kind: 'rollback',
      reason: 'cluster a: task "t" failed 3 times: unknown error',
    });
    expect(decideRollout({ ...r, rollback: false }, [failing], T0 + 2).kind).toBe('halt');
    const back = { ...r, status: 'rolling-back' as const };
    // Set back by the rollback (a value someone else set is left, and not waited for).
    const setBack = { desiredBy: 'rollout/r/rollback' };
    expect(
      decideRollout(back, [{ ...failing, ...setBack, previousFinal: 'On' as const }], T0 + 3),
    ).toMatchObject({
      kind: 'none',
      why: 'rolling back: a (TurningOff)',
    });
    expect(
      decideRollout(back, [{ ...off(), state: 'On' as const, previousFinal: 'On' as const }], T0 + 3),
    ).toEqual({ kind: 'rolled-back' });
  });

  it("judges health by the capabilities' signals against the wave's start, and no inventory is not healthy", () => {
    const at = T0 + 1;
    expect(decideRollout(r, [off()], at)).toEqual({ kind: 'reached' });
    const cases: [Partial<typeof healthy>, string][] = [
      [{ inventory: false }, 'cluster a: no inventory (nothing shows the cluster works)'],
      [{ reachable: false }, 'cluster a: unreachable'],
      [{ cycleErrors: 2 }, 'cluster a: cycle errors rose from 1 to 2'],
      [{ refusedResizes: 4 }, 'cluster a: refused resizes rose from 0 to 4'],
      [{ notReadyNodes: 1 }, 'cluster a: nodes NotReady rose from 0 to 1'],
    ];
    for (const [change, reason] of cases)
      expect(decideRollout(r, [off({ ...healthy, ...change })], at), reason).toEqual({
        kind: 'rollback',
        reason,
      });
    expect(
      decideRollout({ ...r, waveReachedAt: T0 }, [off({ ...healthy, reachable: false })], at),
    ).toMatchObject({
      reason: 'cluster a: unreachable during the pause',
    });
  });

  it("reads health from the inventory and node scope's last cycle; a cluster without inventory is not healthy", async () => {
    const cycle = {
      errors: ['x', 'y'],
      resizes: { requested: 3, completed: 1, refused: 2 },
      notReadyNodes: 1,
    };
    const health = clusterHealth({
      getStatus: async (c) =>
        c === 'gone'
          ? undefined
          : { cluster: c, reachable: c !== 'down', metricsApi: 'available', observedAt: '' },
      getCluster: async (c) => (c === 'a' ? ({ lastCycle: cycle } as never) : undefined),
    });
    expect(await health('a')).toEqual({
      inventory: true,
      reachable: true,
      cycleErrors: 2,
      refusedResizes: 2,
      notReadyNodes: 1,
    });
    expect(await health('gone')).toEqual({ inventory: false, reachable: false });
    expect(unhealthy(await health('gone'), undefined)).toMatch(/no inventory/);
    expect(unhealthy(await health('down'), undefined)).toBe('unreachable');
    expect(
      unhealthy(await health('a'), {
        inventory: true,
        reachable: true,
        cycleErrors: 2,
        refusedResizes: 2,
        notReadyNodes: 1,
      }),
    ).toBeUndefined();
    expect(
      unhealthy(await health('a'), {
        inventory: true,
        reachable: true,
        cycleErrors: 2,
        refusedResizes: 2,
        notReadyNodes: 0,
      }),
    ).toBe('nodes NotReady rose from 0 to 1');
  });

  it('waits for approval between waves when asked to', () => {
    const paused = { ...r, approval: true, waveReachedAt: T0 };
    expect(decideRollout(paused, [off()], T0 + 120_000)).toEqual({
      kind: 'none',
      why: 'waiting for approval of wave 2: fleetscope features rollout approve --id r --wave 2',
    });
    expect(decideRollout({ ...paused, approvedWave: 0 }, [off()], T0 + 120_000)).toEqual({
      kind: 'next-wave',
    });
  });
});

describe('upgrade check', () => {
  const rec = (over: Partial<FeatureRecord>): FeatureRecord => ({ ...off(), ...over });
  const catalog = new FeatureCatalog([spec]);
  it('blocks on a transition in progress, a dangling use, an unknown feature and a target that cannot serve it', () => {
    const turning = started(off(), 'On', [del], 'x', T0);
    const out = upgradeBlockers(
      [
        { record: turning, uses: [] },
        {
          record: rec({ cluster: 'c2' }),
          uses: [{ component: 'agent', value: 'on', at: T0, source: 'cluster' }],
        },
        { record: rec({ cluster: 'c3', state: 'On', name: 'gone' }), uses: [] },
        { record: rec({ cluster: 'c4', state: 'On' }), uses: [] },
        { record: rec({ cluster: 'c5' }), uses: [] },
      ],
      catalog,
      { kubernetes: 'v1.32.4', fleetscope: '0.1.0' },
    );
    const by = (c: string) => out.filter((b) => b.cluster === c).map((b) => b.reason);
    expect(by('c1').join()).toMatch(/TurningOn in progress at "delete configmaps a\/b"/);
    expect(by('c2').join()).toMatch(/agent still report\(s\) on/);
    expect(by('c3').join()).toMatch(/unknown to this fleetscope/);
    expect(by('c4').join()).toMatch(
      /Kubernetes v1.32.4 cannot serve it \(it needs >= 1.33: in-place resize\)/,
    );
    expect(by('c4').join()).toMatch(/fleetscope 0.1.0 cannot serve it \(introduced in 0.2.0\)/);
    expect(by('c5')).toEqual([]); // Off and clean: nothing to block
    expect(
      upgradeBlockers([{ record: rec({ cluster: 'c4', state: 'On' }), uses: [] }], catalog, {
        kubernetes: '1.34',
      }),
    ).toEqual([]);
  });
});
