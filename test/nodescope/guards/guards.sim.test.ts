/**
 * The guards on node scope's resize path over the simulator: a resize a LimitRange or a ResourceQuota
 * would refuse is held and said (never sent), nothing is sent outside the resize window while the
 * status goes on, and the caps shorten each step; every outcome lands in the node's history.
 * (The simulator has no LimitRanger or quota admission: it would take what the guards hold, so each
 * test fails without its guard. The real kube-apiserver judges the rules in guards.real.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CycleResult } from '../../../shared/nodescope/cycle.js';
import { CANARY_ANNOTATION } from '../../../shared/nodescope/rollout-policy.js';
import {
  agentDaemonSet,
  cycle,
  type Env,
  HOUR,
  MINUTE,
  START,
  startEnv,
  VPA_RESOURCE,
  vpaObject,
} from '../helpers.js';

const agent = agentDaemonSet({
  containers: [
    {
      name: 'collector',
      requests: { cpu: '100m', memory: '256Mi' },
      limits: { cpu: '200m', memory: '512Mi' },
    },
  ],
  load: { cpu: 300, memory: '200Mi', noise: 0.01 },
});
const clusters = ['limits', 'quota', 'caps', 'window', 'typo', 'window-canary'];

// biome-ignore lint/suspicious/noExplicitAny: the simulator's objects as stored
type Json = Record<string, any>;
const pods = (env: Env, c: string): Json[] => env.sim.cluster(c).store.list('pods', 'monitoring') as Json[];
const cpuRequests = (env: Env, c: string) =>
  pods(env, c).map((p) => p.spec.containers[0].resources.requests.cpu);
const sum = (rs: readonly CycleResult[], k: 'requested' | 'guarded' | 'outsideWindow' | 'capped') =>
  rs.flatMap((r) => r.daemonSets).reduce((n, d) => n + (d.resizes[k] ?? 0), 0);
const millis = (q: string) => (q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000);
const MI = 2 ** 20;

function withAnnotations(annotations: Record<string, string>) {
  const vpa = vpaObject({ mode: 'InPlace' }) as Json;
  vpa.metadata.annotations = { ...vpa.metadata.annotations, ...annotations };
  return vpa;
}

/**
 * A guard judged alone: no canary (every pod's resize at once, as rollout-policy.ts reads "off"), so
 * what a case counts is the guard's doing. The limits case keeps the default canary: the guards judge
 * before the canary picks, so a resize they hold never becomes a canary (canary.sim.test.ts has the
 * canary itself).
 */
const NO_CANARY = { [CANARY_ANNOTATION]: 'off' };

/** The quota controller's part, which the simulator lacks: status.used recounted from the pods. */
function recountQuota(env: Env, c: string, hard: string): void {
  const used = pods(env, c).reduce((n, p) => n + millis(p.spec.containers[0].resources.requests.cpu), 0);
  env.sim.cluster(c).store.put('resourcequotas', {
    metadata: { name: 'rq', namespace: 'monitoring' },
    spec: { hard: { 'requests.cpu': hard } },
    status: { hard: { 'requests.cpu': hard }, used: { 'requests.cpu': `${used}m` } },
  });
}

