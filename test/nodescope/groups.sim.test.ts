/**
 * AEP-10031 over the simulator: a DaemonSet scoped by a node label key gets one recommendation per
 * value of that label (`__absent__` for nodes without it, `""` for an empty value), each from its
 * nodes' merged history, published as AEP-10031 stands in status.recommendationGroups (targets only)
 * beside status.nodeScope, with the DaemonSet-wide status.recommendation as the fallback; every node's
 * pod is sized from its group. Bad scopes are refused with the reason named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { formatCpu, formatMemory } from '../../shared/kernel/quantity.js';
import type { Bytes, Millicores } from '../../shared/kernel/units.js';
import { RECOMMENDATION_ANNOTATION } from '../../shared/nodescope/collect.js';
import { installScopedCrd } from '../../shared/nodescope/crd.js';
import type { CycleResult } from '../../shared/nodescope/cycle.js';
import { getRecommendations } from '../../shared/nodescope/query.js';
import { agentDaemonSet, cycle, type Env, MINUTE, startEnv, VPA_RESOURCE, vpaObject } from './helpers.js';

const POOL = 'fleetscope.test/pool';
const VPAS = '/apis/autoscaling.k8s.io/v1/namespaces/monitoring/verticalpodautoscalers';

describe('node label scope (AEP-10031) over the simulator', () => {
  let env: Env;
  let raw: RawReader;
  let nodes: string[];
  const results: CycleResult[] = [];
  /** The pool label of each node: two "gpu", one "cpu", one empty, the rest without the label. */
  const pools = new Map<string, string | undefined>();

  beforeAll(async () => {
    env = await startEnv([{ name: 'grp', nodes: 6, seed: 77, vpaCrd: true, daemonSets: [agentDaemonSet()] }]);
    const client = env.clients.get('grp')!;
    raw = new RawReader(client);
    await installScopedCrd(client);
    nodes = env.sim
      .cluster('grp')
      .store.list('nodes')
      .map((n) => n.metadata.name as string)
      .sort();
    for (const [i, v] of ['gpu', 'gpu', 'cpu', ''].entries()) pools.set(nodes[i] as string, v);
    for (const [node, value] of pools)
      await raw.send(
        'label node',
        'PATCH',
        `/api/v1/nodes/${node}`,
        { metadata: { labels: { [POOL]: value } } },
        'application/merge-patch+json',
      );
    const vpa = vpaObject({ name: 'agent', via: 'spec', mode: 'Initial' }) as {
      spec: Record<string, unknown>;
    };
    vpa.spec.scope = POOL;
    await raw.send('create VPA', 'POST', VPAS, vpa);
    // Refused by fleetscope itself (the annotation bypasses the CRD's validation).
    const onDeployment = vpaObject({
      name: 'web',
      mode: 'Initial',
      target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    }) as { metadata: { annotations: Record<string, string> } };
    onDeployment.metadata.annotations['fleetscope.io/scope'] = 'topology.kubernetes.io/zone';
    await raw.send('create VPA', 'POST', VPAS, onDeployment);
    const badKey = vpaObject({ name: 'badkey', mode: 'Initial' }) as {
      metadata: { annotations: Record<string, string> };
    };
    badKey.metadata.annotations['fleetscope.io/scope'] = 'pool name';
    await raw.send('create VPA', 'POST', VPAS, badKey);
    for (let i = 0; i < 14; i++) results.push(await cycle(env, 'grp', 5 * MINUTE));
  }, 120_000);
  afterAll(async () => {
    await env?.stop();
  });

  const vpa = () => env.sim.cluster('grp').store.get(VPA_RESOURCE, 'agent', 'monitoring');
  const poolOf = (node: string) => (pools.has(node) ? (pools.get(node) as string) : '__absent__');

  it('publishes one group per label value, with __absent__ and "", targets only, and the DaemonSet-wide fallback', async () => {
    const status = vpa().status;
    expect(status.recommendationGroups.map((g: { scopeValue: string }) => g.scopeValue)).toEqual([
      '',
      '__absent__',
      'cpu',
      'gpu',
    ]);
    expect(status.groups).toBeUndefined();
    expect(status.nodeScope).toMatchObject({ nodes: 6 });
    // Each group as the last fold computed it from its nodes' merged history (AEP-10031: targets only).
    const stored = await getRecommendations(env.store, 'grp', 'monitoring', 'agent');
    const q = (a: { cpu?: number; memory?: number }) => ({
      cpu: formatCpu(a.cpu as Millicores),
      memory: formatMemory(a.memory as Bytes),
    });
    for (const g of status.recommendationGroups) {
      const want = stored?.groups[g.scopeValue];
      expect(want, g.scopeValue).toBeDefined();
      expect(g.containerRecommendations).toEqual(
        ['collector', 'shipper'].map((name) => ({ containerName: name, target: q(want![name]!.target) })),
      );
    }
    // status.recommendation: the DaemonSet-wide recommendation, bounds included.
    expect(status.recommendation.containerRecommendations).toEqual(
      ['collector', 'shipper'].map((name) => {
        const w = stored!.dsWide[name]!;
        return {
          containerName: name,
          target: q(w.target),
          lowerBound: q(w.lowerBound),
          upperBound: q(w.upperBound),
          uncappedTarget: q(w.uncappedTarget),
        };
      }),
    );
  });

  it("sizes every node's pod from its group: the same target within a group, the group named", () => {
    const last = results.at(-1)?.daemonSets[0];
    expect(last?.recs.size).toBe(6);
    const byGroup = new Map<string, string>();
    for (const node of nodes) {
      const rec = last?.recs.get(node);
      expect(rec, node).toMatchObject({ source: 'group', group: poolOf(node) });
      const key = JSON.stringify(rec?.containers);
      const seen = byGroup.get(poolOf(node));
      if (seen) expect(key, node).toBe(seen);
      else byGroup.set(poolOf(node), key);
    }
    // The two gpu nodes share one recommendation, from both their histories.
    expect(new Set(byGroup.values()).size).toBe(4);
    const pods = env.sim
      .cluster('grp')
      .store.list('pods')
      .filter((p) => p.metadata.annotations?.[RECOMMENDATION_ANNOTATION]);
    expect(pods.length).toBe(6);
    for (const p of pods)
      expect(JSON.parse(p.metadata.annotations[RECOMMENDATION_ANNOTATION])).toMatchObject({
        source: 'group',
        group: poolOf(p.spec.nodeName),
      });
  });

  it('shows a node added since the last fold as the cycle sizes it: its group, in get --live too', async () => {
    const added = 'ip-10-99-7-1.ec2.internal';
    env.sim.cluster('grp').addNode({ name: added, cpu: '4', memory: '16Gi', labels: { [POOL]: 'gpu' } });
    // No fold: the base knows nothing of the node; metrics-server reports its pod after two scrapes.
    const noFold = { foldEveryMs: 24 * 60 * MINUTE };
    let last: CycleResult | undefined;
    for (let i = 0; i < 3; i++) last = await cycle(env, 'grp', 5 * MINUTE, noFold);
    expect(last?.daemonSets[0]?.folded).toBe(false);
    const cycled = last?.daemonSets[0]?.recs.get(added);
    expect(cycled).toMatchObject({ source: 'group', group: 'gpu' });
    const live = await getRecommendations(env.store, 'grp', 'monitoring', 'agent', { live: true });
    expect(live?.nodes[added]).toMatchObject({ source: 'group', group: 'gpu' });
    expect(live?.nodes[added]?.containers).toEqual(live?.groups.gpu);
    // The same numbers as the cycle's, from the same history: a fold a second later (no new scrape).
    const fold = (await cycle(env, 'grp', 1000, { foldEveryMs: 1 })).daemonSets[0];
    expect(fold?.folded).toBe(true);
    expect(fold?.recs.get(added)).toEqual(live?.nodes[added]);
    const pod = env.sim
      .cluster('grp')
      .store.list('pods')
      .find((p) => p.spec.nodeName === added && p.metadata.annotations?.[RECOMMENDATION_ANNOTATION]);
    expect(JSON.parse(pod?.metadata.annotations[RECOMMENDATION_ANNOTATION] ?? '{}')).toMatchObject({
      source: 'group',
      group: 'gpu',
    });
  });

  it('refuses a scope on a Deployment and a scope that is not a label key, naming the reason', () => {
    const reasons = Object.fromEntries((results[0]?.newlyRejected ?? []).map((r) => [r.vpa, r.reason]));
    expect(reasons).toEqual({
      web: 'scope topology.kubernetes.io/zone applies to DaemonSets only; the target is a Deployment (web)',
      badkey: expect.stringMatching(/^annotation fleetscope.io\/scope "pool name" is not a node label key: /),
    });
    const web = env.sim.cluster('grp').store.get(VPA_RESOURCE, 'web', 'monitoring');
    expect(web.status.conditions[0]).toMatchObject({ status: 'False', reason: 'NodeScopeRefused' });
    expect(web.status.groups).toBeUndefined();
    expect(web.status.recommendationGroups).toBeUndefined();
  });
});
