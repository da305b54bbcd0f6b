/**
 * A property test of KEP-5620's two rules over the simulator's scheduler, kubelets and DaemonSet
 * controller: over 1,000 random cycles of pod arrivals and departures, explicit sizes and policy changes
 * on a node pool,
 *   - no workload pod is ever evicted or preempted, and none is left unschedulable by a balloon inflate
 *     (a pod pending after a cycle would not have fitted with the balloons at their sizes before it);
 *   - no balloon is ever replaced (nothing preempts it);
 *   - each node's effective size reaches the desired size whenever free capacity allows it, and where it
 *     does not, the balloon holds all the free capacity and the reclaim is recorded as blocked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Amounts, amounts, sub } from '../../shared/balloons/amounts.js';
import { BALLOON_LABEL } from '../../shared/balloons/manifests.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import { balloonTarget } from '../../shared/balloons/sizing.js';
import { prng } from '../../shared/kernel/prng.js';
import { parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { type BalloonEnv, startBalloonEnv } from './helpers.js';

const CYCLES = Number(process.env.BALLOON_PROPERTY_CYCLES ?? 1000);
const GI = 2 ** 30;
const NODES = ['pool-a', 'pool-b', 'pool-c', 'pool-d'];

interface PodFacts {
  name: string;
  node: string;
  phase: string;
  balloon: boolean;
  uid: string;
  requests: Amounts;
  disrupted: boolean;
}

/** The cluster's pods as the simulator holds them (the oracle reads its state; the cycle goes over HTTP). */
function podsNow(env: BalloonEnv): PodFacts[] {
  const pods = env.sim.state(env.cluster).store.collection('pods');
  return [...pods.keys()].map((k) => {
    const p = pods.get(k) as {
      metadata: { name: string; uid: string; labels?: Record<string, string> };
      spec?: { nodeName?: string; containers?: { resources?: { requests?: Record<string, string> } }[] };
      status?: { phase?: string; conditions?: { type: string }[] };
    };
    const sum = (r: 'cpu' | 'memory') =>
      (p.spec?.containers ?? []).reduce((a, c) => {
        const v = c.resources?.requests?.[r];
        return a + (v === undefined ? 0 : r === 'cpu' ? parseCpu(v) : parseMemory(v));
      }, 0);
    return {
      name: p.metadata.name,
      node: p.spec?.nodeName ?? '',
      phase: p.status?.phase ?? '',
      balloon: p.metadata.labels?.[BALLOON_LABEL] === 'true',
      uid: p.metadata.uid,
      requests: amounts(sum('cpu'), sum('memory')),
      disrupted: (p.status?.conditions ?? []).some((c) => c.type === 'DisruptionTarget'),
    };
  });
}