describe('node scope’s resize guards', () => {
  let env: Env;
  /** The pods' requests as created, and room for one resize of about 150m more. */
  const quotaHard = () => `${100 * pods(env, 'quota').length + 250}m`;
  const untouched = (c: string) => pods(env, c).map(() => '100m');
  beforeAll(async () => {
    env = await startEnv(
      clusters.map((name, i) => ({ name, nodes: 3, seed: 60 + i, vpaCrd: true, daemonSets: [agent] })),
    );
    const store = (c: string) => env.sim.cluster(c).store;
    store('limits').put('limitranges', {
      metadata: { name: 'lr', namespace: 'monitoring' },
      spec: { limits: [{ type: 'Container', max: { cpu: '250m' } }] },
    });
    store('limits').put(VPA_RESOURCE, withAnnotations({}));
    store('quota').put(VPA_RESOURCE, withAnnotations(NO_CANARY));
    recountQuota(env, 'quota', quotaHard());
    store('caps').put(
      VPA_RESOURCE,
      withAnnotations({
        ...NO_CANARY,
        'fleetscope.io/max-increase': '50%',
        'fleetscope.io/max-decrease': '1%',
      }),
    );
    store('typo').put(
      VPA_RESOURCE,
      withAnnotations({ ...NO_CANARY, 'fleetscope.io/resize-window': 'Mon-Fro 09:00-17:00' }),
    );
    store('window').put(
      VPA_RESOURCE,
      withAnnotations({ ...NO_CANARY, 'fleetscope.io/resize-window': 'Mon-Fri 09:00-17:00 UTC' }),
    );
    store('window-canary').put(
      VPA_RESOURCE,
      withAnnotations({ 'fleetscope.io/resize-window': 'Mon-Fri 10:00-17:00 UTC' }),
    );
  }, 60_000);
  afterAll(async () => {
    await env?.stop();
  });

  it('holds a resize a LimitRange would refuse, says why once, and records it', async () => {
    const results: CycleResult[] = [];
    for (let i = 0; i < 3; i++) results.push(await cycle(env, 'limits', 5 * MINUTE));
    expect(sum(results, 'requested')).toBe(0);
    expect(sum(results, 'guarded')).toBeGreaterThanOrEqual(3);
    expect(cpuRequests(env, 'limits')).toEqual(untouched('limits'));
    // Under the default canary: judged by the guards first, nothing was let through to pick a canary from.
    const rollouts = results.flatMap((r) => r.daemonSets.map((d) => d.rollout));
    expect(rollouts.flatMap((o) => o?.paths ?? [])).not.toContain('canary-sent');
    expect(rollouts.reduce((n, o) => n + (o?.heldForCanary ?? 0) + (o?.heldForSoak ?? 0), 0)).toBe(0);
    const events = (env.sim.cluster('limits').store.list('events', 'monitoring') as Json[]).filter(
      (e) => e.reason === 'ResizeGuarded',
    );
    expect(events).toHaveLength(1);
    const n = pods(env, 'limits').length;
    expect(events[0]?.message).toMatch(
      new RegExp(
        `^${n} pods held by LimitRange lr \\(container "collector": cpu limit \\d+m above the maximum 250m\\)$`,
      ),
    );
    const apply = await env.store.getApply('limits', 'monitoring/agent');
    expect(apply.guards?.held).toEqual([expect.objectContaining({ by: 'LimitRange lr', pods: n })]);
    const history = await env.store.listHistory('limits', 'monitoring/agent');
    expect(history).toHaveLength(n);
    for (const h of history) {
      // Held every cycle, said once per node.
      expect(h.entries.map((e) => [e.outcome, e.by])).toEqual([['guarded', 'LimitRange lr']]);
      expect(h.entries[0]?.changes?.[0]?.before).toEqual({
        requests: { cpu: 100, memory: 256 * MI },
        limits: { cpu: 200, memory: 512 * MI },
      });
    }
  });

  it('sends resizes while the quota holds them, adding up the cycle’s own, and holds the rest', async () => {
    const results: CycleResult[] = [];
    for (let i = 0; i < 6; i++) {
      results.push(await cycle(env, 'quota', 5 * MINUTE));
      // Admission charges a quota as it admits: recounted before the next cycle reads it.
      recountQuota(env, 'quota', quotaHard());
      const used = cpuRequests(env, 'quota').reduce((n, q) => n + millis(q), 0);
      expect(used).toBeLessThanOrEqual(millis(quotaHard()));
    }
    // Room for one resize: the first is sent, the others held, in that cycle (the ledger) and after.
    expect(sum(results, 'requested')).toBe(1);
    expect(sum(results.slice(0, 1), 'guarded')).toBe(pods(env, 'quota').length - 1);
    expect(cpuRequests(env, 'quota').filter((q) => q === '100m')).toHaveLength(pods(env, 'quota').length - 1);
    const history = (await env.store.listHistory('quota', 'monitoring/agent')).flatMap((h) => h.entries);
    expect(history.some((e) => e.outcome === 'guarded' && e.by === 'ResourceQuota rq')).toBe(true);
    expect(history.some((e) => e.outcome === 'requested')).toBe(true);
    expect(history.some((e) => e.outcome === 'actuated')).toBe(true);
  });

  it('shortens each step to the caps, asymmetrically, and says so in the history', async () => {
    const results: CycleResult[] = [];
    for (let i = 0; i < 3 && sum(results, 'requested') === 0; i++)
      results.push(await cycle(env, 'caps', 5 * MINUTE));
    const n = pods(env, 'caps').length;
    expect(sum(results, 'requested')).toBe(n);
    expect(sum(results, 'capped')).toBe(n);
    for (const p of pods(env, 'caps')) {
      const r = p.spec.containers[0].resources;
      expect(r.requests.cpu).toBe('150m'); // +50% of 100m, not the ~250m recommended
      expect(r.limits.cpu).toBe('300m');
    }
    const history = (await env.store.listHistory('caps', 'monitoring/agent')).flatMap((h) => h.entries);
    const sent = history.filter((e) => e.outcome === 'requested');
    expect(sent).toHaveLength(n);
    for (const e of sent) {
      expect(e.capped).toEqual([
        'container "collector" cpu request',
        'container "collector" memory request',
        'container "collector" cpu limit',
        'container "collector" memory limit',
      ]);
      // 1% off at most, where about 2% was recommended.
      expect(e.changes?.[0]?.after).toEqual({
        requests: { cpu: 150, memory: Math.ceil(256 * MI * 0.99) },
        limits: { cpu: 300, memory: Math.ceil(512 * MI * 0.99) },
      });
    }
  });

  it('holds every resize of a VPA whose window does not parse, saying what is wrong; recommendations go on', async () => {
    const results: CycleResult[] = [];
    for (let i = 0; i < 2; i++) results.push(await cycle(env, 'typo', 5 * MINUTE));
    expect(sum(results, 'requested')).toBe(0);
    expect(cpuRequests(env, 'typo')).toEqual(untouched('typo'));
    expect(results.some((r) => r.daemonSets.some((d) => d.statusPatched))).toBe(true);
    const said =
      'resizes held: annotation fleetscope.io/resize-window: "Mon-Fro 09:00-17:00": "Fro" is not a day (use Mon Tue Wed Thu Fri Sat Sun)';
    expect((await env.store.getApply('typo', 'monitoring/agent')).guards?.closed).toBe(said);
    const events = env.sim.cluster('typo').store.list('events', 'monitoring') as Json[];
    expect(events.filter((e) => e.reason === 'ResizeGuarded').map((e) => e.message)).toEqual([said]);
  });

  it('sends nothing outside the resize window, on the cluster’s clock, while the status goes on', async () => {
    const results: CycleResult[] = [];
    // The clusters' clock started on Monday 00:00 UTC; the tests before moved it less than an hour.
    expect(env.sim.clock.now() - START).toBeLessThan(2 * HOUR);
    for (let i = 0; i < 3; i++) results.push(await cycle(env, 'window', 5 * MINUTE));
    expect(sum(results, 'requested')).toBe(0);
    expect(sum(results, 'outsideWindow')).toBeGreaterThan(0);
    expect(cpuRequests(env, 'window')).toEqual(untouched('window'));
    expect(results.some((r) => r.daemonSets.some((d) => d.statusPatched))).toBe(true);
    const apply = await env.store.getApply('window', 'monitoring/agent');
    expect(apply.guards?.closed).toMatch(
      /^outside the resize window "Mon-Fri 09:00-17:00 UTC" at 2026-11-02T0\d:\d\dZ \(the cluster's time\); it opens next at 2026-11-02T09:00Z$/,
    );
    env.sim.clock.advance(START + 9 * HOUR - env.sim.clock.now());
    const open = await cycle(env, 'window', 0);
    expect(sum([open], 'requested')).toBe(pods(env, 'window').length);
    expect((await env.store.getApply('window', 'monitoring/agent')).guards).toBeUndefined();
  });

  it('starts no canary wave while the window is closed; at its opening the canary goes first', async () => {
    // After the case before: Monday 09:00 UTC, an hour before this VPA's window opens.
    const closed: CycleResult[] = [];
    for (let i = 0; i < 2; i++) closed.push(await cycle(env, 'window-canary', 5 * MINUTE));
    expect(sum(closed, 'requested')).toBe(0);
    expect(sum(closed, 'outsideWindow')).toBeGreaterThan(0);
    expect((await env.store.getApply('window-canary', 'monitoring/agent')).rollout?.wave).toBeUndefined();
    env.sim.clock.advance(START + 10 * HOUR - env.sim.clock.now());
    const open = await cycle(env, 'window-canary', 0);
    const o = open.daemonSets.find((d) => d.name === 'agent')?.rollout;
    // The default canary, 10% of 3 pods: one is sent, the soak (30m on the cycle's clock) holds the others.
    expect(o?.paths).toContain('canary-sent');
    expect(sum([open], 'requested')).toBe(1);
    expect(o?.heldForCanary).toBe(pods(env, 'window-canary').length - 1);
    expect(o?.wave?.startedAt).toBe(START + 10 * HOUR);
  });
});
