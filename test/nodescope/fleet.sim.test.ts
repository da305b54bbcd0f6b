/**
 * The capability end to end in the local runtime: schedule -> dispatch -> ClusterWorkRequested per
 * cluster -> rule -> nodescope worker (the real handler) -> events. A cluster whose metrics API is
 * absent (404) or unavailable (503) is reported, and neither it nor the rest of the fleet fails.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setNodeScopeClock } from '../../shared/nodescope/clock.js';
import { getRecommendations } from '../../shared/nodescope/query.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { nodescopeSummaryLines } from '../../shared/nodescope/summary.js';
import type { Detail } from '../../shared/platform/events.js';
import {
  agentDaemonSet,
  type Env,
  MINUTE,
  registerFileCluster,
  startEnv,
  VPA_RESOURCE,
  vpaObject,
} from './helpers.js';

describe('nodescope in the local runtime', () => {
  let env: Env;
  let dir: string;
  const clusters = ['ok', 'nometrics', 'down'];

  beforeAll(async () => {
    env = await startEnv([
      { name: 'ok', nodes: 4, seed: 41, vpaCrd: true, daemonSets: [agentDaemonSet()] },
      {
        name: 'nometrics',
        nodes: 3,
        seed: 42,
        vpaCrd: true,
        metricsApi: 'absent',
        daemonSets: [agentDaemonSet()],
      },
      {
        name: 'down',
        nodes: 3,
        seed: 43,
        vpaCrd: true,
        metricsApi: 'unavailable',
        daemonSets: [agentDaemonSet()],
      },
    ]);
    setNodeScopeClock(() => env.sim.clock.now());
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-nodescope-'));
    const path = join(dir, 'kubeconfig.yaml');
    await env.sim.writeKubeconfig(path);
    for (const name of clusters) {
      env.sim.cluster(name).store.put(VPA_RESOURCE, vpaObject({ mode: 'Off' }));
      await registerFileCluster(env.runtime, name, path);
    }
  });
  afterAll(async () => {
    setNodeScopeClock();
    await env?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const completed = () =>
    env.runtime.bus.log
      .filter((e) => e.detailType === 'NodeScopeCycleCompleted')
      .map((e) => e.detail as Detail<'NodeScopeCycleCompleted'>);

  it('runs a cycle in every cluster and reports an absent or unavailable metrics API without failing', async () => {
    for (let i = 0; i < 3; i++) {
      env.sim.clock.advance(5 * MINUTE);
      await env.runtime.scheduler.runOnce();
    }
    const byCluster = new Map(completed().map((d) => [d.cluster, d]));
    expect([...byCluster.keys()].sort()).toEqual([...clusters].sort());
    expect(byCluster.get('ok')).toMatchObject({ metricsApi: 'available', daemonSets: 1, errors: [] });
    expect(byCluster.get('ok')?.samples).toBeGreaterThan(0);
    expect(byCluster.get('nometrics')).toMatchObject({
      metricsApi: 'absent',
      daemonSets: 1,
      samples: 0,
      errors: [],
    });
    expect(byCluster.get('down')).toMatchObject({
      metricsApi: 'unavailable',
      daemonSets: 1,
      samples: 0,
      errors: [],
    });
    expect(completed().filter((d) => d.cluster === 'ok')).toHaveLength(3);
    expect(env.runtime.invoker.deadLetters.filter((d) => d.functionId === 'cycle')).toEqual([]);
    expect(env.runtime.invoker.stats.get('cycle')?.failures ?? 0).toBe(0);
  });

  it('stores per-node recommendations that can be queried per cluster, DaemonSet and node', async () => {
    const recs = await getRecommendations(env.store, 'ok', 'monitoring', 'agent');
    expect(Object.keys(recs?.nodes ?? {}).length).toBeGreaterThan(0);
    expect(Object.keys(recs?.dsWide ?? {}).sort()).toEqual(['collector', 'shipper']);
    const none = await getRecommendations(env.store, 'nometrics', 'monitoring', 'agent');
    expect(none?.nodes).toEqual({});
  });

  it('summarises each node’s target next to the DaemonSet-wide one and what per-node sizing saves', async () => {
    const lines = await nodescopeSummaryLines(new DynamoNodeScopeStore(env.runtime.db, env.runtime.table));
    const text = lines.join('\n');
    expect(lines[0]).toBe('nodescope: 3 DaemonSet(s) sized per node in 3 cluster(s)');
    expect(text).toMatch(/ok: metrics API available, 4 nodes/);
    expect(text).toMatch(/nometrics: metrics API absent/);
    expect(text).toMatch(
      /ok monitoring\/agent \(VPA agent, updateMode Off\): targets per node vs DaemonSet-wide/,
    );
    expect(text).toMatch(/\(DaemonSet-wide\)\s+upstream\s+\d+m/);
    expect(text).toMatch(
      /total over \d+ node\(s\): per-node .* vs DaemonSet-wide .*: per-node sizing cpu (saves|adds|unchanged)/,
    );
    expect(text).toMatch(
      /nometrics monitoring\/agent .*no recommendation yet, no samples \(metrics API absent\)/,
    );
  });
});