describe('balloons, property: never evict, never preempt, reach the desired size when there is room', () => {
  let env: BalloonEnv;
  beforeAll(async () => {
    env = await startBalloonEnv({ nodes: 0 });
    for (const name of NODES)
      env.sim.cluster(env.cluster).addNode({
        name,
        cpu: '8',
        memory: '32Gi',
        reserved: { cpu: '100m', memory: '1Gi' },
        labels: { pool: 'p' },
      });
  });
  afterAll(async () => env.stop());

  it(`holds over ${CYCLES} random cycles`, async () => {
    const rnd = prng(20261124);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const alive = new Set<string>();
    const balloonUids = new Map<string, string>();
    let serial = 0;
    const counts = {
      arrivals: 0,
      departures: 0,
      explicit: 0,
      policy: 0,
      blocked: 0,
      reached: 0,
      pendingSeen: 0,
    };
    const setPolicy = async () =>
      env.store.putPolicy(
        env.cluster,
        validatePolicy({
          name: 'pool',
          selector: 'pool=p',
          headroomPercent: Math.floor(rnd() * 40),
          headroomMin: { cpu: '250m', memory: '512Mi' },
          min: { cpu: String(1 + Math.floor(rnd() * 2)), memory: '2Gi' },
          max: { cpu: String(4 + Math.floor(rnd() * 4)), memory: `${16 + Math.floor(rnd() * 15)}Gi` },
          step: { cpu: '250m', memory: '512Mi' },
          shrinkCooldownMinutes: pick([0, 0, 2]),
        }),
      );
    await setPolicy();

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      // The world moves: pods arrive (the scheduler binds them where they fit) and leave.
      const events = 1 + Math.floor(rnd() * 3);
      for (let e = 0; e < events; e++) {
        const r = rnd();
        if ((r < 0.45 || alive.size === 0) && alive.size < 48) {
          const name = `w-${serial++}`;
          await env.core.createNamespacedPod({
            namespace: 'default',
            body: {
              metadata: { name },
              spec: {
                nodeSelector: { pool: 'p' },
                containers: [
                  {
                    name: 'app',
                    image: 'pause',
                    resources: {
                      requests: {
                        cpu: `${100 * (1 + Math.floor(rnd() * 20))}m`,
                        memory: `${256 * (1 + Math.floor(rnd() * 16))}Mi`,
                      },
                    },
                  },
                ],
              },
            },
          });
          alive.add(name);
          counts.arrivals++;
        } else if (r < 0.85) {
          // Pods that never found room leave first (a client gives up), so the queue stays short.
          const stuck = [...alive].filter(
            (n) => !env.sim.state(env.cluster).store.get('pods', `default/${n}`)?.spec?.nodeName,
          );
          const name = stuck.length > 0 && rnd() < 0.5 ? pick(stuck) : pick([...alive]);
          await env.core.deleteNamespacedPod({ name, namespace: 'default' });
          alive.delete(name);
          counts.departures++;
        } else if (r < 0.95) {
          const node = pick(NODES);
          if (rnd() < 0.3) await env.store.deleteRequest(env.cluster, node);
          else
            await env.store.putRequest(env.cluster, {
              node,
              size: amounts(500 * (1 + Math.floor(rnd() * 15)), GI * (1 + Math.floor(rnd() * 30))),
              requestedAt: cycle,
              via: 'test',
            });
          counts.explicit++;
        } else {
          await setPolicy();
          counts.policy++;
        }
      }
      const before = podsNow(env);
      const balloonBefore = new Map(before.filter((p) => p.balloon).map((p) => [p.node, p.requests]));
      const result = await env.cycle();
      const after = podsNow(env);

      // 1. No workload pod evicted or preempted.
      const names = new Set(after.map((p) => p.name));
      for (const name of alive) expect(names.has(name), `cycle ${cycle}: ${name} disappeared`).toBe(true);
      for (const p of after) expect(p.disrupted, `cycle ${cycle}: ${p.name} disrupted`).toBe(false);
      const wasRunning = new Set(before.filter((p) => p.phase === 'Running').map((p) => p.name));
      for (const p of after)
        if (wasRunning.has(p.name)) expect(p.phase, `cycle ${cycle}: ${p.name}`).toBe('Running');

      // 2. No balloon replaced.
      for (const b of after.filter((p) => p.balloon && p.node)) {
        const seen = balloonUids.get(b.node);
        if (seen) expect(b.uid, `cycle ${cycle}: balloon on ${b.node} replaced`).toBe(seen);
        else balloonUids.set(b.node, b.uid);
      }

      // 3. A pending pod would not have fitted with the balloons as they were before the cycle.
      const allocatable = new Map(result.decisions.map((d) => [d.node, d.state.allocatable]));
      for (const p of after.filter((x) => !x.balloon && x.phase === 'Pending' && !x.node)) {
        counts.pendingSeen++;
        for (const [node, alloc] of allocatable) {
          const others = after.filter(
            (x) => x.node === node && !x.balloon && x.phase !== 'Succeeded' && x.phase !== 'Failed',
          );
          const used = others.reduce(
            (a, x) => amounts(a.cpu + x.requests.cpu, a.memory + x.requests.memory),
            balloonBefore.get(node) ?? amounts(0, 0),
          );
          const fits =
            used.cpu + p.requests.cpu <= alloc.cpu && used.memory + p.requests.memory <= alloc.memory;
          expect(fits, `cycle ${cycle}: ${p.name} pending though it fitted ${node} before the cycle`).toBe(
            false,
          );
        }
      }

      // 4. The desired size is reached where free capacity allows; otherwise all free capacity is taken.
      for (const d of result.decisions) {
        if (!d.desired || !d.balloon) continue;
        const balloon = after.find((p) => p.balloon && p.node === d.node)!;
        const target = balloonTarget(d.state.allocatable, d.desired.size);
        const others = after
          .filter((x) => x.node === d.node && !x.balloon)
          .reduce((a, x) => amounts(a.cpu + x.requests.cpu, a.memory + x.requests.memory), amounts(0, 0));
        const free = sub(d.state.allocatable, others);
        for (const r of ['cpu', 'memory'] as const) {
          if (balloon.requests[r] === target[r]) continue;
          // short of the target: only because pods hold the rest
          expect(balloon.requests[r], `cycle ${cycle}: ${d.node} ${r}`).toBeLessThan(target[r]);
          expect(
            balloon.requests[r],
            `cycle ${cycle}: ${d.node} ${r} left free capacity unclaimed`,
          ).toBeGreaterThanOrEqual(free[r]);
          expect(
            d.state.blocked,
            `cycle ${cycle}: ${d.node} short of target without a blocked reclaim`,
          ).toBeDefined();
        }
        if (d.state.blocked) counts.blocked++;
        else counts.reached++;
      }
    }
    // The run exercised every path it claims to.
    expect(counts.arrivals).toBeGreaterThan(CYCLES / 2);
    expect(counts.departures).toBeGreaterThan(CYCLES / 3);
    expect(counts.explicit).toBeGreaterThan(CYCLES / 20);
    expect(counts.blocked).toBeGreaterThan(0);
    expect(counts.reached).toBeGreaterThan(0);
    expect(counts.pendingSeen).toBeGreaterThan(0);
  }, 600_000);
});
