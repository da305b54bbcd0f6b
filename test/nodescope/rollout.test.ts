/**
 * Canary and revert, the pure parts: the annotations and their errors, the harm each signal gives
 * (throttling on a fabricated sample: metrics.k8s.io and the simulator carry none), the back-off, and
 * the sizes a reverted node never goes back to.
 */
import { describe, expect, it } from 'vitest';
import type { PodView } from '../../shared/cycle/views.js';
import type { UpdateDecision } from '../../shared/nodescope/apply.js';
import { avoidRevertedFrom, canaryCount, gate } from '../../shared/nodescope/canary.js';
import type { CycleRun } from '../../shared/nodescope/cycle-run.js';
import { harmOf } from '../../shared/nodescope/harm.js';
import type { DaemonSetObject, VpaObject } from '../../shared/nodescope/k8s-types.js';
import { holdAfter, loweredOnly } from '../../shared/nodescope/revert.js';
import { emptyRollout, type NodeDownsize, type RolloutRecord } from '../../shared/nodescope/rollout.js';
import {
  CANARY_ANNOTATION,
  CANARY_SOAK_ANNOTATION,
  DEFAULT_ROLLOUT,
  REVERT_WINDOW_ANNOTATION,
  rolloutPolicyOf,
} from '../../shared/nodescope/rollout-policy.js';
import { RolloutStep } from '../../shared/nodescope/rollout-step.js';
import { DEFAULT_SETTINGS } from '../../shared/nodescope/settings.js';
import { type NodeScopeTarget, resolveTargets } from '../../shared/nodescope/targets.js';
import { runningPodView } from './helpers.js';

const MIN = 60_000;

