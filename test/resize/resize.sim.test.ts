/**
 * The shared resize mechanism against the simulator's apiserver and kubelets, driven by nodescope:
 * Infeasible recorded and not retried every cycle, re-applied after the DaemonSet controller recreates a
 * pod, a server without pods/resize reported (recommend only), and a real 409 re-read and retried.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CycleResult } from '../../shared/nodescope/cycle.js';
import { clusterResizeApi, type PodLike, Resizer } from '../../shared/resize/index.js';
import {
  agentDaemonSet,
  cycle,
  type Env,
  MINUTE,
  startEnv,
  VPA_RESOURCE,
  vpaObject,
} from '../nodescope/helpers.js';

const agentPods = (env: Env, cluster: string) =>
  env.sim
    .cluster(cluster)
    .store.list('pods', 'monitoring')
    .filter((p) => p.metadata.name.startsWith('agent-') && p.status?.phase === 'Running');

describe('in-place resize through pods/resize', () => {
  let env: Env;
  beforeAll(async () => {
    env = await startEnv([
      // CPU use far beyond any node: every recommendation is Infeasible on the node.
      {
        name: 'huge',
        nodes: 3,
        seed: 31,
        vpaCrd: true,
        daemonSets: [agentDaemonSet({ load: { cpu: 200_000, memory: '96Mi' } })],
      },
      { name: 'fits', nodes: 3, seed: 32, vpaCrd: true, daemonSets: [agentDaemonSet()] },
      // The same on 1.36, whose apiserver refuses a resize past the node's allocatable with a 403.
      {
        name: 'huge136',
        nodes: 3,
        seed: 34,
        vpaCrd: true,
        kubernetesVersion: '1.36.2',
        daemonSets: [agentDaemonSet({ load: { cpu: 200_000, memory: '96Mi' } })],
      },
      {
        name: 'old',
        nodes: 3,
        seed: 33,
        vpaCrd: true,
        resizeSubresource: false,
        daemonSets: [agentDaemonSet()],
      },
    ]);
    for (const c of ['huge', 'fits', 'old', 'huge136'])
      env.sim.cluster(c).store.put(VPA_RESOURCE, vpaObject({ mode: 'Auto' }));
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('records Infeasible and does not retry it every cycle', async () => {
    const results: CycleResult[] = [];
    for (let i = 0; i < 12; i++) results.push(await cycle(env, 'huge', 15 * MINUTE));
    const pods = agentPods(env, 'huge');
    expect(pods.length).toBeGreaterThan(0);
    for (const p of pods)
      expect(p.status.conditions.find((c: { type: string }) => c.type === 'PodResizePending')).toMatchObject({
        status: 'True',
        reason: 'Infeasible',
      });
    const infeasible = results
      .flatMap((r) => r.resizeReports)
      .filter((x) => x.report.kind === 'refused' && x.report.refusal === 'Infeasible');
    expect(new Set(infeasible.map((x) => x.report.pod))).toEqual(new Set(pods.map((p) => p.metadata.name)));
    // Three hours of cycles: the first request, and at most one retry per pod after the first hour's back-off.
    const patches = env.sim.cluster('huge').stats().byMethodAndKind['PATCH resize'] ?? 0;
    expect(patches).toBeGreaterThanOrEqual(pods.length);
    expect(patches).toBeLessThanOrEqual(2 * pods.length);
    const rec = await env.store.getApply('huge', 'monitoring/agent');
    for (const p of pods)
      expect(rec.records[p.spec.nodeName]).toMatchObject({ state: 'infeasible', podUid: p.metadata.uid });
  });

  it("on 1.36, takes the apiserver's 403 NodeCapacity as Infeasible (backed off), not as an RBAC refusal", async () => {
    const results: CycleResult[] = [];
    for (let i = 0; i < 12; i++) results.push(await cycle(env, 'huge136', 15 * MINUTE));
    const refusals = results.flatMap((r) => r.resizeReports).filter((x) => x.report.kind === 'refused');
    expect(refusals.length).toBeGreaterThan(0);
    expect(new Set(refusals.map((x) => (x.report.kind === 'refused' ? x.report.refusal : '')))).toEqual(
      new Set(['Infeasible']),
    );
    const pods = agentPods(env, 'huge136');
    const patches = env.sim.cluster('huge136').stats().byMethodAndKind['PATCH resize'] ?? 0;
    expect(patches).toBeLessThanOrEqual(2 * pods.length);
  });

  it('resizes again after the DaemonSet controller recreates a deleted pod', async () => {
    let last = await cycle(env, 'fits', 5 * MINUTE);
    for (let i = 0; i < 3; i++) last = await cycle(env, 'fits', 15 * MINUTE);
    const victim = agentPods(env, 'fits')[0];
    const node = victim.spec.nodeName;
    const sized = victim.spec.containers.find((c: { name: string }) => c.name === 'collector').resources
      .requests;
    expect(sized).not.toEqual({ cpu: '100m', memory: '128Mi' });
    env.sim.cluster('fits').store.delete('pods', victim.metadata.name, 'monitoring');
    const replacement = agentPods(env, 'fits').find((p) => p.spec.nodeName === node);
    expect(replacement.metadata.uid).not.toBe(victim.metadata.uid);
    expect(
      replacement.spec.containers.find((c: { name: string }) => c.name === 'collector').resources.requests,
    ).toEqual({
      cpu: '100m',
      memory: '128Mi',
    });
    last = await cycle(env, 'fits', 1000);
    const target = last.daemonSets[0]?.recs.get(node)?.containers.collector?.target;
    const now = env.sim.cluster('fits').store.get('pods', replacement.metadata.name, 'monitoring');
    const requests = now.spec.containers.find((c: { name: string }) => c.name === 'collector').resources
      .requests;
    expect(requests.cpu).toBe(`${target?.cpu}m`);
    expect(
      last.resizeReports.some(
        (x) =>
          x.report.kind === 'resized' &&
          x.report.outcome === 'Requested' &&
          x.report.pod === replacement.metadata.name,
      ),
    ).toBe(true);
  });

  it('reports a server without pods/resize once and goes on recommending', async () => {
    const first = await cycle(env, 'old', 5 * MINUTE);
    const unsupported = first.resizeReports.filter(
      (x) => x.report.kind === 'refused' && x.report.refusal === 'Unsupported',
    );
    expect(unsupported).toHaveLength(1);
    expect(first.daemonSets[0]?.recs.size).toBeGreaterThan(0);
    const before = env.sim.cluster('old').stats().byMethodAndKind;
    const second = await cycle(env, 'old', 5 * MINUTE);
    const after = env.sim.cluster('old').stats().byMethodAndKind;
    expect(second.resizeReports).toEqual([]);
    expect(after['PATCH resize'] ?? 0).toBe(before['PATCH resize'] ?? 0);
    expect(second.daemonSets[0]?.recs.size).toBe(first.daemonSets[0]?.recs.size);
    const rec = await env.store.getCluster('old');
    expect(rec?.resizeUnsupported).toMatch(/no pods\/resize/);
  });

  it('re-reads the pod and retries on a real 409 from a stale resourceVersion', async () => {
    const client = env.clients.get('fits')!;
    const name = agentPods(env, 'fits')[1].metadata.name;
    const stale = (await client.core.readNamespacedPod({ name, namespace: 'monitoring' })) as PodLike;
    // Someone changes the pod after we read it.
    const store = env.sim.cluster('fits').store;
    const current = store.get('pods', name, 'monitoring');
    store.put('pods', {
      ...current,
      metadata: { ...current.metadata, labels: { ...current.metadata.labels, touched: 'yes' } },
    });
    env.sim.cluster('fits').resetStats();
    const r = new Resizer(clusterResizeApi(client));
    const res = await r.resize({ pod: stale, desired: { collector: { requests: { cpu: 77 } } } }, undefined);
    expect(res.report).toMatchObject({ kind: 'resized', outcome: 'Requested' });
    expect(res.requests).toBe(3);
    expect(env.sim.cluster('fits').stats().byMethodAndKind).toMatchObject({
      'PATCH resize': 2,
      'GET pods': 1,
    });
    const after = store.get('pods', name, 'monitoring');
    expect(
      after.spec.containers.find((c: { name: string }) => c.name === 'collector').resources.requests.cpu,
    ).toBe('77m');
  });
});
