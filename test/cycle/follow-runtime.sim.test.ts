/**
 * The follow in the local runtime, as it runs in the cloud: the cycle's second schedule (every minute,
 * leaving the cycle's ticks to it) dispatches ClusterFollowRequested, routed by its own rule to the same function,
 * whose module keeps the lists. A follow where nothing is kept reads nothing (not even the registry);
 * after a cycle it takes the kept lists up and writes nothing, to the cluster or the table.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalScheduler } from '../../local/scheduler.js';
import { allSchedules } from '../../shared/capabilities.js';
import { CYCLE, CYCLE_FOLLOW } from '../../shared/cycle/capability.js';
import { setNodeScopeClock } from '../../shared/nodescope/clock.js';
import { oneTickOf, scheduleMinutes } from '../../shared/platform/catalogue.js';
import { agentDaemonSet, type Env, MINUTE, registerFileCluster, startEnv } from '../nodescope/helpers.js';

describe('the follow in the local runtime', () => {
  let env: Env;
  let dir: string;

  beforeAll(async () => {
    env = await startEnv([{ name: 'ok', nodes: 3, seed: 9, daemonSets: [agentDaemonSet()] }]);
    setNodeScopeClock(() => env.sim.clock.now());
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-follow-'));
    const path = join(dir, 'kubeconfig.yaml');
    await env.sim.writeKubeconfig(path);
    await registerFileCluster(env.runtime, 'ok', path);
  });
  afterAll(async () => {
    setNodeScopeClock();
    await env?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const requestFollow = async () => {
    const [d] = await env.runtime.bus.deliver({
      detailType: 'ClusterFollowRequested',
      detail: { cluster: 'ok', capability: CYCLE, requestedAt: new Date(env.sim.clock.now()).toISOString() },
    });
    return d;
  };
  const table = async () =>
    (await env.runtime.db.send(new ScanCommand({ TableName: env.runtime.table, ConsistentRead: true })))
      .Items;
  /** What `f` returned, the requests the cluster saw, and whether the table changed. */
  const watching = async <T>(f: () => Promise<T>) => {
    const cluster = env.sim.cluster('ok');
    cluster.resetStats();
    const before = await table();
    const out = await f();
    return {
      out,
      kube: cluster.stats().byMethodAndKind,
      tableChanged: JSON.stringify(await table()) !== JSON.stringify(before),
    };
  };

  it('the follow runs every minute but at the cycle ticks; a pass that runs the cycle does not follow', async () => {
    const cycle = allSchedules().find((s) => s.id === CYCLE);
    const follow = allSchedules().find((s) => s.id === CYCLE_FOLLOW);
    expect(follow).toMatchObject({
      everyMinutes: 1,
      target: 'dispatch',
      input: { capability: CYCLE, follow: true },
    });
    expect(scheduleMinutes(cycle!, allSchedules())).toEqual([0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55]);
    const minutes = scheduleMinutes(follow!, allSchedules()) ?? [];
    expect(minutes).toHaveLength(48);
    expect(minutes.some((m) => m % 5 === 0)).toBe(false);
    expect(oneTickOf(allSchedules()).map((s) => s.id)).not.toContain(CYCLE_FOLLOW);
  });

  it('nothing kept: the follow reads nothing; after a cycle it takes the lists up and writes nothing', async () => {
    const cold = await watching(requestFollow);
    expect(cold.out?.result).toEqual({ cluster: 'ok', follow: 'nothing kept' });
    expect(cold.kube).toEqual({});
    expect(cold.tableChanged).toBe(false);

    const scheduler = new LocalScheduler(
      env.runtime.invoker,
      env.runtime.bus,
      () => env.sim.clock.now(),
      allSchedules().filter((s) => s.id === CYCLE || s.id === CYCLE_FOLLOW),
    );
    const ran: string[][] = [];
    for (let m = 0; m <= 5; m++) {
      ran.push((await scheduler.runDue()).map((s) => s.id));
      env.sim.clock.advance(MINUTE);
    }
    expect(ran).toEqual([[CYCLE], [CYCLE_FOLLOW], [CYCLE_FOLLOW], [CYCLE_FOLLOW], [CYCLE_FOLLOW], [CYCLE]]);

    const warm = await watching(requestFollow);
    expect(warm.out?.result).toMatchObject({
      cluster: 'ok',
      follow: expect.stringMatching(/^[1-9]\d* of [1-9]\d* list\(s\) kept$/),
    });
    // Reads only: the revision and one watch per kept list; no write to the cluster.
    expect(Object.keys(warm.kube).every((k) => k.startsWith('GET '))).toBe(true);
    expect(Object.keys(warm.kube).length).toBeGreaterThan(0);
    expect(warm.tableChanged).toBe(false);
  });
});
