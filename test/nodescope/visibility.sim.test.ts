/**
 * Update mode Auto over the simulator: policies honoured, pods resized in place (never evicted),
 * recommendations visible on the pods and the VPA, OOM kills recorded, refused targets reported once.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCpu, formatMemory } from '../../shared/kernel/quantity.js';
import type { Bytes, Millicores } from '../../shared/kernel/units.js';
import { RECOMMENDATION_ANNOTATION } from '../../shared/nodescope/collect.js';
import type { CycleResult } from '../../shared/nodescope/cycle.js';
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
} from './helpers.js';

describe('update mode Auto', () => {
  let env: Env;
  const results: CycleResult[] = [];
  const pods = () =>
    env.sim
      .cluster('vis')
      .store.list('pods', 'monitoring')
      .filter((p) => p.metadata.name.startsWith('agent-'));
  let uidsAtStart: string[];
  let firstNode: string;

  beforeAll(async () => {
    env = await startEnv([
      {
        name: 'vis',
        nodes: 5,
        seed: 21,
        vpaCrd: true,
        daemonSets: [
          agentDaemonSet({
            load: {
              cpu: 120,
              memory: '96Mi',
              perNode: { '0': 1, '1': 4, '2': 2, '3': 0.5, '4': 1 },
              containers: { shipper: { cpu: 40, memory: '48Mi' } },
              oomKills: [{ atMs: START + 2 * HOUR + 7 * MINUTE, nodes: [0], containers: ['collector'] }],
            },
          }),
        ],
      },
    ]);
    const store = env.sim.cluster('vis').store;
    store.put(
      VPA_RESOURCE,
      vpaObject({
        mode: 'Auto',
        policies: [
          { containerName: 'collector', maxAllowed: { cpu: '200m' } },
          { containerName: 'shipper', mode: 'Off' },
        ],
      }),
    );
    store.put(
      VPA_RESOURCE,
      vpaObject({
        name: 'web',
        target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        mode: 'Auto',
      }),
    );
    uidsAtStart = pods()
      .map((p) => p.metadata.uid)
      .sort();
    firstNode = env.sim
      .cluster('vis')
      .store.list('nodes')
      .map((n) => n.metadata.name)
      .sort()[0];
    for (let i = 0; i < 16; i++) results.push(await cycle(env, 'vis', 15 * MINUTE));
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('resizes in place through pods/resize: same pods, new requests within the recommended range', () => {
    const stats = env.sim.cluster('vis').stats().byMethodAndKind;
    expect(stats['PATCH resize']).toBeGreaterThan(0);
    expect(
      pods()
        .map((p) => p.metadata.uid)
        .sort(),
    ).toEqual(uidsAtStart);
    const last = results.at(-1)?.daemonSets[0];
    for (const p of pods()) {
      const rec = last?.recs.get(p.spec.nodeName)?.containers.collector;
      const cpu = p.spec.containers.find((c: { name: string }) => c.name === 'collector').resources.requests
        .cpu;
      const m = /^(\d+)m$/.exec(cpu);
      const milli = m ? Number(m[1]) : Number(cpu) * 1000;
      expect(milli).toBeGreaterThanOrEqual(rec?.lowerBound.cpu as number);
      expect(milli).toBeLessThanOrEqual(rec?.upperBound.cpu as number);
    }
    expect(results.reduce((a, r) => a + r.detail.resizes.requested, 0)).toBeGreaterThan(0);
    expect(
      results
        .flatMap((r) => r.resizeReports)
        .some((x) => x.report.kind === 'resized' && x.report.outcome === 'Completed'),
    ).toBe(true);
  });

  it('honours the resource policy: maxAllowed caps the target, a container with mode Off is never touched', () => {
    const last = results.at(-1)?.daemonSets[0];
    let capped = 0;
    for (const rec of last?.recs.values() ?? []) {
      expect(rec.containers.shipper).toBeUndefined();
      expect(rec.containers.collector?.target.cpu).toBeLessThanOrEqual(200);
      if ((rec.containers.collector?.uncappedTarget.cpu as number) > 200) capped++;
    }
    expect(capped).toBeGreaterThan(0);
    for (const p of pods()) {
      const shipper = p.spec.containers.find((c: { name: string }) => c.name === 'shipper');
      expect(shipper.resources.requests).toEqual({ cpu: '50m', memory: '64Mi' });
    }
  });

  it('annotates each pod with its node recommendation and summarises on the VPA status', () => {
    for (const p of pods()) {
      const v = JSON.parse(p.metadata.annotations[RECOMMENDATION_ANNOTATION]);
      expect(v.source).toBe('node');
      expect(Object.keys(v.containers)).toEqual(['collector']);
      expect(v.containers.collector.target.cpu).toMatch(/^\d+m$/);
    }
    const vpa = env.sim.cluster('vis').store.get(VPA_RESOURCE, 'agent', 'monitoring');
    const cond = vpa.status.conditions.find((c: { type: string }) => c.type === 'RecommendationProvided');
    expect(cond).toMatchObject({ status: 'True', reason: 'NodeScope' });
    const n = pods().length;
    expect(n).toBeGreaterThan(1);
    expect(cond.message).toMatch(
      new RegExp(`^node scope \\(fleetscope\\): ${n} node\\(s\\), ${n} with their own history`),
    );
    expect(cond.message).toMatch(/collector: cpu \d+m\.\.\d+m \(DaemonSet-wide \d+m\)/);
    expect(cond.message).toMatch(
      /memory \d+(Mi|\.\d+Gi)\.\.\d+(Mi|\.\d+Gi) \(DaemonSet-wide \d+(Mi|\.\d+Gi)\)/,
    );
    // status.recommendation: the DaemonSet-wide recommendation, as upstream's recommender publishes it.
    const dsWide = results.at(-1)?.daemonSets[0]?.dsWide.collector;
    expect(vpa.status.recommendation.containerRecommendations).toEqual([
      {
        containerName: 'collector',
        target: {
          cpu: formatCpu(dsWide?.target.cpu as Millicores),
          memory: formatMemory(dsWide?.target.memory as Bytes),
        },
        lowerBound: expect.any(Object),
        upperBound: expect.any(Object),
        uncappedTarget: expect.any(Object),
      },
    ]);
  });

  it('records an OOM kill, which raises that node’s memory target', () => {
    const ooms = results.map((r) => r.detail.ooms);
    const at = ooms.findIndex((n) => n > 0);
    expect(at).toBeGreaterThan(0);
    expect(ooms.reduce((a, b) => a + b, 0)).toBe(1);
    const before = results[at - 1]?.daemonSets[0]?.recs.get(firstNode)?.containers.collector?.target
      .memory as number;
    const after = results[at]?.daemonSets[0]?.recs.get(firstNode)?.containers.collector?.target
      .memory as number;
    // The kill of a container requesting 128Mi is recorded as a 228Mi peak (+100Mi, upstream's minimum bump).
    expect(after).toBeGreaterThan(before);
    expect(after).toBeGreaterThanOrEqual(Math.floor(228 * 2 ** 20 * 1.15));
  });

  it('refuses node scope on a Deployment once, with the reason on the VPA and an event', () => {
    expect(results[0]?.newlyRejected.map((r) => [r.vpa, r.reason])).toEqual([
      ['web', 'node scope applies to DaemonSets only; the target is a Deployment (web)'],
    ]);
    expect(results.slice(1).every((r) => r.newlyRejected.length === 0)).toBe(true);
    expect(results.at(-1)?.detail.rejectedTargets).toBe(1);
    const vpa = env.sim.cluster('vis').store.get(VPA_RESOURCE, 'web', 'monitoring');
    expect(vpa.status.conditions[0]).toMatchObject({
      type: 'RecommendationProvided',
      status: 'False',
      reason: 'NodeScopeRefused',
      message: 'node scope applies to DaemonSets only; the target is a Deployment (web)',
    });
  });

  it('stays within the API request budget of a cycle', () => {
    for (const r of results) expect(r.detail.apiRequests).toBeLessThanOrEqual(6 + 60);
  });
});
