import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECONCILE_EVERY_MINUTES, RECONCILERS } from '../../shared/features/capability.js';
import { clustersOfWave, type Rollout } from '../../shared/features/rollout.js';
import { type RolloutPorts, startRollout } from '../../shared/features/rollout-runner.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { agentDaemonSet, VPA_RESOURCE, vpaObject } from '../nodescope/helpers.js';
import { type FeatureEnv, MINUTE, NODESCOPE, startFeatureEnv, widgetsRolloutFleet } from './helpers.js';

const WIDGETS = { namespace: 'widgets', name: 'widgets' };
const CLUSTERS = ['h0', 'h1', 'h2'];

describe("a rollout judged by the clusters' nodes", () => {
  let env: FeatureEnv;
  let ports: RolloutPorts;
  beforeAll(async () => {
    env = await startFeatureEnv(
      CLUSTERS.map((name, i) => ({
        name,
        nodes: 2,
        seed: 300 + i,
        vpaCrd: true,
        daemonSets: [agentDaemonSet()],
      })),
    );
    ports = await widgetsRolloutFleet(env, CLUSTERS, (c) =>
      env.sim.cluster(c).store.put(VPA_RESOURCE, vpaObject({ mode: 'Auto' })),
    );
  }, 120_000);
  afterAll(async () => env?.stop());

  /** One schedule tick: the scheduled reconcilers (features and rollouts), then each cluster's cycle. */
  async function tick() {
    for (let shard = 0; shard < RECONCILERS; shard++)
      await env.runtime.invoker.invoke('features-reconcile', { shard, shards: RECONCILERS });
    await env.runtime.bus.drain();
    for (const c of CLUSTERS) await env.cycle(c);
    env.sim.clock.advance(RECONCILE_EVERY_MINUTES * MINUTE);
  }
  const rollout = async (id: string) => (await ports.rollouts.get(id)) as Rollout;
  const lastCycle = async (c: string) =>
    (await new DynamoNodeScopeStore(env.runtime.db, env.runtime.table).getCluster(c))?.lastCycle;

  /** What the node lifecycle controller writes when a node's kubelet stops posting its status. */
  function nodesGoNotReady(cluster: string) {
    const store = env.sim.cluster(cluster).store;
    for (const node of store.list('nodes')) {
      const conditions = (node.status.conditions as { type: string }[]).map((c) =>
        c.type === 'Ready'
          ? {
              ...c,
              status: 'Unknown',
              reason: 'NodeStatusUnknown',
              message: 'Kubelet stopped posting node status.',
            }
          : c,
      );
      store.put('nodes', { ...node, status: { ...node.status, conditions } });
    }
  }

  it('rolls back the wave whose nodes went NotReady; the next wave never starts', {
    timeout: 300_000,
  }, async () => {
    // Node scope on everywhere, its cycles counting the nodes NotReady (none yet).
    for (let i = 0; i < 10; i++) {
      await tick();
      const states = await Promise.all(CLUSTERS.map(async (c) => (await env.store.get(c, NODESCOPE))?.state));
      if (states.every((s) => s === 'On')) break;
    }
    await tick();
    for (const c of CLUSTERS) expect((await lastCycle(c))?.notReadyNodes, c).toBe(0);

    let r = await startRollout(ports, {
      feature: WIDGETS,
      to: 'on',
      waves: '1,2,100%',
      pauseMs: 4 * MINUTE,
      by: 'test',
    });
    const [second] = clustersOfWave(r, 1);
    const [third] = clustersOfWave(r, 2);
    for (let i = 0; i < 20 && (await rollout(r.id)).wave < 1; i++) await tick();
    expect((await rollout(r.id)).status).toBe('running');
    expect((await env.store.get(second!, WIDGETS))?.desired).toBe('on');

    nodesGoNotReady(second!);
    for (
      let i = 0;
      i < 20 && !['rolled-back', 'halted', 'completed'].includes((await rollout(r.id)).status);
      i++
    )
      await tick();
    r = await rollout(r.id);
    expect(r.status).toBe('rolled-back');
    expect(r.wave).toBe(1);
    expect(r.reason).toMatch(new RegExp(`^cluster ${second}: nodes NotReady rose from 0 to 2`));
    expect((await lastCycle(second!))?.notReadyNodes).toBe(2);
    // The wave's cluster is back where it was; the third wave's cluster never had its desired value set.
    for (let i = 0; i < 10 && (await env.store.get(second!, WIDGETS))?.state !== 'Off'; i++) await tick();
    expect(await env.store.get(second!, WIDGETS)).toMatchObject({ state: 'Off' });
    const untouched = (await env.store.get(third!, WIDGETS))!;
    expect(untouched.desiredBy ?? '').not.toMatch(new RegExp(r.id));
    expect(untouched.state).toBe('Off');
  });
});
