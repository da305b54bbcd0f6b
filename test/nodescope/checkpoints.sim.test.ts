/**
 * History to and from upstream VPA: stored states exported as VerticalPodAutoscalerCheckpoints (per
 * node with scopeValue, and DaemonSet-wide), and imported back as the starting state of nodes without
 * history of their own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTables } from '../../local/dynamo.js';
import { exportCheckpoints, importCheckpoints } from '../../shared/nodescope/checkpoints.js';
import { getRecommendations } from '../../shared/nodescope/query.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { agentDaemonSet, cycle, type Env, MINUTE, startEnv, VPA_RESOURCE, vpaObject } from './helpers.js';

describe('VerticalPodAutoscalerCheckpoints', () => {
  let env: Env;
  beforeAll(async () => {
    env = await startEnv([{ name: 'cp', nodes: 4, seed: 71, vpaCrd: true, daemonSets: [agentDaemonSet()] }]);
    env.sim.cluster('cp').store.put(VPA_RESOURCE, vpaObject({ mode: 'Off' }));
    for (let i = 0; i < 16; i++) await cycle(env, 'cp', 15 * MINUTE);
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('exports each node’s history, and the DaemonSet-wide one, in the upstream checkpoint format', async () => {
    const all = await exportCheckpoints(env.store, 'cp', 'monitoring', 'agent');
    const recs = await getRecommendations(env.store, 'cp', 'monitoring', 'agent', { live: true });
    const nodes = Object.keys(recs?.nodes ?? {});
    expect(nodes.length).toBeGreaterThan(0); // the checks below need nodes to check
    expect(all?.length).toBe(nodes.length * 2 + 2);
    const scoped = all?.filter((c) => c.spec.scopeValue) ?? [];
    expect(new Set(scoped.map((c) => c.spec.scopeValue))).toEqual(new Set(nodes));
    for (const c of all ?? []) {
      expect(c).toMatchObject({
        apiVersion: 'autoscaling.k8s.io/v1',
        kind: 'VerticalPodAutoscalerCheckpoint',
      });
      expect(c.spec.vpaObjectName).toBe('agent');
      expect(c.status.version).toBe('v3');
      expect(c.status.totalSamplesCount).toBeGreaterThan(0);
      expect(Math.max(...Object.values(c.status.cpuHistogram.bucketWeights ?? {}))).toBe(10000);
      expect(c.metadata.name).toMatch(
        c.spec.scopeValue ? /^agent-(collector|shipper)-[0-9a-f]+$/ : /^agent-(collector|shipper)$/,
      );
    }
    const one = await exportCheckpoints(env.store, 'cp', 'monitoring', 'agent', { node: nodes[0] });
    expect(one?.map((c) => c.spec.scopeValue)).toEqual([nodes[0], nodes[0]]);
  });

  it('imports them as the history of nodes that have none, which then recommend as before', async () => {
    const exported = (await exportCheckpoints(env.store, 'cp', 'monitoring', 'agent')) ?? [];
    const before = await getRecommendations(env.store, 'cp', 'monitoring', 'agent', { live: true });
    // Another fleetscope (its own table) that has seen the DaemonSet but no usage (metrics unavailable).
    await ensureTables(env.runtime.dynamoEndpoint, { table: 'other', idempotencyTable: 'other-idem' });
    const other = new DynamoNodeScopeStore(env.runtime.db, 'other');
    const fault = env.sim.faults.inject({
      cluster: 'cp',
      match: { kind: 'metrics' },
      fault: { type: 'status', code: 503 },
    });
    await cycle(env, 'cp', 1000, undefined, other);
    env.sim.faults.clear(fault);
    const empty = await getRecommendations(other, 'cp', 'monitoring', 'agent', { live: true });
    expect(empty?.nodes).toEqual({});
    // Named as before AEP-10031's hashed names (`<vpa>-<container>-<value>`): import goes by spec, not name.
    const legacy = exported.map((c) => ({
      ...c,
      metadata: {
        ...c.metadata,
        name: `${c.spec.vpaObjectName}-${c.spec.containerName}${c.spec.scopeValue ? `-${c.spec.scopeValue}` : ''}`,
      },
    }));
    expect(legacy.filter((c, i) => c.metadata.name !== exported[i]?.metadata.name).length).toBeGreaterThan(0);
    const result = await importCheckpoints(other, 'cp', 'monitoring', 'agent', legacy, env.sim.clock.now());
    expect(result).toMatchObject({ imported: exported.length - 2, skipped: 2 });
    const after = await getRecommendations(other, 'cp', 'monitoring', 'agent', { live: true });
    expect(Object.keys(before?.nodes ?? {}).length).toBeGreaterThan(0);
    for (const [node, rec] of Object.entries(before?.nodes ?? {})) {
      const got = after?.nodes[node];
      expect(got?.source).toBe('node');
      for (const c of ['collector', 'shipper']) {
        // Weights quantised to 10000 steps: targets stay within a histogram bucket (5%).
        const a = rec.containers[c]?.target.cpu as number;
        const b = got?.containers[c]?.target.cpu as number;
        expect(Math.abs(a - b)).toBeLessThanOrEqual(Math.ceil(a * 0.06));
      }
    }
    // Its own history wins: a second import, in upstream's names now, changes nothing.
    expect(
      await importCheckpoints(other, 'cp', 'monitoring', 'agent', exported, env.sim.clock.now()),
    ).toMatchObject({
      imported: 0,
      skipped: exported.length,
    });
  });
});
