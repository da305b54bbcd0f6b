/** Each soak invariant's judge, on a broken state: a check that cannot fail proves nothing. */
import { describe, expect, it } from 'vitest';
import type { DeadLetter } from '../../local/invoker.js';
import type { StoredIdentity } from '../../shared/claims/store.js';
import type { FeatureRecord } from '../../shared/features/model.js';
import { drawFault, FAULT_KINDS } from '../../soak/faults.js';
import { judgeBalloonFit, judgePreemptions, resizeDirection } from '../../soak/invariants/balloons.js';
import { judgeGuards, judgeUniqueIds } from '../../soak/invariants/claims.js';
import { judgeRemovals } from '../../soak/invariants/evictions.js';
import {
  judgeEpochUses,
  judgeMirror,
  judgePaused,
  judgeStepsOnce,
  judgeTransitions,
} from '../../soak/invariants/features.js';
import { judgeHistories } from '../../soak/invariants/history.js';
import { idCommands, judgeAdopted, judgeInherited, judgeOneId } from '../../soak/invariants/identity.js';
import { judgeDeadLetters, judgeSecrets } from '../../soak/invariants/platform.js';
import { judgeReplay } from '../../soak/invariants/replay.js';
import { judgeResends, judgeStuck, podResizeView } from '../../soak/invariants/resizes.js';
import { judgeRevertedFrom, loweredValues, sizesOf } from '../../soak/invariants/reverted-from.js';
import { judgeTouches } from '../../soak/invariants/touches.js';
import { Ledger } from '../../soak/ledger.js';
import type {
  Adopted,
  BalloonSample,
  OomFault,
  Rebuilt,
  Reregistered,
  ResizeRequest,
  Text,
} from '../../soak/records.js';
import { verdict } from '../../soak/report.js';

const identity = (cluster: string, clusterId: string, clusterSet?: string): StoredIdentity => ({
  cluster,
  clusterId,
  idSource: 'operator',
  clusterSet,
  version: 1,
  updatedAt: '2026-01-01T00:00:00Z',
});
const guard = (cluster: string, clusterSet: string, clusterId: string, token = 't') => ({
  cluster,
  clusterSet,
  clusterId,
  token,
  acquiredAt: '2026-01-01T00:00:00Z',
});