describe('rollout annotations', () => {
  it('defaults to a 10% canary soaking 30 minutes and a one-hour revert window', () => {
    expect(rolloutPolicyOf(undefined)).toEqual({
      canaryShare: 0.1,
      soakMs: 30 * MIN,
      revertWindowMs: 60 * MIN,
    });
    expect(rolloutPolicyOf({})).toEqual(DEFAULT_ROLLOUT);
  });

  it('reads shares, durations and the switches off', () => {
    expect(
      rolloutPolicyOf({
        [CANARY_ANNOTATION]: '25%',
        [CANARY_SOAK_ANNOTATION]: '1h30m',
        [REVERT_WINDOW_ANNOTATION]: '2h',
      }),
    ).toEqual({ canaryShare: 0.25, soakMs: 90 * MIN, revertWindowMs: 120 * MIN });
    expect(rolloutPolicyOf({ [CANARY_ANNOTATION]: 'off', [REVERT_WINDOW_ANNOTATION]: '0' })).toMatchObject({
      canaryShare: 0,
      revertWindowMs: 0,
    });
  });

  it.each([
    [CANARY_ANNOTATION, '10'],
    [CANARY_ANNOTATION, '150%'],
    [CANARY_ANNOTATION, 'ten%'],
    [CANARY_SOAK_ANNOTATION, '30'],
    [CANARY_SOAK_ANNOTATION, '0'],
    [CANARY_SOAK_ANNOTATION, '200h'],
    [REVERT_WINDOW_ANNOTATION, '-1h'],
  ])('names %s "%s" as the problem', (name, value) => {
    const p = rolloutPolicyOf({ [name]: value });
    expect(typeof p).toBe('string');
    expect(p).toContain(`annotation ${name} "${value}"`);
    expect(p).toContain('nothing is written until it is');
  });

  it('refuses the target whose annotation does not parse, saying which, and takes the policy of one that does', () => {
    const ds: DaemonSetObject = {
      metadata: { name: 'agent', namespace: 'mon', uid: 'ds' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { spec: { containers: [{ name: 'a', resources: { requests: { cpu: '100m' } } }] } },
      },
    };
    const vpa = (name: string, annotations: Record<string, string>): VpaObject => ({
      metadata: {
        name,
        namespace: 'mon',
        uid: name,
        annotations: { 'fleetscope.io/scope': 'node', ...annotations },
      },
      spec: { targetRef: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent' } },
    });
    const bad = resolveTargets([vpa('a', { [CANARY_SOAK_ANNOTATION]: 'soon' })], [ds]);
    expect(bad.targets).toEqual([]);
    expect(bad.rejected[0]?.reason).toContain(`annotation ${CANARY_SOAK_ANNOTATION} "soon"`);
    const good = resolveTargets([vpa('a', { [CANARY_ANNOTATION]: '50%' })], [ds]);
    expect(good.targets[0]?.rollout).toEqual({ ...DEFAULT_ROLLOUT, canaryShare: 0.5 });
  });
});

const downsize = (over: Partial<NodeDownsize> = {}): NodeDownsize => ({
  podUid: 'u',
  at: 1_000_000,
  before: { c: { requests: { cpu: 400, memory: 400 } } },
  after: { c: { requests: { cpu: 100, memory: 100 } } },
  restarts: 2,
  actuated: true,
  ...over,
});
const pod = (over: Partial<PodView> = {}) =>
  runningPodView({
    containers: [{ name: 'c', reqCpu: 100, reqMem: 100, hasActual: true }],
    restarts: 2,
    ...over,
  });

describe('harm', () => {
  it('sees an OOM kill after the downsize, not one before it', () => {
    const oom = (at: number) => pod({ containers: [{ name: 'c', hasActual: true, oomAt: at }] });
    expect(harmOf(downsize(), oom(1_000_000))?.kind).toBe('OOMKilled');
    expect(harmOf(downsize(), oom(999_000))).toBeUndefined();
  });

  it('sees a restart once the resize was actuated (a RestartContainer policy restarts once by design)', () => {
    expect(harmOf(downsize(), pod({ restarts: 3 }))?.kind).toBe('Restarted');
    expect(harmOf(downsize({ actuated: undefined }), pod({ restarts: 3 }))).toBeUndefined();
    expect(harmOf(downsize(), pod())).toBeUndefined();
  });

  it('sees a running pod that lost readiness', () => {
    expect(harmOf(downsize(), pod({ notReady: true }))?.kind).toBe('NotReady');
  });

  it('sees throttling well above what the pod had before, on a fabricated sample', () => {
    expect(harmOf(downsize({ throttled: 0.05 }), pod(), 0.4)).toMatchObject({
      kind: 'Throttled',
      detail: 'CPU throttled in 40% of periods after the downsize (5% before)',
    });
    // Throttled before as much: not the downsize's doing; a little: not harm.
    expect(harmOf(downsize({ throttled: 0.3 }), pod(), 0.4)).toBeUndefined();
    expect(harmOf(downsize(), pod(), 0.1)).toBeUndefined();
  });
});

describe('hold and reverted-from sizes', () => {
  it('doubles the hold per revert in a row, up to the cap', () => {
    const s = { baseMs: 60 * MIN, maxMs: 6 * 60 * MIN };
    let h = holdAfter(undefined, { node: 'n', reason: 'OOMKilled' }, 0, s);
    const lengths = [h.until];
    for (let i = 0; i < 4; i++) {
      h = holdAfter(h, { node: 'n', reason: 'OOMKilled' }, 0, s);
      lengths.push(h.until);
    }
    expect(lengths.map((ms) => ms / MIN)).toEqual([60, 120, 240, 360, 360]);
    expect(h.consecutive).toBe(5);
  });

  it('avoids only the values the harmful downsize lowered, request and limit of a resource together', () => {
    const from = loweredOnly(
      { c: { requests: { cpu: 400, memory: 400 }, limits: { memory: 800 } } },
      { c: { requests: { cpu: 400, memory: 100 }, limits: { memory: 200 } } },
    );
    expect(from).toEqual({ c: { requests: { memory: 100 }, limits: { memory: 200 } } });
    const f = { at: 0, until: 1, reason: 'OOMKilled' as const, size: from };
    expect(
      avoidRevertedFrom({ c: { requests: { cpu: 300, memory: 100 }, limits: { memory: 300 } } }, f),
    ).toEqual({
      c: { requests: { cpu: 300 } },
    });
    expect(avoidRevertedFrom({ c: { requests: { memory: 90 } } }, f)).toBeUndefined();
    expect(avoidRevertedFrom({ c: { requests: { memory: 120 } } }, f)).toEqual({
      c: { requests: { memory: 120 } },
    });
  });
});

describe('the canary gate', () => {
  const items = (n: number) =>
    Array.from({ length: n }, (_, k) => ({ node: `n${k}`, downsize: true, desired: {} }));
  const policy = { ...DEFAULT_ROLLOUT, soakMs: 30 * MIN };

  it('takes the share of the pods, at least one, and the same canaries for the same nodes', () => {
    expect([canaryCount(0.1, 5), canaryCount(0.1, 10), canaryCount(0.1, 11), canaryCount(0, 7)]).toEqual([
      1, 1, 2, 7,
    ]);
    const a = gate(items(20), { rollout: emptyRollout(), policy, pods: 20, now: 0, folded: false });
    const b = gate([...items(20)].reverse(), {
      rollout: emptyRollout(),
      policy,
      pods: 20,
      now: 0,
      folded: false,
    });
    expect(a.allowed.map((i) => i.node)).toEqual(a.wave?.canaries);
    expect(a.wave?.canaries).toEqual(b.wave?.canaries);
    expect(a.wave?.canaries).toHaveLength(2);
  });

  it('lets increases through while downsizes soak or are held', () => {
    const up = { node: 'up', downsize: false, desired: {} };
    const rollout = {
      ...emptyRollout(),
      hold: { until: 10, consecutive: 1, node: 'x', reason: 'NotReady' as const, at: 0 },
    };
    const g = gate([up, ...items(3)], { rollout, policy, pods: 4, now: 5, folded: false });
    expect(g.allowed).toEqual([up]);
    expect(g.held.map((h) => h.why)).toEqual(['hold', 'hold', 'hold']);
  });

  it('starts a new wave for a fold once the last one was released', () => {
    const rollout = { ...emptyRollout(), wave: { startedAt: 0, canaries: ['n1'], releasedAt: 40 * MIN } };
    const g = gate(items(20), { rollout, policy, pods: 20, now: 60 * MIN, folded: true });
    expect(g.paths).toEqual(['wave-ended', 'canary-sent']);
    expect(g.wave?.startedAt).toBe(60 * MIN);
  });
});

describe('the rollout step before the guards judge', () => {
  const pod = (node: string) =>
    runningPodView({
      node,
      containers: [{ name: 'c', reqCpu: 400, reqMem: 400 * 2 ** 20, hasActual: false }],
    });
  const decision = (node: string, cpu: number) =>
    ({ node, pod: pod(node), desired: { c: { requests: { cpu } } } }) as unknown as UpdateDecision;
  const step = (record: RolloutRecord, now: number, folded = false) =>
    new RolloutStep({ now, settings: DEFAULT_SETTINGS, ctx: {} } as unknown as CycleRun, {
      target: { rollout: DEFAULT_ROLLOUT } as NodeScopeTarget,
      pods: new Map([['n1', pod('n1')]]),
      stored: record,
      folded,
    });
  const soaking = { ...emptyRollout(), wave: { startedAt: 0, canaries: ['n1'] } };

  it('holds, without judging, a non-canary downsize of a wave still soaking, and nothing else', () => {
    const s = step(soaking, 10 * MIN);
    expect(s.heldRegardless(decision('n2', 100))).toBe(true);
    expect(s.heldRegardless(decision('n1', 100))).toBe(false); // the canary: judged, then gated
    expect(s.heldRegardless(decision('n2', 800))).toBe(false); // an increase never waits
    expect(s.choosingCanaries()).toBe(false);
    // Soaked: the release is the gate's, after the guards judged every downsize.
    expect(step(soaking, 30 * MIN).heldRegardless(decision('n2', 100))).toBe(false);
  });

  it('chooses canaries (every downsize judged first) only without a wave, or at a fold after a released one', () => {
    expect(step(emptyRollout(), 0).choosingCanaries()).toBe(true);
    const released = { ...soaking, wave: { ...soaking.wave, releasedAt: 30 * MIN } };
    expect(step(released, 40 * MIN).choosingCanaries()).toBe(false);
    expect(step(released, 40 * MIN, true).choosingCanaries()).toBe(true);
    const held = {
      ...emptyRollout(),
      hold: { until: 60 * MIN, consecutive: 1, node: 'n1', reason: 'OOMKilled' as const, at: 0 },
    };
    expect(step(held, 10 * MIN).choosingCanaries()).toBe(false);
    expect(step(held, 10 * MIN).heldRegardless(decision('n2', 100))).toBe(true);
  });
});
