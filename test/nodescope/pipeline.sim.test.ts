/**
 * The pipeline over the Kubernetes API simulator and dynalite: targets, collection, per-node states
 * stored and reloaded every cycle, recommendations per node and DaemonSet-wide, fallback, visibility in
 * the cluster. Behaviour only: no wall-clock time is asserted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BaseCache } from '../../shared/nodescope/base-cache.js';
import type { CycleResult, DsOutcome } from '../../shared/nodescope/cycle.js';
import { getRecommendations } from '../../shared/nodescope/query.js';
import { loadDs } from '../../shared/nodescope/state.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { agentDaemonSet, cycle, type Env, MINUTE, startEnv, VPA_RESOURCE, vpaObject } from './helpers.js';

const ZONE = 'topology.kubernetes.io/zone';

const ds = (r: CycleResult, name = 'agent'): DsOutcome => {
  const o = r.daemonSets.find((d) => d.name === name);
  if (!o) throw new Error(`no outcome for ${name}: ${JSON.stringify(r.detail)}`);
  return o;
};

describe('node-scoped recommendations over the simulator', () => {
  let env: Env;
  const nodeNames = (cluster: string) =>
    env.sim
      .cluster(cluster)
      .store.list('nodes')
      .map((n) => n.metadata.name as string)
      .sort();

  beforeAll(async () => {
    env = await startEnv([
      {
        name: 'het',
        nodes: 8,
        seed: 11,
        vpaCrd: true,
        daemonSets: [
          agentDaemonSet({
            // Node 1 carries four times node 0's load; the others sit in between.
            load: {
              cpu: 100,
              memory: '96Mi',
              perNode: { '0': 1, '1': 4, '2': 2, '3': 1.5, '4': 3, '5': 1.2, '6': 2.5, '7': 1 },
              containers: { shipper: { cpu: 40, memory: '48Mi' } },
              noise: 0.05,
              diurnalAmplitude: 0.2,
            },
          }),
          agentDaemonSet({
            name: 'zonal',
            nodeSelector: { [ZONE]: 'us-east-1a' },
            load: { perNode: 'heterogeneous' },
          }),
        ],
      },
      {
        name: 'uni',
        nodes: 6,
        seed: 12,
        vpaCrd: true,
        daemonSets: [agentDaemonSet({ load: { cpu: 120, memory: '100Mi', perNode: 'uniform', noise: 0 } })],
      },
      { name: 'small', nodes: 3, seed: 13, vpaCrd: true, daemonSets: [agentDaemonSet()] },
      { name: 'large', nodes: 60, seed: 14, vpaCrd: true, daemonSets: [agentDaemonSet()] },
    ]);
    for (const c of ['het', 'uni', 'small', 'large'])
      env.sim.cluster(c).store.put(VPA_RESOURCE, vpaObject({ mode: 'Off' }));
    env.sim.cluster('het').store.put(
      VPA_RESOURCE,
      vpaObject({
        name: 'zonal',
        target: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'zonal' },
        mode: 'Off',
      }),
    );
  });
  afterAll(async () => {
    await env?.stop();
  });

  let last: CycleResult;

  it('gives each node a target that follows its own load (4x the load, a markedly larger target)', async () => {
    for (let i = 0; i < 24; i++) last = await cycle(env, 'het', 15 * MINUTE);
    const agent = ds(last);
    const nodes = nodeNames('het');
    const n0 = agent.recs.get(nodes[0] as string);
    const n1 = agent.recs.get(nodes[1] as string);
    expect(n0?.source).toBe('node');
    expect(n1?.source).toBe('node');
    const cpu0 = n0?.containers.collector?.target.cpu as number;
    const cpu1 = n1?.containers.collector?.target.cpu as number;
    expect(cpu1).toBeGreaterThan(3 * cpu0);
    expect(n1?.containers.collector?.target.memory as number).toBeGreaterThan(
      2 * (n0?.containers.collector?.target.memory as number),
    );
    // Ranked like the load: per-node CPU targets sorted by node factor are non-decreasing.
    const factors = [1, 4, 2, 1.5, 3, 1.2, 2.5, 1];
    const byFactor = nodes
      .map((n, i) => ({ f: factors[i] as number, cpu: agent.recs.get(n)?.containers.collector?.target.cpu }))
      .filter((x) => x.cpu !== undefined)
      .sort((a, b) => a.f - b.f);
    for (let i = 1; i < byFactor.length; i++)
      if ((byFactor[i] as { f: number }).f > (byFactor[i - 1] as { f: number }).f)
        expect(byFactor[i]?.cpu).toBeGreaterThanOrEqual(byFactor[i - 1]?.cpu as number);
    // Upstream's single recommendation sits near the busiest nodes' and over-provisions the rest.
    expect(agent.dsWide.collector?.target.cpu).toBeGreaterThan(cpu0 * 2);
    expect(last.detail.samples).toBeGreaterThan(0);
    expect(last.detail.errors).toEqual([]);
  });

  it('ignores nodes the DaemonSet cannot run on', () => {
    const zonal = ds(last, 'zonal');
    const inZone = env.sim
      .cluster('het')
      .store.list('nodes')
      .filter(
        (n) =>
          n.metadata.labels[ZONE] === 'us-east-1a' &&
          !(n.spec.taints ?? []).some((t: { effect: string }) => t.effect === 'NoSchedule'),
      )
      .map((n) => n.metadata.name)
      .sort();
    expect([...zonal.recs.keys()].sort()).toEqual(inZone);
    expect(zonal.eligible).toBe(inZone.length);
  });

  it('reproduces the same recommendations from DynamoDB alone after a restart', async () => {
    // A cycle that folds computes every node's recommendation from its whole stored history.
    const folded = await cycle(env, 'het', 5 * MINUTE, { foldEveryMs: 1 });
    const agent = ds(folded);
    expect(agent.folded).toBe(true);
    // A restart: a cold process, nothing kept in memory.
    const fresh = new DynamoNodeScopeStore(env.runtime.db, env.runtime.table, new BaseCache());
    // The fold kept its new base in process as it will be read back: the copy equals the chunks read cold.
    const head = await fresh.getHead('het', 'monitoring/agent');
    const hits = env.store.bases.stats.hits;
    const warm = await loadDs(env.store, head, 'het', 'monitoring/agent', undefined, { replay: false });
    expect(env.store.bases.stats.hits).toBe(hits + 1);
    const cold = await loadDs(fresh, head, 'het', 'monitoring/agent', undefined, { replay: false });
    expect(warm.baseOrder).toEqual(cold.baseOrder);
    expect(warm.model).toEqual(cold.model);
    fresh.bases.clear();
    const stored = await getRecommendations(fresh, 'het', 'monitoring', 'agent');
    expect(stored?.dsWide).toEqual(agent.dsWide);
    for (const [node, rec] of agent.recs) expect(stored?.nodes[node]).toEqual(rec);
    // Two cycles later (appended, not folded), recomputing from storage alone equals a fold's result.
    await cycle(env, 'het', 5 * MINUTE, undefined, fresh);
    await cycle(env, 'het', 5 * MINUTE, undefined, fresh);
    const live = await getRecommendations(fresh, 'het', 'monitoring', 'agent', { live: true });
    // Those cycles used the base kept in process (read once); the fold below reads it cold: equal.
    expect(fresh.bases.stats.hits).toBeGreaterThan(0);
    const next = await cycle(
      env,
      'het',
      0,
      { foldEveryMs: 1 },
      new DynamoNodeScopeStore(env.runtime.db, env.runtime.table, new BaseCache()),
    );
    expect(ds(next).folded).toBe(true);
    expect(live?.dsWide).toEqual(ds(next).dsWide);
    expect(Object.keys(live?.nodes ?? {}).sort()).toEqual([...ds(next).recs.keys()].sort());
    for (const [node, rec] of ds(next).recs) expect(live?.nodes[node]).toEqual(rec);
    expect(ds(next).scopes).toBe(agent.scopes);
    const one = await getRecommendations(fresh, 'het', 'monitoring', 'agent', { node: nodeNames('het')[1] });
    expect(Object.keys(one?.nodes ?? {})).toEqual([nodeNames('het')[1]]);
    last = next;
  });

  it('gives every node the DaemonSet-wide target when the load is the same everywhere', async () => {
    let r: CycleResult | undefined;
    for (let i = 0; i < 12; i++) r = await cycle(env, 'uni', 15 * MINUTE);
    const agent = ds(r as CycleResult);
    expect(agent.recs.size).toBeGreaterThan(3);
    for (const rec of agent.recs.values()) {
      expect(rec.source).toBe('node');
      for (const name of ['collector', 'shipper'])
        expect(rec.containers[name]?.target).toEqual(agent.dsWide[name]?.target);
    }
  });

  it('in update mode Off writes nothing to pods: its only writes are the VPA status, as upstream', () => {
    for (const c of ['het', 'uni']) {
      const { byMethodAndKind } = env.sim.cluster(c).stats();
      const writes = Object.keys(byMethodAndKind).filter((k) => !k.startsWith('GET '));
      expect(writes).toEqual(['PATCH customresources']);
    }
  });

  it('makes the same number of API requests for 3 nodes as for 60', async () => {
    const per = async (cluster: string) => {
      await cycle(env, cluster, 5 * MINUTE);
      env.sim.cluster(cluster).resetStats();
      const r = await cycle(env, cluster, 5 * MINUTE);
      return {
        sim: env.sim.cluster(cluster).stats().total,
        counted: r.detail.apiRequests,
        nodes: r.detail.nodes,
      };
    };
    const small = await per('small');
    const large = await per('large');
    expect(large.nodes).toBe(60);
    expect(small.nodes).toBe(3);
    expect(large.sim).toBe(small.sim);
    expect(large.counted).toBe(large.sim);
  });

  it("gives a node without history its instance type's group recommendation, else the DaemonSet-wide one", async () => {
    const store = env.sim.cluster('het').store;
    const template = store.get('nodes', nodeNames('het')[0] as string);
    const type = template.metadata.labels['node.kubernetes.io/instance-type'];
    expect(type).toBeTruthy();
    const addNode = (name: string, labels: Record<string, string>) =>
      store.put('nodes', {
        ...template,
        metadata: {
          name,
          labels: { ...template.metadata.labels, 'kubernetes.io/hostname': name, ...labels },
        },
        spec: { ...template.spec, providerID: `aws:///us-east-1a/i-${name}` },
      });
    const sameType = 'ip-10-99-0-1.ec2.internal';
    const newType = 'ip-10-99-0-2.ec2.internal';
    addNode(sameType, {});
    addNode(newType, { 'node.kubernetes.io/instance-type': 'x9.unseen' });
    // At once: metrics-server reports a pod only after two scrapes.
    const r = await cycle(env, 'het', 1000);
    const grouped = ds(r).recs.get(sameType);
    expect(grouped).toMatchObject({ source: 'group', group: type });
    expect(Object.keys(grouped?.containers ?? {}).length).toBeGreaterThan(0);
    const rec = ds(r).recs.get(newType);
    expect(rec?.source).toBe('fallback');
    expect(rec?.containers).toEqual(ds(r).dsWide);
    expect(r.detail.fallbackNodes).toBeGreaterThanOrEqual(1);
  });
});