describe('soak invariants fail on broken states', () => {
  it('history: a duplicated and a lost sample are both caught; a failed cycle excuses one loss', () => {
    const ledger = new Ledger();
    for (const cycle of [1, 2, 3]) ledger.attempt('nodescope', 'c', cycle);
    for (const cycle of [1, 2]) ledger.complete('nodescope', 'c', cycle);
    const ok = judgeHistories([{ cluster: 'c', scope: 'ds n1 app', samples: 2 }], ledger);
    expect(ok.violations).toEqual([]);
    const broken = judgeHistories(
      [
        { cluster: 'c', scope: 'ds n1 app', samples: 4 },
        { cluster: 'c', scope: 'ds n2 app', samples: 1 },
      ],
      ledger,
    );
    expect(broken.violations).toEqual([
      'c ds n1 app: 4 samples from 3 cycles (duplicated)',
      'c ds n2 app: 1 samples but 2 clean cycles (lost)',
    ]);
  });

  it('replay: a stored recommendation no state explains', () => {
    const r = judgeReplay([
      { what: 'c ds n1', stored: { cpu: 100 }, replayed: { cpu: 100 } },
      { what: 'c ds n2', stored: { cpu: 120 }, replayed: { cpu: 100 } },
    ]);
    expect(r.checked).toBe(2);
    expect(r.violations).toEqual(['c ds n2: stored {"cpu":120} != replayed {"cpu":100}']);
  });

  it('claims: a guard without its identity, and two members of one ClusterSet with one ID', () => {
    const ids = [identity('a', 'x', 'blue'), identity('b', 'x', 'blue'), identity('c', 'y')];
    expect(judgeGuards(ids, [guard('a', 'blue', 'x')]).violations).toEqual([]);
    expect(judgeGuards(ids, [guard('c', 'blue', 'y')]).violations).toEqual([
      'guard blue/y held by c, whose identity does not explain it',
    ]);
    const pending = {
      ...identity('c', 'y'),
      pending: { op: 'join' as const, set: 'blue', token: 'k', at: '' },
    };
    expect(judgeGuards([pending], [guard('c', 'blue', 'y', 'k')]).violations).toEqual([]);
    expect(judgeUniqueIds(ids).violations).toEqual(['ClusterSet blue: a and b both hold ID x']);
  });

  it('resizes: one sent twice (no change) and one stuck without a record', () => {
    const req = (before: string, after: string, status = 200): ResizeRequest => ({
      cluster: 'c',
      namespace: 'm',
      pod: 'p',
      podUid: 'u',
      status,
      before,
      after,
    });
    expect(judgeResends([req('a', 'b'), req('b', 'b', 409)]).violations).toEqual([]);
    expect(judgeResends([req('a', 'b'), req('b', 'b')]).violations).toHaveLength(1);

    const pod = (conditions: unknown[], running = '100m') =>
      podResizeView('c', {
        metadata: {
          namespace: 'm',
          name: 'p',
          uid: 'u',
          ownerReferences: [{ kind: 'DaemonSet', name: 'ds' }],
        },
        spec: { containers: [{ name: 'app', resources: { requests: { cpu: '200m' } } }] },
        status: {
          conditions,
          containerStatuses: [{ name: 'app', resources: { requests: { cpu: running } } }],
        },
      });
    const deferred = pod([{ type: 'PodResizePending', status: 'True', reason: 'Deferred' }]);
    expect(judgeStuck([deferred], new Set(['u'])).violations).toEqual([]);
    expect(judgeStuck([deferred], new Set()).violations).toHaveLength(1);
    expect(judgeStuck([pod([])], new Set(['u'])).violations).toHaveLength(1);
    expect(judgeStuck([pod([], '200m')], new Set()).violations).toEqual([]);
  });

  it('reverted from: a node resized or left back at (or below) a size it was reverted from is caught', () => {
    const size = (mem: string, lim: string, cpu = '100m') =>
      JSON.stringify([['app', { requests: { cpu, memory: mem }, limits: { memory: lim } }]]);
    const before = size('256Mi', '1Gi');
    const after = size('128Mi', '512Mi'); // the downsize: memory request and limit lowered, cpu kept
    expect(loweredValues(sizesOf(before), sizesOf(after)).map((l) => l.field)).toEqual([
      'memRequest',
      'memLimit',
    ]);
    const fault: OomFault = {
      cluster: 'c',
      node: 'n1',
      pod: 'm/p',
      podUid: 'u',
      container: 'app',
      cycle: 2,
      killedAt: 1_000,
      downsizedAt: 500,
      before,
      after,
      revertCycle: 2,
      revertedAt: 1_000,
    };
    const req = (at: number, to: string, node = 'n1', status = 200): ResizeRequest => ({
      cluster: 'c',
      namespace: 'm',
      pod: 'p',
      podUid: 'u',
      node,
      at,
      status,
      before: before,
      after: to,
    });
    const end = (resources: string, podUid = 'u') => ({ cluster: 'c', node: 'n1', podUid, resources });
    const seen = { faults: [fault], heldOnBackoff: 3, forgotten: [] };
    // Reverted, then up and down again but never to the reverted-from values: holds.
    const ok = judgeRevertedFrom({
      ...seen,
      requests: [req(500, after), req(1_000, before), req(9_000, size('192Mi', '768Mi', '50m'))],
      endPods: [end(size('192Mi', '768Mi', '50m'))],
    });
    expect(ok.violations).toEqual([]);
    expect(ok.checked).toBe(1);
    // Sent back down to the reverted-from request (refused requests and other nodes do not count).
    const resent = judgeRevertedFrom({
      ...seen,
      requests: [
        req(1_000, before),
        req(9_000, size('128Mi', '768Mi')),
        req(9_000, after, 'n1', 409),
        req(9_000, after, 'n2'),
      ],
      endPods: [end(before)],
    });
    expect(resent.violations).toEqual([
      'c n1 (m/p): resized back to a size it was reverted from (app memRequest 134217728)',
    ]);
    // After the cluster's registration changed (registered again: it inherits nothing), not judged.
    const forgotten = [{ cluster: 'c', at: 5_000 }];
    const late = { requests: [req(1_000, before), req(9_000, after)], endPods: [end(after)] };
    expect(judgeRevertedFrom({ ...seen, ...late, forgotten }).violations).toEqual([]);
    expect(
      judgeRevertedFrom({ ...seen, ...late, forgotten: [{ cluster: 'other', at: 5_000 }] }).violations,
    ).toHaveLength(2);
    // Left at it at the end; a pod recreated since runs its template and is not fleetscope's doing.
    expect(
      judgeRevertedFrom({ ...seen, requests: [], endPods: [end(size('100Mi', '1Gi'))] }).violations,
    ).toEqual(['c n1 (m/p): left at a size it was reverted from (app memRequest 134217728)']);
    expect(judgeRevertedFrom({ ...seen, requests: [], endPods: [end(after, 'u2')] }).violations).toEqual([]);
    // An injected kill never reverted, while the pod is still there.
    const never = { ...fault, revertCycle: undefined, revertedAt: undefined };
    expect(
      judgeRevertedFrom({
        faults: [never, fault],
        heldOnBackoff: 1,
        forgotten: [],
        requests: [],
        endPods: [end(after)],
      }).violations,
    ).toContain('c n1 (m/p): OOM-killed after its downsize (cycle 2), never reverted');
    // Each dangerous path must have been hit: a kill, a revert after one, a hold blocking a downsize.
    const none = { requests: [], endPods: [], forgotten: [] };
    expect(judgeRevertedFrom({ ...none, faults: [], heldOnBackoff: 0 }).violations).toEqual([
      'no OOM kill was injected after a downsize (the fault was not hit)',
    ]);
    expect(judgeRevertedFrom({ ...none, faults: [never], heldOnBackoff: 0 }).violations).toEqual([
      'no revert followed an injected OOM kill',
    ]);
    expect(judgeRevertedFrom({ ...none, faults: [fault], heldOnBackoff: 0 }).violations).toEqual([
      'no downsize was blocked by a back-off hold after a revert (the path was not hit)',
    ]);
  });

  it('dead letters: one whose error the soak did not provoke', () => {
    const dl = (error: string): DeadLetter => ({
      functionId: 'nodescope',
      source: 'rule:x',
      event: {},
      error,
      attempts: 3,
      at: '',
    });
    const r = judgeDeadLetters([
      dl('cluster answered 503'),
      dl('ConditionalCheckFailedException'),
      dl('TypeError: x is undefined'),
    ]);
    expect(r.causes).toEqual({ 'injected fault': 1, 'lost race': 1 });
    expect(r.violations).toEqual(['nodescope (rule:x): TypeError: x is undefined']);
  });

  it('dead letters: a malformed event the soak sent must be one, refused with its field named', () => {
    const poison = (id: string, error: string) => ({
      functionId: 'cycle',
      source: 'rule:x',
      event: { detail: { soakPoison: id } },
      error,
    });
    const named = poison(
      'work-5',
      'invalid ClusterWorkRequested event: detail.requestedAt: Invalid ISO datetime',
    );
    expect(judgeDeadLetters([named], ['work-5'])).toMatchObject({
      causes: { 'malformed event refused': 1 },
      violations: [],
    });
    // Lost (no dead letter), or failed for another reason than its bad fields: both broken.
    expect(judgeDeadLetters([], ['work-5']).violations).toEqual([
      'malformed event work-5 was delivered but is no dead letter (lost, or processed)',
    ]);
    expect(judgeDeadLetters([poison('work-5', 'TypeError: boom')], ['work-5']).violations).toHaveLength(1);
  });

  it('secrets: a canary token, plain or base64, in any text', async () => {
    const canary = 'canary-0123456789abcdef';
    async function* texts(): AsyncIterable<Text> {
      yield { source: 'log:1', text: 'all fine' };
      yield { source: 'log:2', text: `Authorization: Bearer ${canary}` };
      yield { source: 'item', text: JSON.stringify({ v: Buffer.from(canary).toString('base64') }) };
    }
    const r = await judgeSecrets(texts(), [canary]);
    expect(r.checked).toBe(3);
    expect(r.violations).toEqual(['log:2: contains a canary token', 'item: contains a canary token']);
  });

  it('evictions: a pod removed that is not a balloon', () => {
    const removal = (balloon: boolean) => ({
      cluster: 'c',
      pod: 'm/p',
      how: 'eviction' as const,
      status: 201,
      balloon,
    });
    expect(judgeRemovals([removal(true)], 5).violations).toEqual([]);
    expect(judgeRemovals([removal(true), removal(false)], 5).violations).toEqual([
      'c m/p: eviction (HTTP 201) of a pod that is not a balloon',
    ]);
  });

  it('report: a check over nothing says so, never "held"', () => {
    expect(verdict({ checked: 0, violations: [] })).toBe('nothing checked');
    expect(verdict({ checked: 3, violations: [] })).toBe('held');
    expect(verdict({ checked: 0, violations: ['x'] })).toBe('BROKEN');
  });

  it("balloons: one over its node's free capacity, and a deferred inflate left a cycle too long", () => {
    const s = (cycle: number, balloon: number, pending?: string): BalloonSample => ({
      cycle,
      cluster: 'c',
      node: 'n',
      pod: 'kube-system/b',
      balloon: { cpu: balloon, memory: 0 },
      others: { cpu: 1000, memory: 0 },
      allocatable: { cpu: 3000, memory: 1 },
      ...(pending ? { pending } : {}),
    });
    expect(judgeBalloonFit([s(1, 2000), s(2, 1500)]).violations).toEqual([]);
    expect(judgeBalloonFit([s(1, 2500)]).violations).toHaveLength(1);
    // Deferred after the cycle that inflated it is tolerated; still Deferred a cycle later is not.
    expect(judgeBalloonFit([s(1, 2500, 'Deferred'), s(2, 2000)]).violations).toEqual([]);
    expect(judgeBalloonFit([s(1, 2500, 'Deferred'), s(2, 2500, 'Deferred')]).violations).toEqual([]);
    expect(
      judgeBalloonFit([s(1, 2500, 'Deferred'), s(2, 2500, 'Deferred'), s(3, 2500, 'Deferred')]).violations,
    ).toHaveLength(1);
  });

  it('balloons: a running pod preempted; a resize told apart as inflate or deflate', () => {
    const p = (balloon: boolean) => ({ cluster: 'c', pod: 'm/p', balloon, message: 'preempting' });
    expect(judgePreemptions([p(true)], 4).violations).toEqual([]);
    expect(judgePreemptions([p(false)], 4).violations).toEqual(['c m/p: preempted (preempting)']);
    const r = (cpu: string) => JSON.stringify([['balloon', { requests: { cpu, memory: '1Gi' } }]]);
    expect(resizeDirection(r('1'), r('2'))).toBe('grow');
    expect(resizeDirection(r('2'), r('500m'))).toBe('shrink');
    expect(resizeDirection(r('2'), r('2'))).toBeUndefined();
  });

  const record = (over: Partial<FeatureRecord> = {}): FeatureRecord => ({
    cluster: 'c',
    namespace: 'fleetscope-system',
    name: 'balloons',
    default: 'on',
    state: 'On',
    tasks: [],
    history: [],
    version: 3,
    updatedAt: 0,
    ...over,
  });

  it('features: a transition that did not end, a state off its target, a flip not stored', () => {
    const flip = { cycle: 5, cluster: 'c', feature: 'balloons', desired: 'off' as const, changed: true };
    const off = record({ desired: 'off', state: 'Off' });
    expect(judgeTransitions([off], [flip], 20).violations).toEqual([]);
    expect(
      judgeTransitions([record({ desired: 'off', state: 'TurningOff' })], [flip], 20).violations,
    ).toEqual([
      'c fleetscope-system/balloons: still TurningOff after 20 clean minutes, not shown stuck (no task)',
    ]);
    expect(judgeTransitions([record({ desired: 'off' })], [flip], 20).violations).toEqual([
      'c fleetscope-system/balloons: On, but its target is off',
    ]);
    expect(judgeTransitions([record()], [flip], 20).violations).toEqual([
      'c fleetscope-system/balloons: flipped off at cycle 5, but desired is default',
    ]);
  });

  it('features: a transition that ends stuck must be shown so; one that cannot succeed must end stuck', () => {
    const flip = { cycle: 5, cluster: 'c', feature: 'soak/failing', desired: 'on' as const, changed: true };
    const task = {
      spec: { task: 'apply-manifests' as const, manifests: [] },
      title: 'apply Gadget gadget',
      attempts: 4,
      writes: 0,
      lastError: 'the server does not serve Gadget',
    };
    const failing = (stuck: boolean) =>
      record({
        namespace: 'soak',
        name: 'failing',
        desired: 'on',
        state: 'TurningOn',
        tasks: [{ ...task, ...(stuck ? { stuck: { at: 0, reason: 'not done after 3 minutes' } } : {}) }],
      });
    const key = 'c soak/failing';
    const seen = { events: new Set([key]), listed: new Set([key]) };
    const judge = (r: FeatureRecord, shown = seen) =>
      judgeTransitions([r], [flip], 20, shown, ['soak/failing']).violations;
    expect(judge(failing(true))).toEqual([]);
    expect(judge(failing(true), { events: new Set(), listed: new Set([key]) })).toEqual([
      'c soak/failing: stuck (not done after 3 minutes), but no FeatureTransitionChanged stuck event',
    ]);
    expect(judge(failing(true), { events: new Set([key]), listed: new Set() })).toEqual([
      'c soak/failing: stuck (not done after 3 minutes), but features list does not show it stuck',
    ]);
    expect(judge(failing(false))).toEqual([
      'c soak/failing: still TurningOn after 20 clean minutes, not shown stuck (apply Gadget gadget; the server does not serve Gadget)',
      'c soak/failing: its task cannot succeed, yet it is TurningOn and not stuck',
    ]);
    expect(judge(record({ namespace: 'soak', name: 'failing', desired: 'on', state: 'On' }))).toEqual([
      'c soak/failing: its task cannot succeed, yet it is On and not stuck',
    ]);
  });

  it('features: a task done twice, one writing more than once, a delete sent again', () => {
    const spec = {
      namespace: 'fleetscope-system',
      name: 'balloons',
      enable: [],
      disable: [
        { task: 'wait-for-uses' as const },
        {
          task: 'delete-objects' as const,
          apiVersion: 'apps/v1',
          resource: 'daemonsets',
          kind: 'DaemonSet',
          namespace: 'kube-system',
          name: 'b',
        },
      ],
    };
    const specs = new Map([['fleetscope-system/balloons', spec as never]]);
    const del = 'delete DaemonSet kube-system/b';
    const done = (title: string, writes: number) => ({
      title,
      task: 'delete-objects' as const,
      attempts: 1,
      writes,
      doneAt: 1,
    });
    const t = (d: ReturnType<typeof done>[]) => ({
      to: 'Off' as const,
      startedAt: 0,
      endedAt: 1,
      reason: '',
      done: d,
    });
    const ok = record({ state: 'Off', history: [t([done(del, 1)])] });
    const nodes = () => 2;
    const titles = judgeStepsOnce([ok], specs, nodes, []);
    expect(titles.checked).toBe(1);
    expect(titles.violations).toEqual([]);
    expect(
      judgeStepsOnce([record({ history: [t([done(del, 1), done(del, 0)])] })], specs, nodes, []).violations,
    ).toHaveLength(1);
    expect(judgeStepsOnce([record({ history: [t([done(del, 2)])] })], specs, nodes, []).violations).toEqual([
      `c fleetscope-system/balloons: "${del}" made 2 writes, at most 1 once`,
    ]);
    const again = [
      { cluster: 'c', resource: 'daemonsets', name: 'b', status: 200 },
      { cluster: 'c', resource: 'daemonsets', name: 'b', status: 404 },
    ];
    expect(judgeStepsOnce([ok], specs, nodes, again).violations).toHaveLength(1);
  });

  it('features: a transition completed while a use echoing the current epoch reports the old value', () => {
    const completed = {
      to: 'Off' as const,
      startedAt: 0,
      endedAt: 1,
      reason: '',
      outcome: 'completed' as const,
      done: [],
    };
    const off = record({ state: 'Off', usesEpoch: 3, history: [completed] });
    const use = (value: 'on' | 'off', epoch: number) => ({
      component: 'agent',
      value,
      at: 0,
      epoch,
      source: 'cluster' as const,
    });
    // An hour-old time does not matter; the epoch does.
    expect(judgeEpochUses([{ cluster: 'c', record: off, uses: [use('on', 3)] }]).violations).toEqual([
      'c fleetscope-system/balloons: Off, but agent reports on echoing the current epoch 3 (at 1970-01-01T00:00:00.000Z)',
    ]);
    expect(
      judgeEpochUses([{ cluster: 'c', record: off, uses: [use('on', 2), use('off', 3)] }]).violations,
    ).toEqual([]);
    expect(judgeEpochUses([{ cluster: 'c', record: off, uses: [] }]).checked).toBe(1);
  });

  it('features: a Feature object missing or disagreeing with its record', () => {
    const r = record({ desired: 'off', state: 'Off' });
    const object = {
      spec: { default: 'on', desired: 'off' },
      status: { state: 'Off', observedVersion: 3, tasks: [] },
    };
    expect(judgeMirror([{ cluster: 'c', record: r, object }]).violations).toEqual([]);
    expect(judgeMirror([{ cluster: 'c', record: r }]).violations).toHaveLength(1);
    const stale = { ...object, status: { ...object.status, state: 'TurningOff', observedVersion: 2 } };
    expect(judgeMirror([{ cluster: 'c', record: r, object: stale }]).violations).toEqual([
      'c fleetscope-system/balloons: the Feature object disagrees: state TurningOff != Off; observedVersion 2 != 3',
    ]);
  });

  it('faults: each kind drawn in proportion to its weight among those that apply (409 for writes only)', () => {
    const cfg = { faultRate: 0.5 };
    const n = 20_000;
    const count = (method: string) => {
      const c: Record<string, number> = {};
      for (let i = 0; i < n; i++) {
        const k = drawFault(cfg, method, 0, (i + 0.5) / n);
        if (k) c[k.label] = (c[k.label] ?? 0) + 1;
      }
      return c;
    };
    const reads = count('GET');
    expect(reads['409']).toBeUndefined();
    const writes = count('PATCH');
    const total = FAULT_KINDS.reduce((a, k) => a + k.weight, 0);
    for (const k of FAULT_KINDS) expect(writes[k.label]! / n).toBeCloseTo(k.weight / total, 2);
    // No fault above the rate.
    expect(drawFault(cfg, 'GET', 0.6, 0)).toBeUndefined();
  });

  it('paused reconciler: frozen only at waits (or never) fails; frozen at a write names its kind', () => {
    const p = { cluster: 'c', feature: 'f', froze: true, passes: 2, fencedAfter: 0, claimsLost: 1 };
    const atWrite = {
      ...p,
      task: 'apply Gadget g',
      frozeAt: 'apply-manifests',
      fences: { 'wait-for-uses': 3, 'apply-manifests': 1 },
    };
    const held = judgePaused(atWrite);
    expect(held.violations).toEqual([]);
    expect(held.unit).toMatch(/froze at apply-manifests.*wait-for-uses 3, apply-manifests 1/);
    expect(judgePaused({ ...p, froze: false, fences: { 'wait-for-uses': 4 } }).violations[0]).toMatch(
      /never froze at a write step in 2 pass/,
    );
    expect(judgePaused({ ...atWrite, frozeAt: 'wait-for-uses' }).violations).toHaveLength(1);
    expect(judgePaused({ ...atWrite, fencedAfter: 1 }).violations[0]).toMatch(
      /1 write\(s\).*passed their fence/,
    );
  });

  it("touches: a user's object deleted or changed is caught; fleetscope's own marks and resizes are not", () => {
    const t = (object: string, changes: string[], subresource?: string) => ({
      cluster: 'c',
      method: 'PATCH',
      object,
      status: 200,
      changes,
      ...(subresource ? { subresource } : {}),
    });
    const ok = judgeTouches([
      t('pods/kube-system/agent-x', ['spec.containers changed'], 'resize'),
      t('daemonsets.apps/kube-system/agent', ['annotation nodescope.fleetscope.io/history changed']),
      t('configmaps/default/x', []),
    ]);
    expect(ok.violations).toEqual([]);
    expect(ok.checked).toBe(3);
    const broken = judgeTouches([
      { ...t('clusterroles.rbac.authorization.k8s.io/cluster-admin', ['deleted']), method: 'DELETE' },
      t('configmaps/default/user', ['spec.data changed', 'annotation fleetscope.io/x added']),
      t('pods/kube-system/agent-x', ['spec.containers changed']),
    ]);
    expect(broken.violations).toEqual([
      'c DELETE clusterroles.rbac.authorization.k8s.io/cluster-admin (HTTP 200): deleted',
      'c PATCH configmaps/default/user (HTTP 200): spec.data changed',
      'c PATCH pods/kube-system/agent-x (HTTP 200): spec.containers changed',
    ]);
  });

  it('one ID: a flip, a value no operator set, a deletion and a rebuilt cluster re-identified are caught', () => {
    const seen = (cluster: string, cycle: number, value?: string) => ({ cluster, cycle, value });
    const cmd = (cluster: string, cycle: number, value: string | undefined, code = 0) => ({
      args: [
        'claims',
        'set',
        '--cluster',
        cluster,
        '--name',
        'id.k8s.io',
        ...(value ? ['--value', value] : ['--default']),
      ],
      code,
      output: '',
      cycle,
    });
    // An operator's set and its --default: two changes, two commands.
    const commands = idCommands([cmd('a', 4, 'shared'), cmd('a', 8, undefined), cmd('b', 4, 'shared', 1)]);
    expect(commands).toEqual([
      { cluster: 'a', cycle: 4, value: 'shared', ok: true },
      { cluster: 'a', cycle: 8, ok: true },
      { cluster: 'b', cycle: 4, value: 'shared', ok: false },
    ]);
    const ok = [seen('a', 1, 'uid-a'), seen('a', 4, 'shared'), seen('a', 8, 'uid-a'), seen('b', 1, 'uid-b')];
    expect(judgeOneId(ok, commands).violations).toEqual([]);
    // Flipping between two IDs (defect 5), and a value the failed command would have set.
    const flipped = [
      seen('b', 1, 'uid-b'),
      seen('b', 5, 'uid-b2'),
      seen('b', 6, 'uid-b'),
      seen('b', 7, 'shared'),
    ];
    expect(judgeOneId(flipped, commands).violations).toEqual([
      'b: id.k8s.io became uid-b2 at cycle 5, was uid-b; no operator set it',
      'b: id.k8s.io became shared at cycle 7, was uid-b; no operator set it',
      'b: id.k8s.io changed 3 time(s) but an operator set it 0 time(s): it flipped',
    ]);
    expect(judgeOneId([seen('b', 1, 'uid-b'), seen('b', 3)], []).violations[0]).toMatch(/deleted at cycle 3/);
    const again = { code: 1, output: 'refused: ... one cluster keeps one identity ...', args: [] };
    const rebuilt: Rebuilt = {
      cluster: 'b',
      cycle: 3,
      oldUid: 'uid-b',
      newUid: 'uid-b2',
      again,
      againName: 'b-again',
    };
    expect(judgeOneId([seen('b', 1, 'uid-b')], [], rebuilt).violations).toEqual([]);
    expect(
      judgeOneId([seen('b', 1, 'uid-b')], [], { ...rebuilt, again: { ...again, code: 0 } }).violations,
    ).toEqual(['b: registered again as b-again after kube-system was rebuilt']);
    expect(judgeOneId([seen('b', 1, 'uid-b'), seen('b', 4, 'uid-b2')], [], rebuilt).violations).toContain(
      "b: re-identified with its rebuilt kube-system's UID uid-b2",
    );
    // Registered again: a new membership, judged afresh; gone meanwhile is no violation.
    const done = { code: 0, output: '', args: [] };
    const rereg: Reregistered = {
      cluster: 'a',
      killedAt: 5,
      cycle: 6,
      killed: true,
      finish: done,
      register: done,
    };
    const window = [seen('a', 1, 'uid-a'), seen('a', 5), seen('a', 6, 'uid-a2')];
    expect(judgeOneId(window, [], undefined, rereg).violations).toEqual([]);
    expect(judgeOneId([...window, seen('a', 9, 'x')], [], undefined, rereg).violations).toHaveLength(2);
  });

  it('registered again: a desired value no flip made since is inherited', () => {
    const done = { code: 0, output: '', args: [] };
    const rereg: Reregistered = {
      cluster: 'c',
      killedAt: 5,
      cycle: 6,
      killed: true,
      finish: done,
      register: done,
    };
    const off = record({ desired: 'off', state: 'Off' });
    const flip = (cycle: number) => ({
      cycle,
      cluster: 'c',
      feature: 'balloons',
      desired: 'off' as const,
      changed: true,
    });
    expect(judgeInherited([off], [flip(7)], rereg).violations).toEqual([]);
    expect(judgeInherited([off], [flip(2)], rereg).violations).toEqual([
      'c fleetscope-system/balloons: desired off after it was registered again at cycle 6, set by no flip since',
    ]);
    expect(judgeInherited([record({ state: 'On' })], [], rereg).violations).toEqual([]);
  });

  it('adopted away and back: a failed finish, an owner never learnt, a lease or ID left elsewhere', () => {
    const done = { code: 0, output: '', args: [] };
    const run = (by: string) => ({ by, killed: true, kill: { ...done, code: 1 }, finish: done });
    const adopted: Adopted = {
      cluster: 'a',
      cycle: 6,
      idBefore: 'uid-a',
      away: run('local:/second'),
      yieldedTo: 'local:/second',
      back: run('local:/soak'),
    };
    const end = { leaseHolder: 'local:/soak', storedId: 'uid-a', carriedId: 'uid-a' };
    expect(judgeAdopted(adopted, 'local:/soak', end)).toMatchObject({ checked: 1, violations: [] });
    expect(judgeAdopted(undefined, 'local:/soak', {}).checked).toBe(0);
    const failed = { ...done, code: 1, output: 'adoption: refused' };
    expect(
      judgeAdopted(
        { ...adopted, away: { ...adopted.away, finish: failed }, yieldedTo: undefined, back: undefined },
        'local:/soak',
        { ...end, leaseHolder: 'local:/second', ownedElsewhere: 'local:/second', storedId: 'uid-x' },
      ).violations,
    ).toEqual([
      'a: adopting it from a second control plane after the kill failed, exit 1: adoption: refused',
      "a: after a pass with the cluster adopted by local:/second, the soak's registration names no other owner",
      'a: never taken back',
      'a: its owner Lease is held by local:/second at the end, not local:/soak',
      "a: the soak's registration still names local:/second as its owner at the end",
      "a: the soak's control plane stores ID uid-x, the cluster carries uid-a, it carried uid-a before the adoption",
    ]);
  });
});
