/**
 * Node scope end to end on a whole real cluster: a VPA with `spec.scope: node` (the scoped CRD) over a
 * DaemonSet whose pods the real DaemonSet controller creates and the real kubelets (hollow nodes) run;
 * per-node recommendations from metrics.k8s.io (the simulator's metrics-server through the real
 * aggregator: hollow nodes report no usage); in-place resizes actuated by the real kubelets; an upsize
 * on a full node Deferred by its kubelet, then actuated by the kubelet itself once room frees; a daemon
 * pod deleted, recreated by the real controller at the template's size, and sized again.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LoadProfile } from '../../local/sim/workload.js';
import { vpaCheckpointCrd } from '../../shared/kernel/crds/vpa.js';
import { parseCpu } from '../../shared/kernel/quantity.js';
import { scopedVpaCrd } from '../../shared/nodescope/crd.js';
import { type CycleResult, runCycle } from '../../shared/nodescope/cycle.js';
import type { NodeScopeStore } from '../../shared/nodescope/store.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { vpaObject } from '../nodescope/helpers.js';
import { installCrd } from '../simreal/helpers.js';
import { describeRealCluster } from '../support/real-cluster.js';
import { agentDaemonSet, type CycleEnv, PAUSE, rawPods, resizeSettled, startCycleEnv } from './helpers.js';

const CLUSTER = 'ns-cluster';
const NS = 'monitoring';
const MINUTE = 60_000;
const node = (name: string) => ({ name, cpus: 2, memory: '4Gi' });

describeRealCluster('node scope', { nodes: [node('busy'), node('quiet'), node('full')] }, (k) => {
  let env: CycleEnv;
  let store: NodeScopeStore;
  let n = 0;
  const results: CycleResult[] = [];
  const agents = () => rawPods(k, NS, 'app=agent');
  const on = async (nodeName: string) => (await agents()).find((p) => p.spec?.nodeName === nodeName);
  const cpuOf = (p: V1Pod | undefined) =>
    parseCpu(p?.spec?.containers.find((c) => c.name === 'collector')?.resources?.requests?.cpu ?? '0');
  const reportsFor = (pod: string) =>
    results.flatMap((r) => r.resizeReports).filter((x) => x.report.pod === pod);

  /** One cycle 15 simulated minutes on, then until the real kubelets have answered every resize. */
  const cycle = async () => {
    env.clock.advance(15 * MINUTE);
    await k.cluster().metrics?.refresh();
    const at = new Date(env.clock.now()).toISOString();
    const now = () => env.clock.now();
    const result = await runCycle({
      cluster: CLUSTER,
      cycleId: `nodescope/${++n}`,
      cycleKey: at,
      client: env.client,
      store,
      now,
      keepRecommendations: true,
    });
    results.push(result);
    await k.waitFor('the kubelets to answer the resizes', async () => (await agents()).every(resizeSettled));
    return result;
  };

  beforeAll(async () => {
    env = await startCycleEnv(k);
    store = new DynamoNodeScopeStore(env.runtime.db, env.runtime.table);
    await installCrd(env.client, scopedVpaCrd());
    await installCrd(env.client, vpaCheckpointCrd());
    await k.namespace(NS);
    // `full` is nearly full: the room left is smaller than the upsize its busy agent will want.
    await env.client.core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'filler' },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': 'full' },
          containers: [{ name: 'c', image: PAUSE, resources: { requests: { cpu: '1750m' } } }],
        },
      },
    });
    await k.waitForPod(NS, 'filler', (p) => p.status?.phase === 'Running');
    const load: LoadProfile = {
      cpu: 100,
      memory: '96Mi',
      perNode: { busy: 4, quiet: 1, full: 4 },
      noise: 0,
    };
    await env.client.apps.createNamespacedDaemonSet({
      namespace: NS,
      body: agentDaemonSet(load),
    });
    await k.waitFor('three agents Running', async () => {
      const pods = await agents();
      return pods.length === 3 && pods.every((p) => p.status?.phase === 'Running');
    });
    await env.client.custom.createNamespacedCustomObject({
      group: 'autoscaling.k8s.io',
      version: 'v1',
      namespace: NS,
      plural: 'verticalpodautoscalers',
      body: vpaObject({ mode: 'Auto', via: 'spec' }),
    });
    for (let i = 0; i < 10; i++) await cycle();
  }, 300_000);
  afterAll(async () => {
    await env?.stop();
  });

  it('recommends per node from each node’s own usage, read through the real aggregator', () => {
    const agent = results.at(-1)?.daemonSets.find((d) => d.name === 'agent');
    expect(agent?.metrics).toBe('available');
    const target = (name: string) => agent?.recs.get(name)?.containers.collector?.target.cpu as number;
    expect(agent?.recs.get('busy')?.source).toBe('node');
    expect(target('busy')).toBeGreaterThan(3 * target('quiet'));
    expect(results.flatMap((r) => r.detail.errors)).toEqual([]);
  });

  it('resizes in place; the real kubelet actuates: spec, allocated and running resources agree', async () => {
    for (const name of ['busy', 'quiet']) {
      const pod = await on(name);
      const spec = pod?.spec?.containers[0]?.resources?.requests;
      const status = pod?.status?.containerStatuses?.[0];
      expect(status?.allocatedResources).toEqual(spec);
      expect(status?.resources?.requests).toEqual(spec);
      expect(pod?.metadata?.generation).toBeGreaterThan(1);
    }
    expect(cpuOf(await on('busy'))).toBeGreaterThan(3 * cpuOf(await on('quiet')));
    expect(reportsFor((await on('busy'))?.metadata?.name ?? '').map((x) => x.report.kind)).toContain(
      'resized',
    );
  });

  it('an upsize beyond the full node’s room is Deferred by its kubelet, then actuated once room frees', async () => {
    const full = await on('full');
    const name = full?.metadata?.name ?? '';
    const pending = full?.status?.conditions?.find((c) => c.type === 'PodResizePending');
    expect(pending).toMatchObject({ status: 'True', reason: 'Deferred' });
    expect(pending?.message).toMatch(
      /^Node didn't have enough resource: cpu, requested: \d+, used: \d+, capacity: 2000$/,
    );
    expect(full?.status?.containerStatuses?.[0]?.resources?.requests?.cpu).toBe('100m');
    const refusals = reportsFor(name).filter((x) => x.report.kind === 'refused');
    expect(refusals.map((x) => x.report.kind === 'refused' && x.report.refusal)).toContain('Deferred');
    await env.client.core.deleteNamespacedPod({ name: 'filler', namespace: NS, gracePeriodSeconds: 0 });
    const done = await k.waitForPod(
      NS,
      name,
      (p) =>
        !(p.status?.conditions ?? []).some((c) => c.type === 'PodResizePending') &&
        p.status?.containerStatuses?.[0]?.resources?.requests?.cpu ===
          p.spec?.containers[0]?.resources?.requests?.cpu,
    );
    expect(cpuOf(done)).toBeGreaterThan(100);
    await cycle();
    expect(
      reportsFor(name).some((x) => x.report.kind === 'resized' && x.report.outcome === 'Completed'),
    ).toBe(true);
  });

  it('a deleted daemon pod is recreated by the real controller at the template size, then sized again', async () => {
    const old = await on('quiet');
    await env.client.core.deleteNamespacedPod({ name: old?.metadata?.name ?? '', namespace: NS });
    const fresh = await k.waitFor('a new agent on quiet Running', async () => {
      const p = await on('quiet');
      return p && p.metadata?.uid !== old?.metadata?.uid && p.status?.phase === 'Running' ? p : undefined;
    });
    expect(cpuOf(fresh)).toBe(100);
    await cycle();
    const sized = await on('quiet');
    expect(sized?.metadata?.uid).toBe(fresh.metadata?.uid);
    expect(cpuOf(sized)).toBe(cpuOf(old));
    expect(sized?.status?.containerStatuses?.[0]?.resources?.requests).toEqual(
      sized?.spec?.containers[0]?.resources?.requests,
    );
    const events = await k.events();
    expect(events.filter((e) => e.reason === 'Preempted' || e.reason === 'Evicted')).toEqual([]);
  });
});
